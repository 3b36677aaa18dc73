"""C = A @ B for the tuned matmul libraries (matmul_tuned: fp16, matmul_tuned_bf16: bf16).

The output takes C's element type and the accumulator is fp32, so one kernel serves both dtypes;
every stride is an argument. Tiles are walked in groups of GROUP_M tile rows, so that the
programs running at the same time share rows of A and columns of B in L2.

Its algos are the CUDA configs of Triton's matmul tutorial (examples/kernels/BUILD.bazel); the
tuning table next to the BUILD file picks one per shape and GPU (matmul_tuned_NAME_auto).
"""
import triton
import triton.language as tl


@triton.jit
def matmul_tuned_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Which output tile: programs go down a group of GROUP_M tile rows before moving right.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group

    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # Row and column indices wrap around inside the matrix, so that loads need no M/N mask
    # (the extra rows and columns are computed and never stored).
    rm_in = rm % M
    rn_in = rn % N
    # int64: M * stride_am can pass 2**31 for the 70B shapes.
    a_tile = a_ptr + rm_in[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn_in[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        in_k = rk < K - k0
        a = tl.load(a_tile, mask=in_k[None, :], other=0.0)
        b = tl.load(b_tile, mask=in_k[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    c_tile = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
