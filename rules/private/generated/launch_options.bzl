"""An algo's launch options (triton_algo(num_warps = 8, ...)), for validate.bzl.

Generated from triton_aot/core/launch_options.py by tools/gen_concepts.py: do not edit.
//tools:concepts_current_test fails when this file is stale.
"""

# Option -> its default (None: the library's attribute of that name, or unset), whether it is a
# bool, its allowed values or range (and those in words), the CUDA arch it needs and whether it is
# CUDA only when set.
LAUNCH_OPTIONS = {
    "num_warps": {
        "default": None,
        "bool": False,
        "values": [1, 2, 4, 8, 16, 32],
        "low": None,
        "high": None,
        "spelled": "a power of two from 1 to 32",
        "min_cuda_arch": None,
        "cuda_only": False,
    },
    "num_stages": {
        "default": None,
        "bool": False,
        "values": [],
        "low": 1,
        "high": None,
        "spelled": "a positive int",
        "min_cuda_arch": None,
        "cuda_only": False,
    },
    "num_ctas": {
        "default": 1,
        "bool": False,
        "values": [1, 2, 4, 8, 16],
        "low": None,
        "high": None,
        "spelled": "1, 2, 4, 8 or 16",
        "min_cuda_arch": 90,
        "cuda_only": True,
    },
    "launch_cooperative_grid": {
        "default": False,
        "bool": True,
        "values": [],
        "low": None,
        "high": None,
        "spelled": "",
        "min_cuda_arch": None,
        "cuda_only": True,
    },
    "launch_pdl": {
        "default": False,
        "bool": True,
        "values": [],
        "low": None,
        "high": None,
        "spelled": "",
        "min_cuda_arch": 90,
        "cuda_only": True,
    },
    "maxnreg": {
        "default": None,
        "bool": False,
        "values": [],
        "low": 16,
        "high": 255,
        "spelled": "an int from 16 to 255",
        "min_cuda_arch": None,
        "cuda_only": True,
    },
    "enable_fp_fusion": {
        "default": True,
        "bool": True,
        "values": [],
        "low": None,
        "high": None,
        "spelled": "",
        "min_cuda_arch": None,
        "cuda_only": False,
    },
}
