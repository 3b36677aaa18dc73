"""Names shared by the BUILD files of the examples."""

load("@rules_triton//rules:defs.bzl", "triton_algo")

# Every example triton_kernel_library in //kernels (the C API prefix equals the target name).
KERNELS = [
    "add",
    "attention_tma",
    "big_smem",
    "matmul",
    "matmul_tma",
    "scalars",
    "scale",
    "softmax",
]

# Tag of the targets whose kernel files import torch (the tutorial-style files): they need torch
# in the compile environment (the set-up's Debian CPU torch; archive mode packs it), so a build
# whose environment has none leaves them out with --build_tag_filters=-requires_torch;
# tools/remote_exec_test counts their actions apart.
REQUIRES_TORCH = ["requires_torch"]

# Ampere and Hopper: the dispatcher picks the cubin for the device of the current context
# (sm_80 also runs on sm_86/sm_89; Triton builds sm_90 as the arch-specific sm_90a).
TARGETS = [
    "cuda:80",
    "cuda:90",
]

# AMD CDNA2 (MI200) and CDNA3 (MI300): one hsaco each, chosen by the device's gfx arch. Built with
# no GPU and no ROCm; no AMD GPU has run them yet.
HIP_TARGETS = [
    "hip:gfx90a",
    "hip:gfx942",
]

def matmul_tuned_algo(block_m, block_n, block_k, num_warps, num_stages, split_k = 1, persistent_tma = False):
    """One algo of //kernels:matmul_tuned*: a tile config of matmul_tuned.py in one of its modes.

    Args:
      block_m: BLOCK_M.
      block_n: BLOCK_N.
      block_k: BLOCK_K.
      num_warps: warps per program.
      num_stages: pipelining stages.
      split_k: > 1: SPLIT_K programs per output tile add into C with atomics, so C is zeroed
        first (reset_to_zero: the M x N matrix, rows stride_cm and columns stride_cn apart).
      persistent_tma: min(NUM_SMS, tiles) persistent programs with device-made TMA descriptors.

    Returns:
      The triton_algo value.
    """
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": 8}
    grid, reset_to_zero = None, None
    if split_k > 1:
        constexprs["SPLIT_K"] = split_k
        grid = "cdiv(M, {BLOCK_M}) * cdiv(N, {BLOCK_N}), {SPLIT_K}, 1"
        reset_to_zero = {"c_ptr": "M, N, stride_cm, stride_cn"}
    if persistent_tma:
        constexprs["PERSISTENT"] = True
        constexprs["TMA"] = True
        grid = "min(NUM_SMS, cdiv(M, {BLOCK_M}) * cdiv(N, {BLOCK_N})), 1, 1"
    return triton_algo(
        constexprs = constexprs,
        grid = grid,
        num_stages = num_stages,
        num_warps = num_warps,
        reset_to_zero = reset_to_zero,
    )
