"""out = x * alpha with an fp32 scalar `alpha`.

Upstream triton/tools/compile.py declares fp32 scalars as `double` in C and hands the kernel
8 bytes for a 4-byte parameter; rules_triton passes a C `float` (docs/design.md, "C ABI").
"""
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha, mask=mask)
