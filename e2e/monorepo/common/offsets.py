"""An offset the kernels add, as a constexpr."""

import triton.language as tl

OFFSET = tl.constexpr(0.5)
