"""The schema of a torch op: its arguments (`args` attribute) and the schema text they make.

`args` entries are `NAME`, `NAME: TYPE` or `NAME: TYPE = DEFAULT`, TYPE one of Tensor, int
(`SymInt` in the schema), `static int` (`int`), float, bool. Also the tables the other jobs
share: Triton element types as torch dtypes, C integer ranges, scalar kinds.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
from dataclasses import dataclass
from typing import Any, Optional

from triton_aot.contract.op_record import ARG_PATTERN
from triton_aot.core import abi
from triton_aot.core.errors import UserError

# Triton pointer element type -> (torch dtype name, stable ScalarType enumerator).
DTYPES = {
    "fp16": ("float16", "Half"),
    "bf16": ("bfloat16", "BFloat16"),
    "fp32": ("float32", "Float"),
    "fp64": ("float64", "Double"),
    "i8": ("int8", "Char"),
    "i16": ("int16", "Short"),
    "i32": ("int32", "Int"),
    "i64": ("int64", "Long"),
    "u8": ("uint8", "Byte"),
    "i1": ("bool", "Bool"),
    "fp8e4nv": ("float8_e4m3fn", "Float8_e4m3fn"),
    "fp8e5": ("float8_e5m2", "Float8_e5m2"),
}

INT_RANGES = abi.C_INT_RANGES
FLOAT_CTYPES = abi.C_FLOAT_TYPES

SCALAR_KINDS = {"Tensor": None, "int": "int64_t", "float": "double", "bool": "bool"}

# Argument names the generated code cannot take. Its C++ names arguments `t_NAME` (tensors) and
# `v_NAME` (scalars), clear of C++ keywords and its own locals; in Python an argument is named
# as declared, so a keyword, `torch` and `_`-prefixed names (the module's helpers) would break
# the fake implementation; `out` and `self` have meanings in torch schemas.
RESERVED_ARGS = ("torch", "out", "self")

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Arg:
    name: str
    kind: str  # Tensor, int, float, bool
    default: Optional[str] = None
    static: bool = False  # an int the schema types `int` (specialized), not `SymInt`

    @property
    def schema_type(self) -> str:
        if self.kind == "int" and not self.static:
            return "SymInt"
        return self.kind



def fail(op: str, message: str) -> UserError:
    return UserError(f"op '{op}': {message}")


def parse_args(op: str, specs: list[str]) -> list[Arg]:
    args = []
    for spec in specs:
        m = ARG_PATTERN.match(spec)
        if not m:
            raise fail(op, f"attribute 'args': {spec!r} is not 'NAME', 'NAME: TYPE' or "
                            "'NAME: TYPE = DEFAULT'")
        name, static, kind, default = m.group(1), bool(m.group(2)), m.group(3) or "Tensor", m.group(4)
        if kind not in SCALAR_KINDS:
            raise fail(op, f"attribute 'args': {spec!r}: type {kind!r} is not one of Tensor, int, "
                            "static int, float, bool")
        if static and kind != "int":
            raise fail(op, f"attribute 'args': {spec!r}: only an int can be static (a {kind} is "
                            "never symbolic)")
        if default is not None:
            default = default_text(op, spec, kind, default)
        elif args and args[-1].default is not None:
            raise fail(op, f"attribute 'args': {name!r} has no default but follows "
                            f"{args[-1].name!r}, which has one: put the arguments with defaults last")
        if name in [a.name for a in args]:
            raise fail(op, f"attribute 'args': {name!r} appears twice")
        if keyword.iskeyword(name) or name in RESERVED_ARGS or name.startswith("_"):
            raise fail(op, f"attribute 'args': {name!r} is reserved (Python keywords, "
                            f"{', '.join(map(repr, RESERVED_ARGS))} and names starting with '_'): "
                            "rename the argument")
        args.append(Arg(name, kind, default, static))
    return args


def default_text(op: str, spec: str, kind: str, text: str) -> str:
    """The default as the schema and Python both write it; UserError when it is not a `kind`."""
    if kind == "Tensor":
        raise fail(op, f"attribute 'args': {spec!r}: a Tensor argument cannot have a default")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise fail(op, f"attribute 'args': {spec!r}: the default must be a literal") from None
    ok = {"int": (int,), "float": (int, float), "bool": (bool,)}[kind]
    if not isinstance(value, ok) or (kind != "bool" and isinstance(value, bool)):
        raise fail(op, f"attribute 'args': {spec!r}: the default is not a {kind}")
    if kind == "bool":
        return "True" if value else "False"
    if kind == "float":
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise fail(op, f"attribute 'args': {spec!r}: the default must be a finite float")
        return repr(number)
    lo, hi = INT_RANGES["int64_t"]
    if not lo <= value <= hi:
        raise fail(op, f"attribute 'args': {spec!r}: the default does not fit an int64")
    return repr(value)



def schema(ns_op: Any) -> str:
    """The op's schema, `name(Tensor(a!) x, float eps) -> Tensor`, from its args, mutated
    tensors and outputs."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    params = []
    for a in ns_op.args:
        if a.kind == "Tensor":
            t = f"Tensor({next(letters)}!)" if a.name in ns_op.mutates else "Tensor"
        else:
            t = a.schema_type
        params.append(f"{t} {a.name}" + (f"={a.default}" if a.default is not None else ""))
    n = len(ns_op.outputs)
    ret = "()" if n == 0 else "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"
    return f"{ns_op.name}({', '.join(params)}) -> {ret}"


