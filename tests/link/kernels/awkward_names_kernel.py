"""A kernel whose parameter names C cannot use as they are (flash-attention's rotary kernel has
`CU_SEQLENS`): a cuda.h prefix, C keywords, the generated code's trt_ prefix, a reserved `_X`
name. The generated C renames them (abi.c_param_name); the kernel stays as it is."""

import triton
import triton.language as tl


@triton.jit
def awkward_names_kernel(X, CU_SEQLENS, int, trt_n, _Scale, default, BLOCK: tl.constexpr):
    seq = tl.program_id(0)
    start = tl.load(CU_SEQLENS + seq)
    offs = start + tl.arange(0, BLOCK)
    mask = offs < trt_n
    scale = tl.where(default, _Scale, 1.0)
    tl.store(X + offs, tl.load(X + offs, mask=mask) * scale, mask=mask)
