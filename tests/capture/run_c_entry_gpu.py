#!/usr/bin/env python3
"""The launchers' C entries on a GPU (`tools/gpu pack c_entry`, then `tools/gpu run c_entry`):
each C entry of //tests/capture (libcaptured_c_entries.so, called through ctypes with the
DLTensors torch itself exports, `torch.utils.dlpack.to_dlpack`) against the torch op captured
from the same record and against the launcher on Triton's JIT, on the same inputs, at the example
sizes and at two sizes no example used: every output must be bit-identical to both. Also: the
size table's refusal, a CPU tensor refused, and the workspace the entry asks for.

Needs the `captured` suite's folder (the torch ops, our launchers, Liger's package).
Prints one PASS/FAIL line per check and writes c_entry.json into $OUT (or this folder).
"""

import ctypes
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CAPTURED = Path(os.environ.get("CAPTURED_DIR") or HERE.parent / "captured")
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="c_entry_triton_cache_")
sys.path[:0] = [str(CAPTURED), str(CAPTURED / "site"), str(CAPTURED / "launchers")]

import torch  # noqa: E402
from torch.utils.dlpack import to_dlpack  # noqa: E402

from gpu_checks import RESULTS, check, finish, same  # noqa: E402
CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE = 0, 1


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_KEEP = []  # the capsules outlive the calls


_VERSIONED_HEADER = 32  # DLManagedTensorVersioned: version, manager_ctx, deleter, flags


def dl(t: torch.Tensor) -> ctypes.c_void_p:
    """The DLTensor torch exports for `t`: the first member of its DLManagedTensor (the
    "dltensor" capsule), or the one after the header of a DLManagedTensorVersioned."""
    capsule = to_dlpack(t)
    _KEEP.append(capsule)
    try:
        return ctypes.c_void_p(_get_pointer(capsule, b"dltensor"))
    except ValueError:
        return ctypes.c_void_p(_get_pointer(capsule, b"dltensor_versioned") + _VERSIONED_HEADER)


class Entries:
    def __init__(self, path: Path) -> None:
        self.lib = ctypes.CDLL(str(path))
        for name in ("liger_rms_norm_c", "liger_swiglu_c", "liger_rope_c", "decode_attention_c",
                     "rms_scale_c", "decode_attention_c_workspace_size", "accumulate_c",
                     "accumulate_twice_c", "accumulate_twice_c_workspace_size"):
            getattr(self.lib, name).restype = ctypes.c_int

    def stream(self):
        return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def rms_norm(self, x, w, y, rstd):
        return self.lib.liger_rms_norm_c(self.stream(), dl(x), dl(w), ctypes.c_float(1e-6),
                                         ctypes.c_float(0.0), dl(y), dl(rstd), None, ctypes.c_size_t(0))

    def swiglu(self, a, b, c):
        return self.lib.liger_swiglu_c(self.stream(), dl(a), dl(b), ctypes.c_float(1.0), dl(c),
                                       None, ctypes.c_size_t(0))

    def rope(self, q, k, cos, sin):
        return self.lib.liger_rope_c(self.stream(), dl(q), dl(k), dl(cos), dl(sin), None,
                                     ctypes.c_size_t(0))

    def rms_scale(self, x, w, y):
        return self.lib.rms_scale_c(self.stream(), dl(x), dl(w), ctypes.c_float(1e-6), dl(y), None,
                                    ctypes.c_size_t(0))

    def accumulate(self, x, acc):
        return self.lib.accumulate_c(self.stream(), dl(x), dl(acc), None, ctypes.c_size_t(0))

    def accumulate_twice(self, x, acc):
        """With a workspace poisoned with NaN: the entry must fill its intermediate itself."""
        size = ctypes.c_size_t(0)
        r = self.lib.accumulate_twice_c_workspace_size(dl(x), ctypes.byref(size))
        if r != CUDA_SUCCESS:
            return r
        ws = torch.full((max(size.value // 4, 1),), float("nan"), device=x.device)
        return self.lib.accumulate_twice_c(self.stream(), dl(x), dl(acc),
                                           ctypes.c_void_p(ws.data_ptr() if size.value else 0),
                                           ctypes.c_size_t(size.value))

    def decode_attention(self, q, kc, vc, out):
        size = ctypes.c_size_t(0)
        r = self.lib.decode_attention_c_workspace_size(dl(q), dl(kc), dl(vc), ctypes.byref(size))
        if r != CUDA_SUCCESS:
            return r, 0
        ws = torch.empty(size.value, dtype=torch.uint8, device=q.device)
        return self.lib.decode_attention_c(self.stream(), dl(q), dl(kc), dl(vc), ctypes.c_float(0.088),
                                           dl(out), ctypes.c_void_p(ws.data_ptr()),
                                           ctypes.c_size_t(size.value)), size.value


def main() -> int:
    if not torch.cuda.is_available():
        print("no GPU: skipped")
        return 77
    import liger_ops  # noqa: F401  (registers torch.ops.liger_captured)
    import serving_ops  # noqa: F401  (registers torch.ops.serving_captured)
    import torch_work_ops  # noqa: F401  (registers torch.ops.torch_work_captured)
    liger, serving = torch.ops.liger_captured, torch.ops.serving_captured
    work = torch.ops.torch_work_captured
    c = Entries(HERE / "libcaptured_c_entries.so")
    bf, f32, dev = torch.bfloat16, torch.float32, "cuda"
    torch.manual_seed(0)
    torch.empty(1, device=dev)  # the primary context, current on this thread for the entries

    cases = {}
    for rows in (2048, 1, 77):  # the example's rows, then two it never used
        x, w = torch.randn(rows, 4096, device=dev), torch.randn(4096, device=dev)
        y, rstd = torch.empty_like(x), torch.empty(rows, device=dev)
        r = c.rms_norm(x, w, y, rstd)
        cases[f"rms_norm rows={rows}"] = (r, (x, w), (y, rstd), liger.rms_norm(x, w, 1e-6, 0.0))
    for rows in (2048, 3, 333):
        a, b = (torch.randn(rows, 4096, device=dev, dtype=bf) for _ in range(2))
        out = torch.empty_like(a)
        r = c.swiglu(a, b, out)
        cases[f"swiglu rows={rows}"] = (r, (a, b), (out,), (liger.swiglu(a, b, 1.0),))
    for seq in (512, 77, 1000):
        q = torch.randn(2, seq, 32, 128, device=dev, dtype=bf).transpose(1, 2)
        k = torch.randn(2, seq, 8, 128, device=dev, dtype=bf).transpose(1, 2)
        cos, sin = (torch.randn(1, seq, 128, device=dev, dtype=bf) for _ in range(2))
        before = [t.clone() for t in (q, k, cos, sin)]
        tq, tk = q.clone(), k.clone()
        r = c.rope(q, k, cos, sin)
        liger.rope(tq, tk, cos, sin)
        cases[f"rope seq={seq}"] = (r, before, (q, k), (tq, tk))
    for rows, cols in ((64, 1024), (300, 4096), (3000, 4096)):
        x, w = torch.randn(rows, cols, device=dev, dtype=bf), torch.randn(cols, device=dev, dtype=bf)
        y = torch.empty_like(x)
        r = c.rms_scale(x, w, y)
        cases[f"rms_scale {rows}x{cols}"] = (r, (x, w), (y,), (serving.rms_scale(x, w, 1e-6),))
    for batch, seq in ((4, 4096), (1, 1000), (3, 77)):
        q = torch.randn(batch, 32, 128, device=dev, dtype=bf)
        kc, vc = (torch.randn(batch, seq, 32, 128, device=dev, dtype=bf) for _ in range(2))
        out = torch.empty_like(q)
        r, ws = c.decode_attention(q, kc, vc, out)
        check(f"decode_attention batch={batch} seq={seq}: workspace", ws == batch * 32 * 8 * 129 * 4,
              f"{ws} bytes")
        cases[f"decode_attention batch={batch} seq={seq}"] = (
            r, (q, kc, vc), (out,), (serving.decode_attention(q, kc, vc, 0.088),))

    # Outputs the launcher makes with torch.zeros / torch.full: the entry's memsets, checked on
    # outputs and a workspace poisoned with NaN, at the example size, 1, an odd size and 0.
    from tests.capture.torch_work_launchers import accumulate_into_zeros
    for n in (4096, 1, 77, 0):
        x = torch.randn(n, device=dev)
        acc = torch.full_like(x, float("nan"))
        r = c.accumulate(x, acc)
        cases[f"accumulate (torch.zeros) n={n}"] = (r, (x,), (acc,), (work.accumulate(x),))
        acc2 = torch.full_like(x, float("nan"))
        r = c.accumulate_twice(x, acc2)
        # a hand-written record, no torch op: torch's x + 1.5 is the kernel's one fp32 add
        cases[f"accumulate_twice (torch.full 1.5, then 0.0) n={n}"] = (
            r, (x,), (acc2,), (x + 1.5,))

    # Refusals on real tensors: nothing launched, CUDA_ERROR_INVALID_VALUE.
    x, w = torch.ones(8, 16384, device=dev, dtype=bf), torch.ones(16384, device=dev, dtype=bf)
    y = torch.full_like(x, 7)
    r = c.rms_scale(x, w, y)
    torch.cuda.synchronize()
    check("rms_scale_c refuses 16384 columns (no example call covers them), writes nothing",
          r == CUDA_ERROR_INVALID_VALUE and bool((y == 7).all()), f"returned {r}")
    xs = torch.randn(4, 4096)
    r = c.rms_norm(xs, torch.randn(4096), torch.empty(4, 4096), torch.empty(4))
    check("liger_rms_norm_c refuses CPU tensors", r == CUDA_ERROR_INVALID_VALUE, f"returned {r}")
    torch.cuda.synchronize()
    for name, (r, *_rest) in cases.items():
        check(f"{name}: the C entry returned CUDA_SUCCESS", r == CUDA_SUCCESS, f"returned {r}")

    # The same launchers through Triton's JIT.
    from liger_kernel.ops.rms_norm import rms_norm_forward
    from liger_kernel.ops.rope import rope_forward
    from liger_kernel.ops.swiglu import swiglu_forward
    import serving_kernels
    for name, (r, inputs, got, op) in cases.items():
        if name.startswith("accumulate_twice"):
            jit = op  # a hand-written record: x + 1.5, one fp32 add as in the kernel
        elif name.startswith("accumulate"):
            jit = (accumulate_into_zeros(*inputs),)
        elif name.startswith("rms_norm"):
            jy, _, jrstd, *_ = rms_norm_forward(*inputs, 1e-6, 0.0, "llama", False)
            jit = (jy, jrstd)
        elif name.startswith("swiglu"):
            jit = (swiglu_forward(*inputs)[2],)
        elif name.startswith("rope"):
            jit = tuple(rope_forward(*inputs)[:2])
        elif name.startswith("rms_scale"):
            jit = (serving_kernels.rms_scale(*inputs, 1e-6),)
        else:
            jit = (serving_kernels.decode_attention(*inputs, 0.088),)
        for what, other in (("the torch op", op), ("the launcher on the JIT", jit)):
            results = [same(a, b) for a, b in zip(got, other)]
            check(f"{name}: bit-identical to {what}", all(ok for ok, _ in results),
                  "; ".join(d for _, d in results))
    return finish("c_entry.json", HERE)


if __name__ == "__main__":
    sys.exit(main())
