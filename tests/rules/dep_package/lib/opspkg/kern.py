"""A kernel file inside a dep's package: it registers an op at import, so it must be imported
once, as `opspkg.kern` (the name its package gives it)."""
import triton
import triton.language as tl

from opspkg import registry

registry.register("opspkg.scale")


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)
