"""Launchers for test_capture.py: each exercises one rule of Triton's JIT specialization."""

import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["skip"])
def probe_kernel(A, B, n, one, odd, skip, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(B + i, tl.load(A + i, mask=i < n + one + odd + skip), mask=i < n)


def probe(a):
    """a[2:] (8 bytes into fp32 storage: no :16), 1 (:1), 17 (none), a do_not_specialize 32."""
    b = torch.empty_like(a)
    n = a.shape[0]
    probe_kernel[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](
        a[2:], b, n, 1, 17, 32, BLOCK=128)
    return b
