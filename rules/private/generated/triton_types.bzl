"""Triton's signature type names, for the analysis-time checks in validate.bzl.

Generated from triton_aot/core/triton_types.py by tools/gen_triton_types.py: do not edit.
//tools:triton_types_current_test fails when this file is stale.
"""

# Scalar types a kernel argument may have.
SCALAR_TYPES = [
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u1",
    "u8",
    "u16",
    "u32",
    "u64",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
]

# Integer types: of launch arguments, and the scalars that take hints.
INT_TYPES = [
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
]

# Element types that only exist behind a pointer (*fp8e5, ...).
FP8_TYPES = [
    "fp8e4nv",
    "fp8e4b8",
    "fp8e4b15",
    "fp8e5",
    "fp8e5b16",
]

# Other spellings of those types (Triton's aliases) -> canonical.
TYPE_ALIASES = {
    "bool": "i1",
    "int1": "i1",
    "uint1": "u1",
    "int8": "i8",
    "int16": "i16",
    "int": "i32",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "half": "fp16",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float": "fp32",
    "float32": "fp32",
    "double": "fp64",
    "float64": "fp64",
    "float8e4nv": "fp8e4nv",
    "float8_e4m3fn": "fp8e4nv",
    "float8e4b8": "fp8e4b8",
    "float8_e4m3fnuz": "fp8e4b8",
    "float8e4b15": "fp8e4b15",
    "float8e5": "fp8e5",
    "float8_e5m2": "fp8e5",
    "float8e5b16": "fp8e5b16",
    "float8_e5m2fnuz": "fp8e5b16",
}

# Identifiers that are constexpr values, not constexpr names.
LITERAL_NAMES = [
    "False",
    "None",
    "True",
]
