"""ctypes bindings of libexample_kernels.so (examples/app:example_kernels) for the GPU tests.

The library's C API (docs/design.md), for each kernel NAME:

    CUresult NAME(CUstream, <args>, int algo_id);   CUresult NAME_default(CUstream, <args>);
    CUresult load_NAME(void);   CUresult unload_NAME(void);
    int NAME_get_num_algos(void);   const char *NAME_get_algo_info(int);

The argument types below follow the ABI table of docs/design.md exactly: CUdeviceptr is a
uint64, fp32 a C float, fp64 a double, fp16/bf16 uint16 raw bits, i1 a C bool.

The library launches into the calling thread's current CUDA context; torch's primary context
becomes current once torch has run any CUDA operation in the thread (see `cuda_ready`).
"""
from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

# CUresult values the tests expect (cuda.h).
CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_NO_BINARY_FOR_GPU = 209
CUDA_ERROR_NOT_SUPPORTED = 801

PTR = ctypes.c_uint64  # CUdeviceptr
I32 = ctypes.c_int32
I64 = ctypes.c_int64

# Non-constexpr kernel arguments after the stream, in order (examples/kernels/*.py).
ARGTYPES = {
    "add": [PTR, PTR, PTR, I32],  # x, y, out, n
    "scale": [PTR, PTR, ctypes.c_float, I32],  # x, out, alpha, n
    "softmax": [PTR, PTR, I32, I32, I32, I32],  # out, in, in_row_stride, out_row_stride, n_rows, n_cols
    "matmul": [PTR, PTR, PTR] + [I32] * 9,  # a, b, c, M, N, K, stride_am, _ak, _bk, _bn, _cm, _cn
    "big_smem": [PTR, PTR, I32, I32, I32, I32],  # in, out, M, N, stride_in, stride_out
    "scalars": [PTR, ctypes.c_bool, ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64,
                ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64,
                ctypes.c_uint16, ctypes.c_uint16, ctypes.c_float, ctypes.c_double],
    # a host tensor descriptor: base, shape0, shape1, stride0, stride1 (2-D)
    "attention_tma": [PTR, I64, I64, I64, I64] * 4 + [ctypes.c_float, I32, I32, I32],
    "matmul_tma": [PTR, I64, I64, I64, I64] * 3 + [I32, I32, I32],  # a, b, c descriptors, M, N, K
}
KERNELS = sorted(ARGTYPES)

# What examples/kernels/BUILD.bazel declares.
EXPECTED_ALGO_INFO = {
    "add": ["BLOCK=1024 num_warps=4 num_stages=1", "BLOCK=256 num_warps=2 num_stages=1"],
    "attention_tma": ["HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=False num_warps=8 num_stages=3",
                      "HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=True num_warps=8 num_stages=3"],
    "big_smem": ["BLOCK=128 num_warps=8 num_stages=1"],
    "matmul_tma": ["BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 GROUP_M=8 num_warps=8 num_stages=3",
                   "BLOCK_M=128 BLOCK_N=64 BLOCK_K=64 GROUP_M=8 num_warps=4 num_stages=4"],
    "matmul": [
        "BLOCK_M=128 BLOCK_N=128 BLOCK_K=32 GROUP_M=8 num_warps=4 num_stages=3",
        "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 GROUP_M=8 num_warps=4 num_stages=4",
        "BLOCK_M=128 BLOCK_N=64 BLOCK_K=64 GROUP_M=8 num_warps=4 num_stages=3",
        "BLOCK_M=32 BLOCK_N=32 BLOCK_K=32 GROUP_M=4 num_warps=2 num_stages=2",
    ],
    "scalars": ["num_warps=1 num_stages=1"],
    "scale": ["BLOCK=1024 num_warps=4 num_stages=1", "BLOCK=128 num_warps=1 num_stages=1"],
    "softmax": ["BLOCK=1024 num_warps=4 num_stages=1", "BLOCK=4096 num_warps=8 num_stages=1",
                "BLOCK=16384 num_warps=16 num_stages=1"],
}


def gpu_dir() -> Path:
    """The folder `tools/gpu pack examples` fills (lib/, bin/, metadata/, tests/)."""
    env = os.environ.get("RULES_TRITON_GPU_DIR")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent
    if (here.parent / "lib" / "libexample_kernels.so").exists():  # running from .gpu/examples/tests
        return here.parent
    return here.parents[1] / ".gpu" / "examples"  # running from tests/gpu in the repository


def library_path() -> Path:
    return gpu_dir() / "lib" / "libexample_kernels.so"


class Kernel:
    """One kernel's C API. Calls take the stream first and return the CUresult as an int."""

    def __init__(self, lib: ctypes.CDLL, name: str):
        self.name = name
        args = [ctypes.c_void_p] + ARGTYPES[name]  # CUstream is a pointer
        self._launch = getattr(lib, name)
        self._launch.argtypes = args + [ctypes.c_int]
        self._launch.restype = ctypes.c_int
        self._default = getattr(lib, name + "_default")
        self._default.argtypes = args
        self._default.restype = ctypes.c_int
        self._load = getattr(lib, "load_" + name)
        self._load.argtypes = []
        self._load.restype = ctypes.c_int
        self._unload = getattr(lib, "unload_" + name)
        self._unload.argtypes = []
        self._unload.restype = ctypes.c_int
        self._num_algos = getattr(lib, name + "_get_num_algos")
        self._num_algos.argtypes = []
        self._num_algos.restype = ctypes.c_int
        self._info = getattr(lib, name + "_get_algo_info")
        self._info.argtypes = [ctypes.c_int]
        self._info.restype = ctypes.c_char_p

    def __call__(self, stream, *args, algo_id: int) -> int:
        return self._launch(stream, *args, algo_id)

    def default(self, stream, *args) -> int:
        return self._default(stream, *args)

    def load(self) -> int:
        return self._load()

    def unload(self) -> int:
        return self._unload()

    @property
    def num_algos(self) -> int:
        return self._num_algos()

    def algo_info(self, algo_id: int):
        raw = self._info(algo_id)
        return None if raw is None else raw.decode()

    def algo_constexprs(self, algo_id: int) -> dict:
        """{"BLOCK": 1024, ...} parsed from the algo info string."""
        out = {}
        for item in self.algo_info(algo_id).split():
            key, _, value = item.partition("=")
            if not key.startswith("num_"):
                out[key] = int(value)
        return out


_LIB = None


def library() -> ctypes.CDLL:
    global _LIB
    if _LIB is None:
        path = library_path()
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: run tools/gpu pack examples on the build machine first")
        _LIB = ctypes.CDLL(str(path))
    return _LIB


def kernel(name: str) -> Kernel:
    return Kernel(library(), name)


def metadata(name: str) -> list:
    """The variant metadata JSONs of a library (packed by `tools/gpu pack examples`), if present."""
    folder = gpu_dir() / "metadata" / name
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


_CUDA = None


def cuda_ready():
    """Returns (torch, device) with torch's primary context current in this thread, or skips."""
    global _CUDA
    import pytest

    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed", allow_module_level=True)
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to torch", allow_module_level=True)
    if _CUDA is None:
        torch.cuda.init()
        dev = torch.device("cuda", torch.cuda.current_device())
        torch.zeros(1, device=dev)  # any CUDA op makes the primary context current
        torch.cuda.synchronize()
        _CUDA = (torch, dev)
    return _CUDA


def make_context_current(torch, dev):
    """Makes torch's primary context current in a thread that has not used CUDA yet.

    torch.cuda.set_device alone may skip cudaSetDevice when the device number already matches;
    a runtime call that needs a context (synchronize) binds the primary context to the thread.
    """
    torch.cuda.set_device(dev)
    torch.cuda.synchronize(dev)


def stream(torch):
    """The CUstream handle of torch's current stream (0 for the legacy default stream)."""
    return torch.cuda.current_stream().cuda_stream


def ptr(t) -> int:
    return t.data_ptr()


def misaligned(torch, shape, dtype, device, fill=None):
    """A tensor whose data pointer is one element past a 16-byte aligned allocation."""
    numel = 1
    for s in shape:
        numel *= s
    base = torch.empty(numel + 1, dtype=dtype, device=device)
    t = base[1:].view(*shape)
    assert t.data_ptr() % 16 != 0
    if fill is not None:
        t.copy_(fill)
    return t


if __name__ == "__main__":  # quick manual check: python3 examples_lib.py
    print(library_path())
    for n in KERNELS:
        k = kernel(n)
        print(n, k.num_algos, [k.algo_info(i) for i in range(k.num_algos)])
    sys.exit(0)
