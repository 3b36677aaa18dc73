"""Kernels that compile with the right inputs; the bad-input catalogue feeds them wrong ones.

Line numbers matter: tests/reliability/catalogue.py expects errors at `kernels.py:LINE`.
"""
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # line 11: BLOCK is a block size
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@triton.jit
def wide_kernel(x_ptr, n: tl.int64):
    tl.store(x_ptr, n)


@triton.jit
def reserved_kernel(x_ptr, trt_n):
    tl.store(x_ptr, trt_n)


@triton.jit
def calls_missing(x_ptr, n):
    tl.store(x_ptr, helper_that_does_not_exist(n))  # noqa: F821  (line 35)


def plain_function(x):
    return x


@triton.jit
def desc_copy_kernel(in_desc, out_desc):
    out_desc.store([tl.program_id(0) * 64], in_desc.load([tl.program_id(0) * 64]))


@triton.jit
def desc_clash_kernel(x, x_base):
    tl.store(x_base, x.load([0]))
