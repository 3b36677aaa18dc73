"""@triton.jit activations shared across modules."""

import triton
import triton.language as tl


@triton.jit
def leaky(x):
    return tl.where(x > 0, x, x * 0.125)
