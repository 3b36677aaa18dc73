"""GPU targets each supported triton compiles for, for what analysis needs of them (validate.bzl, python_env.bzl).

Generated from triton_aot/core/targets.py by tools/gen_concepts.py: do not edit.
//tools:concepts_current_test fails when this file is stale.
"""

# SMs each triton release ("3.6") compiles for.
CUDA_ARCHS_BY_TRITON = {
    "3.5": [70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 120],
    "3.6": [70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121],
    "3.7": [70, 72, 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121],
    "3.8": [70, 72, 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121],
    "3.9": [70, 72, 75, 80, 86, 87, 89, 90, 100, 103, 107, 110, 120, 121],
}

# Every SM some supported triton compiles for, ascending.
CUDA_ARCHS = [
    70,
    72,
    75,
    80,
    86,
    87,
    89,
    90,
    100,
    101,
    103,
    107,
    110,
    120,
    121,
]

# Triton compiles this SM and newer arch-specific (sm_90a): those cubins and PTX serve their own SM
# only.
ARCH_SPECIFIC_FROM = 90

# What the variants of each backend can have (targets.BACKENDS): the rule asks this table where CUDA
# and HIP differ.
BACKENDS = {
    "cuda": {
        "image": "cubin",
        "outputs": ["out_ptx", "out_sass"],
        "embed_ptx": True,
        "reset_to_zero": True,
        "grid_device_attrs": True,
        "tuned_dispatch": True,
        "standalone_c": True,
        "cuda_launch_options": True,
        "dlpack_entry": True,
        "ir_groups": ["ptx", "ttir", "ttgir", "llir", "cubin"],
        "symbol_arch": "sm{}",
        "arch_is_sm": True,
    },
    "hip": {
        "image": "hsaco",
        "outputs": ["out_amdgcn"],
        "embed_ptx": False,
        "reset_to_zero": False,
        "grid_device_attrs": False,
        "tuned_dispatch": False,
        "standalone_c": False,
        "cuda_launch_options": False,
        "dlpack_entry": False,
        "ir_groups": ["ttir", "ttgir", "llir", "amdgcn", "hsaco"],
        "symbol_arch": "{}",
        "arch_is_sm": False,
    },
}

# SMs whose PTX the driver JIT-compiles for every later GPU (targets.ptx_fallback_arch): the target
# an embed_ptx library embeds the PTX of is the lowest of these.
PTX_FALLBACK_ARCHS = [
    70,
    72,
    75,
    80,
    86,
    87,
    89,
]
