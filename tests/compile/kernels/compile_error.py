"""Kernels that import fine but do not compile."""
import triton
import triton.language as tl


@triton.jit
def not_pow2_kernel(x_ptr, n):
    offs = tl.arange(0, 100)
    tl.store(x_ptr + offs, offs)


@triton.jit
def _broken_helper(x):
    return x + undefined_name  # noqa: F821


@triton.jit
def nested_error_kernel(x_ptr, n):
    tl.store(x_ptr, _broken_helper(n))


def not_a_kernel():
    pass
