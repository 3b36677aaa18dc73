"""Launchers for test_capture.py and :unfused that pass compile options at launch, as SGLang's
rmsnorm passes enable_fp_fusion=False: the algo carries the ones the build can set, and the
capture refuses the others in one line naming the launch."""

import torch
import triton
import triton.language as tl


@triton.jit
def muladd_kernel(A, B, C, OUT, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    a = tl.load(A + i, mask=mask)
    b = tl.load(B + i, mask=mask)
    c = tl.load(C + i, mask=mask)
    tl.store(OUT + i, a * b + c, mask=mask)


@triton.jit(debug=True)
def checked_kernel(A, OUT, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_assert(i >= 0)
    tl.store(OUT + i, tl.load(A + i, mask=i < n), mask=i < n)


def _muladd(a, b, c, **options):
    out = torch.empty_like(a)
    n = a.shape[0]
    muladd_kernel[(triton.cdiv(n, 256),)](a, b, c, out, n, BLOCK=256, **options)
    return out


def unfused(a, b, c):
    """a * b + c rounded twice: the launch compiles the kernel without fma."""
    return _muladd(a, b, c, enable_fp_fusion=False)


def fused_pdl(a, b, c):
    """Options at their default are the algo's defaults; launch_pdl and maxnreg are not."""
    return _muladd(a, b, c, enable_fp_fusion=True, launch_pdl=True, maxnreg=128, debug=False)


def debug_launch(a, b, c):
    return _muladd(a, b, c, debug=True)


def reflect_ftz(a, b, c):
    return _muladd(a, b, c, enable_reflect_ftz=False)


def fusion_as_int(a, b, c):
    return _muladd(a, b, c, enable_fp_fusion=0)


def debug_decorated(a):
    out = torch.empty_like(a)
    n = a.shape[0]
    checked_kernel[(triton.cdiv(n, 256),)](a, out, n, BLOCK=256)
    return out
