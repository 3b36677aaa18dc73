"""out = x * SCALE, where SCALE is 2.0 unless an optional module provides another value.

The library that compiles this file declares no dep that provides `undeclared_scale`; the file
of that name next to it (SCALE = 5.0) lies in the source tree but is in no target's srcs. A
compile must see only what the target declares, so SCALE is 2.0 with the persistent worker as
in a sandboxed one-shot action."""

import triton
import triton.language as tl

try:
    from undeclared_scale import SCALE
except ImportError:
    SCALE = 2.0

_SCALE = tl.constexpr(SCALE)


@triton.jit
def scale_optional_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * _SCALE, mask=mask)
