"""Tool errors in the terms of the BUILD target (triton_aot.core.build_terms)."""

import pytest

from triton_aot.compile.autotune_configs import FLAG_ATTRIBUTES as AUTOTUNE_ATTRIBUTES
from triton_aot.core.build_terms import in_build_terms


@pytest.mark.parametrize("message,expected", [
    ("--signature entry 5 (parameter 'BLOCK'): 'BLOCK' is tl.constexpr; write BLOCK and pass "
     "--constexprs=BLOCK=VALUE",
     "//k:lib: attribute 'signature': entry 5 (parameter 'BLOCK'): 'BLOCK' is tl.constexpr; "
     "write BLOCK and pass BLOCK=VALUE in attribute 'algos'"),
    ("--kernel_name: 'k' is not defined in k.py", "//k:lib: attribute 'kernel': 'k' is not "
     "defined in k.py"),
    ("--num_warps/--num_stages/--num_ctas: triton rejects the options",
     "//k:lib: attribute 'algos': triton rejects the options"),
    ("--grid is empty", "//k:lib: attribute 'grid': is empty"),
    ("--hints: 'n' is None in --signature", "//k:lib: attribute 'specializations': 'n' is None in "
     "attribute 'signature'"),
    ("k.py:11:5: wrong (compiling kernel 'k' for cuda:90)",
     "//k:lib: attribute 'kernel': k.py:11:5: wrong (compiling kernel 'k' for cuda:90)"),
    ("//k:lib: attribute 'deps': importing k.py failed", "//k:lib: attribute 'deps': importing "
     "k.py failed"),
])
def test_compile_errors_name_the_target_and_attribute(message, expected):
    assert in_build_terms(message, "//k:lib") == expected


def test_autotune_errors_use_that_rules_attributes():
    assert in_build_terms("--kernels is empty; name the kernels of --kernel_path", "//k:algos",
                          AUTOTUNE_ATTRIBUTES, default="kernels") == (
        "//k:algos: attribute 'kernels': is empty; name the kernels of attribute 'srcs'")
