"""Launchers of ours for the capture's proof (triton_aot.capture.proof): each one is a class of
launcher whose op could differ from it at sizes the examples never showed."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_rows_kernel(X, Y, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    tl.store(Y + row * cols + i, tl.load(X + row * cols + i, mask=i < cols), mask=i < cols)


@triton.jit
def scale_kernel(X, Y, S, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * 2, mask=i < n)
    tl.store(S + i, tl.load(X + i, mask=i < n), mask=i < n)


def rows_of_a_view(x):
    """(batch, seq, dim) viewed as rows: torch's view reasoning guards seq != 1, which the
    launcher does not need (the decode step has seq = 1)."""
    dim = x.shape[-1]
    x2 = x.view(-1, dim)
    y = torch.empty_like(x2)
    copy_rows_kernel[(x2.shape[0],)](x2, y, dim, BLOCK=64)
    return y.view(x.shape)


def with_scratch(x):
    """A buffer the kernel writes but the launcher does not return (Liger's tvd keeps one)."""
    y = torch.empty_like(x)
    scratch = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 128),)](x, y, scratch, n, BLOCK=128)
    return y


def two_slices(x, z):
    """Two launches into halves of one allocation."""
    n = x.numel()
    out = torch.empty(2 * n, device=x.device, dtype=x.dtype)
    s = torch.empty_like(x)
    scale_kernel[(triton.cdiv(n, 128),)](x, out[:n], s, n, BLOCK=128)
    scale_kernel[(triton.cdiv(n, 128),)](z, out[n:], s, n, BLOCK=128)
    return out


def returns_transpose(x):
    """Returns a transpose of what the kernel wrote."""
    y = torch.empty_like(x)
    copy_rows_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=64)
    return y.t()


def dynamic_block(x):
    """A constexpr computed from a dynamic size."""
    n = x.numel()
    y = torch.empty_like(x)
    s = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    scale_kernel[(1,)](x, y, s, n, BLOCK=block)
    return y, s


def int_argument(x, shift):
    """An int argument of the launcher that reaches the kernel: an argument of the op."""
    y = torch.empty_like(x)
    copy_rows_kernel[(x.shape[0],)](x, y, shift, BLOCK=64)
    return y


def int_by_coincidence(x, k):
    """A kernel constant (64) that equals an int argument's example value by chance: the op
    must not take it from the argument."""
    y = torch.empty_like(x)
    if k > 1000:
        raise ValueError("k too large")
    copy_rows_kernel[(x.shape[0],)](x, y, 64, BLOCK=64)
    return y
