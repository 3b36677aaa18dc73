"""Its @triton.autotune configs come from the repository's `tiles` module."""

import triton
import triton.language as tl
from tiles.blocks import autotune_configs, scaled


@triton.autotune(configs=autotune_configs(), key=["n"])
@triton.jit
def autotuned_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, scaled(tl.load(x_ptr + offs, mask=mask)), mask=mask)
