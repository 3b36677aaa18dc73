"""Imports another module's code: source-only (`activations`), with imports (`mathx`) and
generated (`generated_shift`)."""

import triton
import triton.language as tl
from activations import leaky
from generated_shift import SHIFT
from mathx import cube


@triton.jit
def leaky_cube_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, cube(leaky(x)) - SHIFT, mask=mask)
