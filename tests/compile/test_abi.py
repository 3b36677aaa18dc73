"""The Triton -> C ABI table (docs/design.md, "C ABI of scalar types")."""

import shutil
import subprocess

import pytest

from triton_aot.core import abi
from triton_aot.core.errors import UserError
from triton_aot.core.signature import SCALAR_TYPES

# Exactly the design.md table.
DESIGN_TABLE = {
    "i1": "bool",
    "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
    "u1": "uint8_t", "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
    "fp16": "uint16_t", "bf16": "uint16_t",
    "fp32": "float",
    "fp64": "double",
}
SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u1": 1, "u8": 1, "u16": 2, "u32": 4,
         "u64": 8, "fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8}


def test_table_matches_design():
    assert {t: abi.c_type(t).ctype for t in DESIGN_TABLE} == DESIGN_TABLE
    assert set(abi.SCALARS) == set(SCALAR_TYPES) == set(DESIGN_TABLE)


@pytest.mark.parametrize("t", sorted(SIZES))
def test_sizes(t):
    assert abi.c_type(t).size == SIZES[t]


def test_fp32_is_float_not_double():
    # upstream's ty_to_cpp maps fp32 to double (8 bytes for a 4-byte kernel parameter)
    assert abi.c_type("fp32") == abi.CType("float", 4, "float")


def test_i1_is_bool_passed_as_int8():
    assert abi.c_type("i1") == abi.CType("bool", 1, "int8_t")


@pytest.mark.parametrize("t", ["*fp16", "*kfp16", "*i1", "*fp8e4nv", "*u64"])
def test_pointers(t):
    assert abi.c_type(t) == abi.CType("CUdeviceptr", 8, "CUdeviceptr")


@pytest.mark.parametrize("t", ["fp8e4nv", "constexpr", "f32", ""])
def test_no_abi(t):
    with pytest.raises(UserError, match="has no C ABI"):
        abi.c_type(t)


AWKWARD_NAMES = ["int", "float", "class", "new", "default", "__x", "_Bool", "NULL", "int32_t",
                 "CUstream", "trt_x", "TRT_X", "CUDA_VERSION", "CU_X", "CU_SEQLENS",
                 "RULES_TRITON_X", "EXIT_SUCCESS"]


@pytest.mark.parametrize("name", AWKWARD_NAMES)
def test_awkward_parameter_names_are_renamed_in_c(name):
    abi.check_c_parameter_name(name)
    assert abi.c_param_name(name) == "trt_" + name


@pytest.mark.parametrize("name", ["x_ptr", "n", "BLOCK", "_x", "stream", "algo_id", "M",
                                  "cuda_x", "trt", "cu_seqlens"])
def test_ordinary_parameter_names(name):
    abi.check_c_parameter_name(name)
    assert abi.c_param_name(name) == name


def test_c_parameter_names_never_clash():
    """A renamed name cannot meet a kept one, or another renamed one: the one that would be
    trt_int is renamed itself."""
    names = AWKWARD_NAMES + ["trt_int", "trt_trt_x", "x", "trt_CU_X"]
    c_names = [abi.c_param_name(n) for n in names]
    assert len(set(c_names)) == len(names)


@pytest.mark.parametrize("name", ["n\u00e4me", "a b", ""])
def test_parameter_names_outside_c_syntax(name):
    with pytest.raises(UserError, match="is not a valid C identifier"):
        abi.check_c_parameter_name(name)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_sizes_hold_in_c(tmp_path):
    """The declared sizes are the real sizeof() of the C types (with triton's cuda.h)."""
    import triton
    from pathlib import Path
    include = Path(triton.__file__).parent / "backends" / "nvidia" / "include"
    lines = ["#include <cuda.h>", "#include <stdbool.h>", "#include <stdint.h>"]
    for t, ct in list(abi.SCALARS.items()) + [("ptr", abi.POINTER)]:
        lines.append(f'_Static_assert(sizeof({ct.ctype}) == {ct.size}, "{t}");')
        lines.append(f'_Static_assert(sizeof({ct.kernel_ctype}) == {ct.size}, "{t} kernel");')
    src = tmp_path / "sizes.c"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run(["cc", "-std=c11", "-fsyntax-only", f"-I{include}", str(src)], check=True)
