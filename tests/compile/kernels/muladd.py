"""out = a * b + c: one fma when fp fusion is on (Triton's default), a mul and an add when a
launch passes enable_fp_fusion=False."""
import triton
import triton.language as tl


@triton.jit
def muladd_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    c = tl.load(c_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * b + c, mask=mask)
