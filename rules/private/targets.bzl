"""GPU targets each supported triton compiles for, for the analysis-time checks in validate.bzl.

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

# AMD archs triton compiles for.
HIP_ARCHS = [
    "gfx90a",
    "gfx942",
    "gfx950",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1200",
    "gfx1201",
]
