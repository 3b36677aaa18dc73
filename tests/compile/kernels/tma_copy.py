"""Host tensor descriptors: a 2-D fp16 tile copy (in_desc -> out_desc) and a 1-D fp32 one whose
block (512) is wider than a TMA box (256)."""
import triton
import triton.language as tl


@triton.jit
def tma_copy_kernel(in_desc, out_desc, n, BM: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0) * BM
    out_desc.store([row, 0], in_desc.load([row, 0]))


@triton.jit
def tma_wide_kernel(x_desc, n):
    x_desc.store([0], x_desc.load([0]) * 2.0)
