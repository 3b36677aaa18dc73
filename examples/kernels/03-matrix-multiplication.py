"""
Autotuned matrix multiplication, and a bias + activation kernel with heuristics
===============================================================================

A kernel file written the way Triton's tutorials and kernel libraries write them (a file name
that is not a module name, torch imported, the target asked from the active driver at import),
compiled ahead of time with no edit:

* ``matmul_kernel`` is ``@triton.autotune``'d over a config list that is *built by code*
  (``get_autotune_configs``) and pruned by an ``early_config_prune`` that only looks at the
  configs themselves (so it can run at build time, before any matrix exists). Each surviving
  config becomes one algo of the C library: BUILD loads them from the generated
  ``matmul_tutorial_algos.bzl`` instead of restating them.
* ``ACTIVATION`` is a string ``tl.constexpr`` with a default, so a library may leave it out of
  its signature (the default applies) or fix it (``'leaky_relu'``).
* ``bias_act_kernel`` takes an optional ``bias_ptr`` (``None`` by default) and derives two of its
  meta-parameters with ``@triton.heuristics``: whether there is a bias at all, and how many
  warps a block needs. Both are decided at build time for every variant.

C = activation(A @ B), fp16 inputs with fp32 accumulation; out = activation(x + bias).
"""

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


# %%
# Autotuning configs
# ------------------
# Every combination of a few tile shapes with two pipelining depths, as a tutorial would list
# them by hand. ``GROUP_SIZE_M`` groups programs for L2 reuse. As in Triton's tutorial, the list
# depends on the target the active driver reports (at build time: the target being compiled).


def get_autotune_configs():
    if not is_cuda():
        return get_hip_autotune_configs()
    configs = []
    for block_m, block_n in ((128, 128), (128, 64), (64, 128), (64, 64)):
        for block_k, num_stages in ((32, 4), (64, 3)):
            num_warps = 8 if block_m * block_n >= 128 * 128 else 4
            configs.append(
                triton.Config(
                    {"BLOCK_SIZE_M": block_m, "BLOCK_SIZE_N": block_n, "BLOCK_SIZE_K": block_k,
                     "GROUP_SIZE_M": 8},
                    num_stages=num_stages, num_warps=num_warps))
    return configs


def get_hip_autotune_configs():
    return [
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32,
                       "GROUP_SIZE_M": 8}, num_stages=2, num_warps=8),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32,
                       "GROUP_SIZE_M": 8}, num_stages=2, num_warps=4),
    ]


# A pipelined tile keeps `num_stages` copies of its A and B blocks in shared memory. Configs that
# would take more than 64 KiB of it are dropped (a budget that leaves room on every GPU); this needs
# no argument of the call, so it also runs when the configs become the library's algos.
SHARED_MEMORY_BUDGET = 64 * 1024


def prune_by_shared_memory(configs, named_args, **kwargs):
    kept = []
    for config in configs:
        meta = config.kwargs
        tile_bytes = 2 * (meta["BLOCK_SIZE_M"] + meta["BLOCK_SIZE_N"]) * meta["BLOCK_SIZE_K"]
        if tile_bytes * config.num_stages <= SHARED_MEMORY_BUDGET:
            kept.append(config)
    return kept


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


# %%
# The matmul kernel
# -----------------
# Programs walk the output in groups of GROUP_SIZE_M rows of tiles; each accumulates a
# BLOCK_SIZE_M x BLOCK_SIZE_N tile of C over K in fp32.


@triton.autotune(
    configs=get_autotune_configs(),
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": prune_by_shared_memory},
)
@triton.jit
def matmul_kernel(
        a_ptr, b_ptr, c_ptr,
        M, N, K,
        stride_am, stride_ak,
        stride_bk, stride_bn,
        stride_cm, stride_cn,
        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
        GROUP_SIZE_M: tl.constexpr,
        ACTIVATION: tl.constexpr = "",
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pids_per_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // pids_per_group) * GROUP_SIZE_M
    rows_in_group = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % pids_per_group) % rows_in_group)
    pid_n = (pid % pids_per_group) // rows_in_group

    rm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rk = tl.arange(0, BLOCK_SIZE_K)
    a_tile = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k_mask = rk < K - k0
        a = tl.load(a_tile, mask=(rm[:, None] < M) & k_mask[None, :], other=0.0)
        b = tl.load(b_tile, mask=k_mask[:, None] & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_SIZE_K * stride_ak
        b_tile += BLOCK_SIZE_K * stride_bk

    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    c = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :].to(tl.int64) * stride_cn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# %%
# Bias and activation, with heuristics
# ------------------------------------
# ``HAS_BIAS`` follows from whether ``bias_ptr`` is None (the JIT specialises a None argument as
# a constant, and so does the AOT build: a library compiled with ``None`` has no bias argument),
# and ``num_warps`` from the block size.


@triton.heuristics({
    "HAS_BIAS": lambda args: args["bias_ptr"] is not None,
    "num_warps": lambda args: min(max(args["BLOCK"] // 256, 1), 8),
})
@triton.jit
def bias_act_kernel(x_ptr, bias_ptr, out_ptr, n, BLOCK: tl.constexpr,
                    HAS_BIAS: tl.constexpr = False, ACTIVATION: tl.constexpr = ""):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask)
    if HAS_BIAS:
        y += tl.load(bias_ptr + offs, mask=mask)
    if ACTIVATION == "leaky_relu":
        y = leaky_relu(y)
    tl.store(out_ptr + offs, y, mask=mask)
