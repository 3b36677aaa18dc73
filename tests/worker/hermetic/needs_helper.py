"""A kernel file that imports a module no dep of its library provides: the build must refuse it,
naming the missing deps, with the persistent worker as in a sandboxed one-shot action, even
though a file `undeclared_helper.py` lies next to it in the source tree."""

import triton
import triton.language as tl

from undeclared_helper import OFFSET


@triton.jit
def add_offset_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + OFFSET, mask=mask)
