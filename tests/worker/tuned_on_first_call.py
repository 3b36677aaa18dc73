"""A launcher that keeps state between calls in its module, as launchers that tune on their
first call and cache the result do: its first call in a process launches with BLOCK=128, every
later one with 256. A capture must see what a fresh process sees, whatever ran before it."""

import torch
import triton
import triton.language as tl

_calls = 0


@triton.jit
def double_kernel(X, Y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(Y + offsets, tl.load(X + offsets, mask=mask) * 2, mask=mask)


def double(x):
    global _calls
    # counts the example calls a capture makes (sizes symbolic), not the capture's own checks
    # of the op at static sizes, which must see the same choice as the example
    if isinstance(x.shape[0], torch.SymInt):
        _calls += 1
    block = 128 if _calls <= 1 else 256
    y = torch.empty_like(x)
    n = x.numel()
    double_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    return y
