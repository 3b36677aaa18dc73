"""Day-one check: Triton compiles a kernel for cuda:90 inside the Bazel sandbox, with no GPU.

Only Triton's compiler runs here; triton.runtime.driver is never touched (there is no driver on
build machines), which the test enforces by making any driver access fail.
"""
import os

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def test_compiles_cuda90_without_gpu(monkeypatch):
    class NoDriver:
        def __getattr__(self, name):
            raise AssertionError(f"triton.runtime.driver.{name} touched at build time")

    monkeypatch.setattr(triton.runtime, "driver", NoDriver())
    src = ASTSource(
        fn=add_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024},
    )
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    cubin = compiled.asm["cubin"]
    assert isinstance(cubin, bytes)
    assert len(cubin) > 1000
    assert cubin[:4] == b"\x7fELF"  # a cubin is an ELF image
    assert ".target sm_90" in compiled.asm["ptx"]


def test_no_gpu_visible():
    # The sandbox must not depend on a driver: there is none on build machines.
    assert not os.path.exists("/dev/nvidiactl") or os.environ.get("RULES_TRITON_ALLOW_GPU")
