"""Row sums with `range(n)` and `range(a, b)` loops: the code generator fills in the implicit
start and step (triton 3.5 builds them with ast.Num, which Python 3.14 removed)."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    total = tl.sum(acc, axis=0)
    for i in range(2):
        total = total + 0.0 * i
    for j in range(1, n_cols):
        total = total + 0.0 * j
    tl.store(out_ptr + row, total)
