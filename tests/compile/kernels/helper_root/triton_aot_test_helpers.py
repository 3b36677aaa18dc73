"""A helper module living in its own import root."""
import triton
import triton.language as tl

FACTOR = tl.constexpr(2)


@triton.jit
def twice(x):
    return x * FACTOR
