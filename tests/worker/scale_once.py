"""out = x * once_dep.FACTOR, with the factor from a dep whose import runs once per process."""

import triton
import triton.language as tl

from once_dep import FACTOR

_FACTOR = tl.constexpr(FACTOR)


@triton.jit
def scale_once_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * _FACTOR, mask=mask)
