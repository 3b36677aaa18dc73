"""out = x converted to OUT_DTYPE (a dtype constexpr), with a 2-D grid over rows/columns."""
import triton
import triton.language as tl


@triton.jit
def cast_kernel(x_ptr, out_ptr, M, N, stride, BLOCK: tl.constexpr, OUT_DTYPE: tl.constexpr,
                SCALE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (row < M) & (cols < N)
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, (x * SCALE).to(OUT_DTYPE), mask=mask)
