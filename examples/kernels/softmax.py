"""Row softmax of an fp32 matrix: one program per row, the whole row in registers.

BLOCK (a power of two) must be >= n_cols: each algo handles rows up to its BLOCK columns, and
the caller picks the algo (softmax_get_algo_info names BLOCK). Rows may be strided.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row.to(tl.int64) * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    out = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row.to(tl.int64) * out_row_stride + cols, out, mask=mask)
