"""out = max(x, 0) * alpha: a small elementwise kernel with a scalar argument."""

import triton
import triton.language as tl


@triton.jit
def relu_scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x, 0.0) * alpha, mask=mask)
