"""Small @triton.jit math helpers."""

import triton


@triton.jit
def cube(x):
    return x * x * x
