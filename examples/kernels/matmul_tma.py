"""C = A @ B with TMA: fp16 A (M, K) and B (K, N), fp32 accumulation, fp16 C (M, N), every
operand read and written through a host tensor descriptor.

The descriptors carry the shapes and strides, so the kernel computes no addresses and needs no
masks: TMA fills the out-of-bounds part of a tile with zeros on load and drops it on store, so M,
N and K may be anything (the rows, i.e. strides, must be 16-byte aligned, which TMA requires and
the launcher checks). Programs are ordered in groups of GROUP_M rows of tiles for L2 reuse, as in
the Triton matmul tutorial. Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_tma_kernel(
    a_desc, b_desc, c_desc,
    M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_pid_n)
    first_m = group * GROUP_M
    rows_in_group = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % rows_in_group)
    pid_n = (pid % (GROUP_M * num_pid_n)) // rows_in_group

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))
