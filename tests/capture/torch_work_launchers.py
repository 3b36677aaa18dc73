"""Launchers of ours that do torch work besides their launches, one per pattern kernel packages
use: the capture builds an op (a composite) that computes what the launcher returns, or refuses
in one line naming the launcher's file:line and the torch call (the catalogue's capture_* cases).
"""

import torch
import triton
import triton.language as tl

from tests.capture.dep.kernels import twice_kernel


@triton.jit
def scale_kernel(X, Y, n, factor, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * factor, mask=i < n)


@triton.jit
def add_one_kernel(X, ONE, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) + tl.load(ONE), mask=i < n)


def _launch(x, y, factor=2.0):
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, y, n, factor, BLOCK=256)


def sort_first(x):
    xs, _ = torch.sort(x, dim=-1)
    y = torch.empty_like(x)
    _launch(xs, y)
    return y


def clone_first(x):
    x = x.clone()
    y = torch.empty_like(x)
    _launch(x, y)
    return y


def reduce_after(x):
    y = torch.empty_like(x)
    _launch(x, y)
    return y.sum() / x.shape[0]


def in_place(x, out):
    """Writes 2 * x into `out` and returns None."""
    _launch(x, out)


def scalar_constant(x):
    one = torch.tensor(1.0, device=x.device)
    y = torch.empty_like(x)
    add_one_kernel[(triton.cdiv(x.numel(), 256),)](x, one, y, x.numel(), BLOCK=256)
    return y * (one + torch.tensor([0.5], device=x.device))  # `one` in torch math too


def through_torch_only(x, bias):
    y = torch.empty_like(x)
    _launch(x, y)
    return y + bias, torch.zeros(x.shape[0], 2, dtype=torch.int32, device=x.device)  # untouched


def static_by_arithmetic(x):
    n = x.shape[0]
    y = torch.empty_like(x)
    _launch(x, y, factor=float(n) ** -0.5)  # a float of the size: n is fixed to the example's
    return y


def torch_between(x):
    y = torch.empty_like(x)
    _launch(x, y)
    z = y * 3
    w = torch.empty_like(x)
    _launch(z, w)
    return w


def dep_kernel(x):
    """A kernel file of a py_library dep (tests/capture/dep), not of this target's srcs."""
    y = torch.empty_like(x)
    twice_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


@triton.jit
def bias_kernel(X, Y, n, BIAS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < n)
    if BIAS is not None:
        x += BIAS
    tl.store(Y + i, x, mask=i < n)


def cuda_checked(x):
    """Checks its input is on the GPU, as a kernel package's wrapper does, and launches with a
    constexpr None (no bias)."""
    assert x.is_cuda and x.device.type == "cuda", "a CUDA tensor"
    assert torch.cuda.current_device() == x.device.index
    y = torch.empty(x.shape, dtype=x.dtype, device="cuda")
    bias_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BIAS=None, BLOCK=256)
    return y


def address_passed(x):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x.data_ptr(), y, x.numel(), 2.0, BLOCK=256)
    return y


@triton.jit
def accumulate_kernel(X, ACC, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ACC + i, tl.load(ACC + i, mask=i < n) + tl.load(X + i, mask=i < n), mask=i < n)


def accumulate_into_zeros(x):
    """Accumulates into a torch.zeros output (as atomics-based kernels do): the op fills it."""
    acc = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    accumulate_kernel[(triton.cdiv(x.numel(), 256),)](x, acc, x.numel(), BLOCK=256)
    return acc


def torch_writes_input(x):
    """Scales its input in place with torch, then launches on it."""
    x.mul_(0.5)
    y = torch.empty_like(x)
    _launch(x, y)
    return y


def random_noise(x):
    y = torch.empty_like(x)
    _launch(x + torch.randn_like(x), y)
    return y


def host_copy(x):
    y = torch.empty_like(x)
    _launch(x, y)
    return y.cpu()


def data_dependent(x):
    y = torch.empty_like(x)
    _launch(x, y)
    return y[y > 0]


def scaled_sum(x, factor):
    """A float argument reaches the kernel and torch."""
    y = torch.empty_like(x)
    _launch(x, y, factor)
    return y.sum() * factor
