"""Imports a module that reads its data file at import (config/block_config.json)."""

import triton
import triton.language as tl
from config.block_config import SCALE as _SCALE

SCALE = tl.constexpr(_SCALE)


@triton.jit
def configured_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)
