"""RMSNorm of the rows of an fp16/bf16 matrix with a weight: y = x / sqrt(mean(x^2) + eps) * w.

One program per row; the row is read in BLOCK-column chunks (twice: once for the sum of
squares, once to scale), so every algo handles any n_cols and the algos differ only in how
fast they are: BLOCK, num_warps. A tuned row-wise kernel: `rmsnorm_tuned_auto` picks the algo
by (n_rows, n_cols) and the call's hints (examples/kernels/rmsnorm_tuning.py).
"""
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(y_ptr, x_ptr, w_ptr, x_row_stride, y_row_stride, n_rows, n_cols, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
