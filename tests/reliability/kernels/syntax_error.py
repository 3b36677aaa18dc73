"""A kernel file with a Python syntax error."""
import triton
import triton.language as tl


@triton.jit
def broken_kernel(x_ptr, n)
    tl.store(x_ptr, n)
