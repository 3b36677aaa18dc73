"""Launchers a build cannot capture (the catalogue's capture cases): each fails with one line
naming its file:line. `good` is the one that captures."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(X, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * 2, mask=i < n)


def good(x):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


def host_sync(x):
    y = torch.empty_like(x)
    n = int(x.sum().item())
    scale_kernel[(n,)](x, y, x.numel(), BLOCK=256)
    return y


def value_branch(x):
    y = torch.empty_like(x)
    block = 128 if (x > 0).all() else 256
    scale_kernel[(1,)](x, y, x.numel(), BLOCK=block)
    return y


def device_query(x):
    y = torch.empty_like(x)
    sms = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]
    scale_kernel[(sms,)](x, y, x.numel(), BLOCK=256)
    return y


_SCRATCH = torch.empty(1024)


def global_tensor(x):
    scale_kernel[(4,)](x, _SCRATCH, x.numel(), BLOCK=256)
    return _SCRATCH


def dynamic_constexpr(x):
    y = torch.empty_like(x)
    scale_kernel[(1,)](x, y, x.numel(), BLOCK=x.shape[0])
    return y


def synchronizes(x):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    torch.cuda.synchronize()
    return y
