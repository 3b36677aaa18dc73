"""out = in^T for an fp32 M x N matrix, one BLOCK x BLOCK tile per program.

The whole tile is transposed through shared memory in one piece: with BLOCK = 128 that is a
64 KiB fp32 tile, more than the 48 KiB a kernel gets without opting in, so the runtime must
raise the dynamic shared memory limit (cuFuncSetAttribute) before the first launch. This
library exists to exercise that path.
"""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(in_ptr, out_ptr, M, N, stride_in, stride_out, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK + tl.arange(0, BLOCK)
    cols = pid_n * BLOCK + tl.arange(0, BLOCK)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(in_ptr + rows[:, None].to(tl.int64) * stride_in + cols[None, :], mask=mask)
    out_mask = (cols[:, None] < N) & (rows[None, :] < M)
    tl.store(out_ptr + cols[:, None].to(tl.int64) * stride_out + rows[None, :], tl.trans(tile), mask=out_mask)
