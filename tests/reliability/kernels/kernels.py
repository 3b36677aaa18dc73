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
def non_ascii_kernel(x_ptr, nä):
    tl.store(x_ptr, nä)


@triton.jit
def calls_missing(x_ptr, n):
    tl.store(x_ptr, helper_that_does_not_exist(n))  # noqa: F821  (line 35)


def plain_function(x):
    return x


# --- @triton.heuristics, defaults and None; appended so the lines above stay put


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def even_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = None if EVEN else offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.heuristics({"n": lambda args: 64})
@triton.jit
def sets_argument_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def defaults_kernel(x_ptr, out_ptr, n, eps=1e-6, bias_ptr=None, BLOCK: tl.constexpr = 64,
                    TABLE: tl.constexpr = (1, 2)):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + eps, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128)
                          for w in (2, 4)], key=["n"])
@triton.jit
def tuned_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def desc_copy_kernel(in_desc, out_desc):
    out_desc.store([tl.program_id(0) * 64], in_desc.load([tl.program_id(0) * 64]))


@triton.jit
def desc_clash_kernel(x, x_base):
    tl.store(x_base, x.load([0]))
