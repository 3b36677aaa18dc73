import triton
import triton.language as tl

OFFSET = tl.constexpr(3)


@triton.jit
def plus_offset(x):
    return x + OFFSET
