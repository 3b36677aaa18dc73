"""Names shared by the BUILD files of the examples."""

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

# Tag of the targets whose kernel files import torch (the tutorial-style files): they build with
# the set-up's environment (Debian's CPU torch) in the default local mode, not in archive mode,
# whose environment carries no torch; tools/remote_exec_test leaves them out with
# --build_tag_filters=-requires_torch.
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
