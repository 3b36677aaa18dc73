"""Triton's type names as rules_triton accepts them in signatures: scalar types, their aliases,
the integer types, fp8 element types and host tensor descriptor element types.

Defined here once; triton_aot.core.signature parses with them, and tools/gen_triton_types.py renders
them into rules/private/generated/triton_types.bzl for the rule's analysis-time checks
(//tools:triton_types_current_test fails when that copy is stale).
"""

from __future__ import annotations

# Canonical scalar types that may be kernel arguments (they all have a C ABI, see abi.py).
SCALAR_TYPES = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
                "fp16", "bf16", "fp32", "fp64")
# Integer types: what launch arguments, grid and reset_to_zero extents and tuning keys may be,
# and the scalars that take the :16 / :1 hints (bools and floats take none).
INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
BOOL_TYPES = frozenset(("i1", "u1"))
FLOAT_TYPES = frozenset(("fp16", "bf16", "fp32", "fp64"))
# Element types that only make sense behind a pointer.
FP8_TYPES = ("fp8e4nv", "fp8e4b8", "fp8e4b15", "fp8e5", "fp8e5b16")

# Triton's aliases (triton._utils.type_canonicalisation_dict), except that bool/int1 map to
# i1 (C bool) rather than Triton's u1: both are int1 inside the kernel, only the C type differs.
TYPE_ALIASES = {
    "bool": "i1", "int1": "i1", "uint1": "u1",
    "int8": "i8", "int16": "i16", "int": "i32", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16",
    "float": "fp32", "float32": "fp32", "double": "fp64", "float64": "fp64",
    "float8e4nv": "fp8e4nv", "float8_e4m3fn": "fp8e4nv", "float8e4b8": "fp8e4b8",
    "float8_e4m3fnuz": "fp8e4b8", "float8e4b15": "fp8e4b15", "float8e5": "fp8e5",
    "float8_e5m2": "fp8e5", "float8e5b16": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
}

# `tl.<name>` dtype objects accepted as constexpr values (the tl.dtype instances of triton 3.6).
TL_DTYPES = frozenset(("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                       "uint64", "float16", "bfloat16", "float32", "float64", "float8e5",
                       "float8e5b16", "float8e4nv", "float8e4b8", "float8e4b15"))

# Element types a host tensor descriptor may have: what the TMA unit moves (1, 2, 4 and 8 byte
# elements; Triton maps them to CUtensorMapDataType), so no bools.
TENSORDESC_DTYPES = tuple(t for t in SCALAR_TYPES if t not in BOOL_TYPES) + FP8_TYPES
TENSORDESC_MAX_RANK = 5  # cuTensorMapEncodeTiled's limit, as TensorDescriptor asserts
# triton.language.core.TRITON_MAX_TENSOR_NUMEL: a block may hold at most this many elements.
TENSORDESC_MAX_NUMEL = 1048576
