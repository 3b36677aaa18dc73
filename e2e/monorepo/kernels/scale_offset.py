"""Imports the main repository's code: `tiles` (a py_library with imports) and `common.offsets`
(one without)."""

import triton
import triton.language as tl
from common.offsets import OFFSET
from tiles.blocks import scaled


@triton.jit
def scale_offset_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, scaled(x) + OFFSET, mask=mask)
