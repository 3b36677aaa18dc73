"""A split-K style accumulation for the reset_to_zero tests: every program of grid axis 1 adds
its slice of K into the output with tl.atomic_add, so the output must be zero before the launch
(what Triton's split-K configs do with pre_hook=init_to_zero("C")).

c[m, n] += sum_k a[m, k] over this program's K slice (the same for every n: the test is about the
launch, not the arithmetic), and s[m] += the same sum (a 1-D region)."""

import triton
import triton.language as tl


@triton.jit
def splitk_kernel(a_ptr, c_ptr, s_ptr, M, N, K, stride_am, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        offs_k = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :],
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        acc += tl.sum(a, axis=1)
    out = acc[:, None] + tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    tl.atomic_add(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], out,
                  mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    tl.atomic_add(s_ptr + offs_m, acc, mask=(offs_m < M) & (pid_n == 0))
