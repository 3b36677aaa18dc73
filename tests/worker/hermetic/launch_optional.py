"""A launcher whose BLOCK is 128 unless an optional module provides another one. No dep of its
capture provides `undeclared_block`; the file of that name next to it (BLOCK = 256) is in no
target's srcs, so a capture launches with BLOCK=128 through the worker as one-shot."""

import torch
import triton
import triton.language as tl

try:
    from undeclared_block import BLOCK
except ImportError:
    BLOCK = 128


@triton.jit
def triple_kernel(X, Y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(Y + offsets, tl.load(X + offsets, mask=mask) * 3, mask=mask)


def triple(x):
    y = torch.empty_like(x)
    n = x.numel()
    triple_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y
