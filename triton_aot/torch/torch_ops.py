"""`python -m triton_aot.torch.torch_ops --plan=P.json --out_cc=F.cc --out_py=F.py`: torch ops.

The generator behind `triton_torch_library`: for each op it reads the kernel library's library
description (triton_aot.contract.library: the C functions `NAME`, `NAME_default`, `NAME_auto`
with their parameters' C and signature types, and the hint pattern of each specialization),
binds every C parameter to an expression over the op's arguments, and writes

- one C++ source that registers every op of the namespace through libtorch's stable ABI
  (`STABLE_TORCH_LIBRARY`, `torch::stable::Tensor`), checks the arguments, allocates the
  outputs and calls the C API on torch's current CUDA stream; it never prints or exits: every
  refusal is one exception whose message names the op and the argument;
- one Python module that loads the shared object and registers the fake (meta) implementations,
  so eager mode, torch.compile and torch.export see ordinary ops.

Argument types: `Tensor`, `int` (`SymInt` in the schema: a size taken from a dynamic dimension
stays symbolic under torch.export and torch.compile), `static int` (`int`: the value is
specialized, for arguments that are never sizes), `float`, `bool`. `entry = "algo"` adds
`int algo_id` after the arguments without a default and before those with one.

The expression language (bindings, output shapes, checks) is Python syntax over the op's
arguments: `a.size(0)`, `a.stride(-1)`, `a.numel()`, `a.dim()`, scalar arguments, integer and
float literals, `+ - * // % ( )`, `cdiv(x, y)`, `min(x, y)`, `max(x, y)`, and in checks
comparisons with `and`, `or`, `not`.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from absl import flags

from triton_aot.contract import library
from triton_aot.core import cli
from triton_aot.core.errors import UserError
from triton_aot.core.signature import is_tensordesc

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

# C integer types of the C API -> (min, max).
INT_RANGES = {
    "int8_t": (-(1 << 7), (1 << 7) - 1),
    "int16_t": (-(1 << 15), (1 << 15) - 1),
    "int32_t": (-(1 << 31), (1 << 31) - 1),
    "int64_t": (-(1 << 63), (1 << 63) - 1),
    "uint8_t": (0, (1 << 8) - 1),
    "uint16_t": (0, (1 << 16) - 1),
    "uint32_t": (0, (1 << 32) - 1),
    "uint64_t": (0, (1 << 63) - 1),  # bound values are int64_t
}
FLOAT_CTYPES = ("float", "double")

SCALAR_KINDS = {"Tensor": None, "int": "int64_t", "float": "double", "bool": "bool"}

# Argument names the generated code cannot take. Its C++ names arguments `t_NAME` (tensors) and
# `v_NAME` (scalars), clear of C++ keywords and its own locals; in Python an argument is named
# as declared, so a keyword, `torch` and `_`-prefixed names (the module's helpers) would break
# the fake implementation; `out` and `self` have meanings in torch schemas.
_RESERVED_ARGS = ("torch", "out", "self")

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


@dataclass
class CParam:
    ctype: str
    name: str


@dataclass
class Binding:
    param: CParam
    kind: str  # "tensor" (input), "output", "int", "float"
    tensor: Optional[str] = None  # op argument or output name for pointers
    dtype: Optional[str] = None  # Triton element type for pointers
    cc: str = ""  # C++ expression (ints, floats)
    text: str = ""  # the user's expression, for messages


@dataclass
class Op:
    name: str
    lib: str  # C API prefix
    entry: str  # the C function called
    include: str
    args: list[Arg]
    outputs: list  # (param name, dtype, [(C++, Python) per size] or an input tensor's name)
    bindings: list[Binding]
    checks: list[tuple[str, str]]  # (C++ condition, text)
    min_dims: dict[str, int]
    contiguous: list[str]
    mutates: list[str]
    hint_sets: list[list[tuple[str, int]]]  # per specialization: [(param, 16 or 1)]
    algo_arg: bool = False
    py_checks: list[tuple[str, str]] = field(default_factory=list)
    # the algo chosen by conditions on the arguments: [(C++ condition, text, algo index)]
    algo_choice: list[tuple[str, str, int]] = field(default_factory=list)


def _fail(op: str, message: str) -> UserError:
    return UserError(f"op '{op}': {message}")


# --- expressions ----------------------------------------------------------------------------


class _Expr:
    """Translates one expression of the op's language to C++ and to Python."""

    def __init__(self, op: str, what: str, text: str, args: dict[str, Arg], tensors: set[str],
                 boolean: bool = False) -> None:
        self.op, self.what, self.text = op, what, text
        self.args, self.tensors = args, tensors
        self.dims: dict[str, int] = {}  # tensor -> minimum rank the expression needs
        self.strided: set[str] = set()  # tensors whose strides it reads
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as e:
            raise _fail(op, f"{what}: cannot parse {text!r}: {e.msg}") from None
        self.cc = self._cc(tree, boolean)
        self.py = self._py(tree, boolean)

    def _err(self, problem: str) -> UserError:
        return _fail(self.op, f"{self.what}: {self.text!r}: {problem}")

    def _tensor_call(self, node: ast.Call) -> tuple[str, str, Optional[int]]:
        f = node.func
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
            raise self._err("only cdiv/min/max calls and TENSOR.size(i), .stride(i), .numel(), "
                            ".dim() are allowed")
        tensor, method = f.value.id, f.attr
        if tensor not in self.tensors:
            raise self._err(f"{tensor!r} is not a tensor argument of the op")
        if method in ("numel", "dim"):
            if node.args:
                raise self._err(f"{tensor}.{method}() takes no argument")
            return tensor, method, None
        if method not in ("size", "stride"):
            raise self._err(f"unknown tensor method {method!r} (size, stride, numel, dim)")
        if len(node.args) != 1 or not isinstance(_const_int(node.args[0]), int):
            raise self._err(f"{tensor}.{method}() takes one integer literal, e.g. {tensor}.{method}(0)")
        index = _const_int(node.args[0])
        need = index + 1 if index >= 0 else -index
        self.dims[tensor] = max(self.dims.get(tensor, 0), need)
        if method == "stride":
            self.strided.add(tensor)
        return tensor, method, index

    def _cc(self, node: ast.AST, boolean: bool) -> str:
        c = lambda n: self._cc(n, False)  # noqa: E731
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return "true" if node.value else "false"
            if isinstance(node.value, int):
                return f"INT64_C({node.value})"
            if isinstance(node.value, float):
                return repr(node.value)
            raise self._err(f"literal {node.value!r} is not a number")
        if isinstance(node, ast.Name):
            if node.id not in self.args:
                raise self._err(f"{node.id!r} is not an argument of the op")
            if self.args[node.id].kind == "Tensor":
                raise self._err(f"tensor {node.id!r} used as a number (use {node.id}.size(0), ...)")
            return f"v_{node.id}"
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in ("cdiv", "min", "max"):
                if len(node.args) != 2:
                    raise self._err(f"{node.func.id} takes two arguments")
                a, b = c(node.args[0]), c(node.args[1])
                if node.func.id == "cdiv":
                    return f"trt_cdiv({a}, {b})"
                return f"std::{node.func.id}<int64_t>({a}, {b})"
            tensor, method, index = self._tensor_call(node)
            if method in ("numel", "dim"):
                return f"t_{tensor}.{method}()"
            return f"t_{tensor}.{method}({index})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{c(node.operand)})"
            if isinstance(node.op, ast.Not):
                return f"(!{self._cc(node.operand, True)})"
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Div: "/",
                   ast.Mod: "%"}
            if type(node.op) in ops:
                if isinstance(node.op, (ast.FloorDiv, ast.Div, ast.Mod)):
                    return f"trt_{'mod' if isinstance(node.op, ast.Mod) else 'div'}({c(node.left)}, {c(node.right)})"
                return f"({c(node.left)} {ops[type(node.op)]} {c(node.right)})"
        if isinstance(node, ast.BoolOp):
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + joiner.join(self._cc(v, True) for v in node.values) + ")"
        if isinstance(node, ast.Compare):
            cmp = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
                   ast.GtE: ">="}
            parts, left = [], node.left
            for o, right in zip(node.ops, node.comparators):
                if type(o) not in cmp:
                    raise self._err("only == != < <= > >= comparisons are allowed")
                parts.append(f"({c(left)} {cmp[type(o)]} {c(right)})")
                left = right
            return "(" + " && ".join(parts) + ")"
        raise self._err(f"{type(node).__name__} is not part of the expression language")

    def _py(self, node: ast.AST, boolean: bool) -> str:
        # Python evaluates the same syntax over fake tensors, whose sizes may be symbolic, with
        # no guard on them: `/` on sizes means integer division, as in C++; cdiv, min, max,
        # `and`, `or`, `not` and chained comparisons are the generated module's helpers (the
        # builtins would turn a symbolic size into a constant); a number used as a condition
        # means `!= 0`, as in C++.
        def cond(n: ast.AST) -> ast.AST:
            if isinstance(n, ast.Compare) or \
                    (isinstance(n, ast.Call) and getattr(n.func, "id", "") in _PY_LOGIC) or \
                    (isinstance(n, ast.Constant) and isinstance(n.value, bool)):
                return n
            return ast.Compare(n, [ast.NotEq()], [ast.Constant(0)])

        def helper(name: str, operands: list[ast.AST]) -> ast.Call:
            return ast.Call(ast.Name(name, ast.Load()), operands, [])

        class ToPython(ast.NodeTransformer):
            def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
                self.generic_visit(n)
                if isinstance(n.op, ast.Div):
                    n.op = ast.FloorDiv()
                return n

            def visit_Call(self, n: ast.Call) -> ast.AST:
                self.generic_visit(n)
                if isinstance(n.func, ast.Name) and n.func.id in _PY_FUNCTIONS:
                    n.func = ast.Name(_PY_FUNCTIONS[n.func.id], ast.Load())
                return n

            def visit_BoolOp(self, n: ast.BoolOp) -> ast.AST:
                self.generic_visit(n)
                return helper("_and" if isinstance(n.op, ast.And) else "_or",
                              [cond(v) for v in n.values])

            def visit_UnaryOp(self, n: ast.UnaryOp) -> ast.AST:
                self.generic_visit(n)
                return helper("_not", [cond(n.operand)]) if isinstance(n.op, ast.Not) else n

            def visit_Compare(self, n: ast.Compare) -> ast.AST:
                self.generic_visit(n)
                if len(n.ops) == 1:
                    return n
                lefts = [n.left] + n.comparators[:-1]
                return helper("_and", [ast.Compare(a, [o], [b]) for a, o, b in
                                       zip(lefts, n.ops, n.comparators)])

        tree = ToPython().visit(ast.parse(ast.unparse(node), mode="eval")).body
        return ast.unparse(cond(tree) if boolean else tree)


# The expression language's functions -> the generated module's helpers (PY_TEMPLATE).
_PY_FUNCTIONS = {"cdiv": "_cdiv", "min": "_min", "max": "_max"}
_PY_LOGIC = ("_and", "_or", "_not")  # `and`, `or`, `not`


def _const_int(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _const_int(node.operand)
        return None if inner is None else -inner
    return None


# --- inputs ---------------------------------------------------------------------------------


def _parse_args(op: str, specs: list[str]) -> list[Arg]:
    args = []
    for spec in specs:
        m = re.match(r"^\s*([A-Za-z_]\w*)\s*(?::\s*(static\s+)?(\w+))?\s*(?:=\s*(\S.*?))?\s*$", spec)
        if not m:
            raise _fail(op, f"attribute 'args': {spec!r} is not 'NAME', 'NAME: TYPE' or "
                            "'NAME: TYPE = DEFAULT'")
        name, static, kind, default = m.group(1), bool(m.group(2)), m.group(3) or "Tensor", m.group(4)
        if kind not in SCALAR_KINDS:
            raise _fail(op, f"attribute 'args': {spec!r}: type {kind!r} is not one of Tensor, int, "
                            "static int, float, bool")
        if static and kind != "int":
            raise _fail(op, f"attribute 'args': {spec!r}: only an int can be static (a {kind} is "
                            "never symbolic)")
        if default is not None:
            default = _default(op, spec, kind, default)
        elif args and args[-1].default is not None:
            raise _fail(op, f"attribute 'args': {name!r} has no default but follows "
                            f"{args[-1].name!r}, which has one: put the arguments with defaults last")
        if name in [a.name for a in args]:
            raise _fail(op, f"attribute 'args': {name!r} appears twice")
        if keyword.iskeyword(name) or name in _RESERVED_ARGS or name.startswith("_"):
            raise _fail(op, f"attribute 'args': {name!r} is reserved (Python keywords, "
                            f"{', '.join(map(repr, _RESERVED_ARGS))} and names starting with '_'): "
                            "rename the argument")
        args.append(Arg(name, kind, default, static))
    return args


def _default(op: str, spec: str, kind: str, text: str) -> str:
    """The default as the schema and Python both write it; UserError when it is not a `kind`."""
    if kind == "Tensor":
        raise _fail(op, f"attribute 'args': {spec!r}: a Tensor argument cannot have a default")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise _fail(op, f"attribute 'args': {spec!r}: the default must be a literal") from None
    ok = {"int": (int,), "float": (int, float), "bool": (bool,)}[kind]
    if not isinstance(value, ok) or (kind != "bool" and isinstance(value, bool)):
        raise _fail(op, f"attribute 'args': {spec!r}: the default is not a {kind}")
    if kind == "bool":
        return "True" if value else "False"
    if kind == "float":
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise _fail(op, f"attribute 'args': {spec!r}: the default must be a finite float")
        return repr(number)
    lo, hi = INT_RANGES["int64_t"]
    if not lo <= value <= hi:
        raise _fail(op, f"attribute 'args': {spec!r}: the default does not fit an int64")
    return repr(value)


def build_op(name: str, spec: dict, lib: dict) -> Op:
    """Binds one op's C entry point to tensor-level arguments; UserError when it cannot."""
    if not _IDENT.match(name):
        raise _fail(name, "an op name is an identifier")
    description = library.read_library(lib["description"])
    c_name = description.name
    for p in description.function("default").params:
        if p.type is not None and is_tensordesc(p.type):
            raise _fail(name, f"{c_name} takes a tensor descriptor ({p.kernel_param}); torch ops "
                              "over tensordesc parameters are not supported yet")

    choice = spec.get("algo_choice") or []
    entry_kind = spec.get("entry") or ("algo" if choice else "auto" if description.function("auto") else "default")
    if choice and entry_kind != "algo":
        raise _fail(name, "algo_choice: the op chooses the algo, so entry must be 'algo' or unset")
    entry = {"auto": f"{c_name}_auto", "default": f"{c_name}_default", "algo": c_name}.get(entry_kind)
    if entry is None:
        raise _fail(name, f"entry: {entry_kind!r} is not 'auto', 'default' or 'algo'")
    function = description.function(entry_kind)
    if function is None:
        raise _fail(name, f"entry: {c_name} has no {entry}() (entry = {entry_kind!r}); "
                          f"it has {', '.join(f.name for f in description.functions)}")
    # The header spells a parameter C cannot use as it is (CU_SEQLENS, int) trt_ + the name
    # (abi.c_param_name); the op's declaration uses the kernel's own names.
    params = [CParam(p.c_type, p.kernel_param or p.name) for p in function.params]
    types = {p.kernel_param: p.type for p in function.params if p.kernel_param}
    hint_sets = [list(pattern) for pattern in description.specializations]
    if not params or params[0].ctype != "CUstream":
        raise _fail(name, f"{entry}() does not take a CUstream first (a HIP library?); torch ops "
                          "are CUDA only")
    params = params[1:]
    algo_arg = entry_kind == "algo" and not choice
    if entry_kind == "algo":
        params = params[:-1]  # int algo_id: an op argument of its own, or chosen

    args = _parse_args(name, spec.get("args") or [])
    if algo_arg:
        if "algo_id" in [a.name for a in args]:
            raise _fail(name, "attribute 'args': 'algo_id' is added by entry = 'algo': rename the "
                              "argument")
        # Positional and required: after the arguments without a default, before those with
        # one. A static int: an algo is chosen, never a size.
        at = next((i for i, a in enumerate(args) if a.default is not None), len(args))
        args.insert(at, Arg("algo_id", "int", static=True))
    argmap = {a.name: a for a in args}
    outputs_spec: dict[str, str] = dict(spec.get("outputs") or {})
    tensors = {a.name for a in args if a.kind == "Tensor"}
    for out in outputs_spec:
        if out in argmap:
            raise _fail(name, f"outputs: {out!r} is also an argument of the op")
    all_tensors = tensors | set(outputs_spec)
    bind: dict[str, str] = dict(spec.get("bind") or {})
    param_names = [p.name for p in params]
    for key in list(bind) + list(outputs_spec):
        if key not in param_names:
            raise _fail(name, f"{'bind' if key in bind else 'outputs'}: {key!r} is not a parameter "
                              f"of {entry}() ({', '.join(param_names)})")
    for p in params:
        if p.name in outputs_spec and p.ctype != "CUdeviceptr":
            # outputs are the tensors the op allocates: only a pointer parameter can be one
            raise _fail(name, f"outputs: {p.name!r} is a scalar parameter ({p.ctype}) of "
                              f"{entry}(), not a pointer; outputs names the pointer parameters "
                              f"the op allocates and returns: remove {p.name!r} from outputs and "
                              f"give its value with bind = {{\"{p.name}\": \"EXPRESSION\"}} or "
                              f"an argument {p.name!r}")

    dims: dict[str, int] = {}
    strided: set[str] = set()

    def expr(what: str, text: str, boolean: bool = False) -> _Expr:
        e = _Expr(name, what, text, argmap, tensors, boolean)
        for t, d in e.dims.items():
            dims[t] = max(dims.get(t, 0), d)
        strided.update(e.strided)
        return e

    bindings: list[Binding] = []
    outputs: list[tuple[str, str, list[str]]] = []
    used: set[str] = set()
    for p in params:
        ttype = types.get(p.name, "")
        if p.ctype == "CUdeviceptr":
            elem = ttype[1:] if ttype.startswith("*") else ""
            if elem not in DTYPES:
                raise _fail(name, f"{p.name} has type {ttype!r}, which has no torch dtype")
            if p.name in outputs_spec:
                shape_text = outputs_spec[p.name].strip()
                like = re.match(r"^([A-Za-z_]\w*)\.shape$", shape_text)
                if like:
                    if like.group(1) not in tensors:
                        raise _fail(name, f"outputs[{p.name!r}]: {like.group(1)!r} is not a tensor argument")
                    outputs.append((p.name, elem, like.group(1)))
                else:
                    shape = [expr(f"outputs[{p.name!r}]", s) for s in _split_top(shape_text)]
                    if not shape:
                        raise _fail(name, f"outputs[{p.name!r}]: the shape is empty (write \"x.shape\" or sizes such as \"x.size(0), 4\")")
                    outputs.append((p.name, elem, [(s.cc, s.py) for s in shape]))
                bindings.append(Binding(p, "output", tensor=p.name, dtype=elem, text=p.name))
                continue
            target = bind.get(p.name)
            if target is None:
                base = re.sub(r"(_ptr|_PTR|Ptr|_p)$", "", p.name)
                target = p.name if p.name in tensors else base if base in tensors else None
                if target is None:
                    raise _fail(name, f"pointer parameter {p.name!r} of {entry}() is bound to no "
                                      f"tensor: add bind = {{\"{p.name}\": \"TENSOR\"}} or "
                                      f"outputs = {{\"{p.name}\": \"SHAPE\"}}")
            if target not in tensors:
                raise _fail(name, f"bind[{p.name!r}]: {target!r} is not a tensor argument "
                                  f"({', '.join(sorted(tensors)) or 'none'})")
            used.add(target)
            bindings.append(Binding(p, "tensor", tensor=target, dtype=elem, text=target))
        elif p.ctype in INT_RANGES or p.ctype in FLOAT_CTYPES or p.ctype == "bool":
            text = bind.get(p.name)
            if text is None:
                if p.name in argmap and argmap[p.name].kind != "Tensor":
                    text = p.name
                else:
                    raise _fail(name, f"parameter {p.name!r} ({p.ctype}) of {entry}() is bound to "
                                      f"nothing: add bind = {{\"{p.name}\": \"EXPRESSION\"}} "
                                      f"(e.g. \"x.size(0)\") or an argument {p.name!r}")
            e = expr(f"bind[{p.name!r}]", text)
            kind = "float" if p.ctype in FLOAT_CTYPES else "int"
            bindings.append(Binding(p, kind, cc=e.cc, text=text))
            if isinstance(ast.parse(text.strip(), mode="eval").body, ast.Name):
                used.add(text.strip())
        else:
            raise _fail(name, f"parameter {p.name!r} of {entry}() has C type {p.ctype!r}, which "
                              "torch ops do not support yet")

    checks = []
    py_checks = []
    for text in spec.get("checks") or []:
        e = expr("checks", text, boolean=True)
        checks.append((e.cc, text))
        py_checks.append((e.py, text))
    for a in args:
        if a.kind != "Tensor" and a.name not in used and not algo_arg:
            pass  # a scalar only checks or shapes use
    for t in tensors:
        if t not in used:
            raise _fail(name, f"tensor argument {t!r} is passed to no pointer parameter of {entry}()")

    mutates = list(spec.get("mutates") or [])
    for m in mutates:
        if m not in tensors:
            raise _fail(name, f"mutates: {m!r} is not a tensor argument")
    contiguous = spec.get("contiguous")
    if contiguous is None:
        contiguous = sorted(t for t in tensors if t not in strided)
    for t in contiguous:
        if t not in tensors:
            raise _fail(name, f"contiguous: {t!r} is not a tensor argument")
    for t in list(dims):
        if t not in tensors:
            dims.pop(t)  # outputs' ranks are the shapes given
    algo_choice = []
    for text, algo in choice:
        cc = "true" if text.strip() == "True" else expr("algo_choice", text, boolean=True).cc
        algo_choice.append((cc, text, int(algo)))
    return Op(name=name, lib=c_name, entry=entry, include=lib["include"], args=args,
              outputs=outputs, bindings=bindings, checks=checks, min_dims=dims,
              contiguous=contiguous, mutates=mutates, hint_sets=hint_sets, algo_arg=algo_arg,
              py_checks=py_checks, algo_choice=algo_choice)


def _split_top(text: str) -> list[str]:
    """'a.size(0), min(x, y)' -> ['a.size(0)', 'min(x, y)'] (commas outside parentheses)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


# --- C++ ------------------------------------------------------------------------------------


def _cstr(text: str) -> str:
    return json.dumps(text)


def _schema(ns_op: Op) -> str:
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


def _cc_op(ns: str, op: Op) -> str:
    full = f"{ns}::{op.name}"
    L = []
    w = L.append
    n_out = len(op.outputs)
    ret = "void" if n_out == 0 else "Tensor" if n_out == 1 else \
        "std::tuple<" + ", ".join(["Tensor"] * n_out) + ">"
    params = []
    for a in op.args:
        params.append(f"Tensor t_{a.name}" if a.kind == "Tensor" else f"{SCALAR_KINDS[a.kind]} v_{a.name}")
    w(f"// {full}: {_schema(op)}; calls {op.entry}().")
    w(f"static {ret} op_{op.name}({', '.join(params)}) {{")
    w(f"  static const char kOp[] = {_cstr(full)};")
    tensors = [a.name for a in op.args if a.kind == "Tensor"]
    dtype_of = {}
    for b in op.bindings:
        if b.kind == "tensor":
            dtype_of.setdefault(b.tensor, b.dtype)
    w("  // Every check runs before anything touches a device.")
    for t in tensors:
        tname, enum = DTYPES[dtype_of[t]]
        w(f"  trt_check_tensor(kOp, {_cstr(t)}, t_{t}, ScalarType::{enum}, {_cstr(tname)}, {op.min_dims.get(t, 0)}, {'true' if t in op.contiguous else 'false'});")
    for cond, text in op.checks:
        w(f"  if (!{cond}) trt_fail(kOp, {_cstr('check failed: ' + text)});")
    for b in op.bindings:
        if b.kind == "int":
            lo, hi = INT_RANGES[b.param.ctype]
            w(f"  const int64_t p_{b.param.name} = {b.cc};")
            w(f"  trt_check_range(kOp, {_cstr(b.param.name)}, {_cstr(b.text)}, p_{b.param.name}, "
              f"INT64_C({lo}), INT64_C({hi}), {_cstr(b.param.ctype)});")
        elif b.kind == "float":
            w(f"  const double p_{b.param.name} = static_cast<double>({b.cc});")
    if op.algo_choice:
        w("  int trt_algo = -1;  // the algo the example call of these sizes ran")
        for i, (cc, text, algo) in enumerate(op.algo_choice):
            w(f"  {'else ' if i else ''}if ({cc}) trt_algo = {algo};  // {text}")
        covered = " | ".join(text for _, text, _ in op.algo_choice)
        w(f"  if (trt_algo < 0) trt_fail(kOp, {_cstr('no example call of the launcher covers these sizes (' + covered + ')')});")
    if op.algo_arg:
        w(f"  if (v_algo_id < 0 || v_algo_id >= {op.lib}_get_num_algos()) trt_fail(kOp, "
          f"\"argument 'algo_id' is not an algo of {op.lib} (0..\" + std::to_string({op.lib}_get_num_algos() - 1) + \")\");")
    # Hints: the C API launches the first variant whose hints hold; refuse when none does.
    if op.hint_sets and all(op.hint_sets):
        by_param = {b.param.name: b for b in op.bindings}
        conds = []
        for hints in op.hint_sets:
            parts = []
            for pname, hint in hints:
                b = by_param.get(pname)
                if b is None or b.kind == "output":
                    continue  # outputs are fresh allocations (aligned)
                if b.kind == "tensor":
                    parts.append(f"(reinterpret_cast<uintptr_t>(t_{b.tensor}.data_ptr()) % 16 == 0)")
                elif b.kind == "int":
                    parts.append(f"(p_{pname} % 16 == 0)" if hint == 16 else f"(p_{pname} == 1)")
            conds.append(" && ".join(parts) or "true")
        w(f"  if (!({' || '.join('(' + c + ')' for c in conds)})) {{")
        loosest = min(op.hint_sets, key=len)
        w(f"    // No variant of {op.lib} takes these values; name the first hint of the least")
        w("    // specialised variant that fails.")
        for pname, hint in loosest:
            b = by_param.get(pname)
            if b is None or b.kind == "output":
                continue
            every = f"every variant of {op.lib} assumes {pname}:{hint}"
            if b.kind == "tensor":
                w(f"    if (reinterpret_cast<uintptr_t>(t_{b.tensor}.data_ptr()) % 16 != 0) trt_fail(kOp, "
                  f"{_cstr(f'argument {b.tensor!r} must be 16-byte aligned ({every}), got address ')} "
                  f"+ trt_hex(t_{b.tensor}.data_ptr()));")
            elif hint == 16:
                w(f"    if (p_{pname} % 16 != 0) trt_fail(kOp, {_cstr(f'{pname} = {b.text} must be a multiple of 16 ({every}), got ')} + std::to_string(p_{pname}));")
            else:
                w(f"    if (p_{pname} != 1) trt_fail(kOp, {_cstr(f'{pname} = {b.text} must be 1 ({every}), got ')} + std::to_string(p_{pname}));")
        w(f"    trt_fail(kOp, \"no variant of {op.lib} takes these arguments\");")
        w("  }")
    # Device: every tensor on the same CUDA device; the last check.
    first = tensors[0] if tensors else None
    if first is None:
        w("  trt_fail(kOp, \"an op needs at least one tensor argument\");")
    else:
        for t in tensors:
            w(f"  trt_check_cuda(kOp, {_cstr(t)}, t_{t}, t_{first});")
        w(f"  const int32_t device = t_{first}.get_device_index();")
        w("  torch::stable::accelerator::DeviceGuard guard(device);")
    for pname, elem, shape in op.outputs:
        if isinstance(shape, str):  # the shape of an input tensor
            w(f"  std::vector<int64_t> shape_{pname};")
            w(f"  for (int64_t i = 0; i < t_{shape}.dim(); ++i) shape_{pname}.push_back(t_{shape}.size(i));")
        else:
            dims = ", ".join(f"static_cast<int64_t>({cc})" for cc, _ in shape)
            w(f"  const std::vector<int64_t> shape_{pname} = {{{dims}}};")
            w(f"  for (int64_t d : shape_{pname}) if (d < 0) trt_fail(kOp, {_cstr(f'output {pname!r} would have a negative size')});")
        w(f"  Tensor o_{pname} = torch::stable::new_empty(t_{first}, shape_{pname}, ScalarType::{DTYPES[elem][1]});")
    w("  CUstream stream = trt_current_stream(kOp, device);")
    cargs = ["stream"]
    for b in op.bindings:
        if b.kind in ("tensor", "output"):
            prefix = "t_" if b.kind == "tensor" else "o_"
            cargs.append(f"reinterpret_cast<CUdeviceptr>({prefix}{b.tensor}.data_ptr())")
        else:
            cargs.append(f"static_cast<{b.param.ctype}>(p_{b.param.name})")
    if op.algo_arg:
        cargs.append("static_cast<int>(v_algo_id)")
    elif op.algo_choice:
        cargs.append("trt_algo")
    w(f"  trt_check_launch(kOp, {_cstr(op.entry)}, {op.entry}({', '.join(cargs)}));")
    if n_out == 1:
        w(f"  return o_{op.outputs[0][0]};")
    elif n_out > 1:
        w(f"  return std::make_tuple({', '.join('o_' + o[0] for o in op.outputs)});")
    w("}")
    return "\n".join(L)


CC_PRELUDE = r'''// Generated by rules_triton (python -m triton_aot.torch.torch_ops) for {label}. Do not edit.
//
// torch ops {ns}::* over Triton kernels compiled ahead of time, registered through libtorch's
// stable ABI (built with TORCH_TARGET_VERSION: one binary for every torch since then). Each op
// checks its arguments (dtype, rank, contiguity, the library's hints, one CUDA device), allocates
// its outputs and calls the kernel library's C API on torch's current CUDA stream. Refusals are
// exceptions (RuntimeError in Python) naming the op and the argument; nothing prints or exits.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

{includes}

namespace {{

using torch::stable::Tensor;
using torch::headeronly::ScalarType;

[[noreturn]] void trt_fail(const char* op, const std::string& message) {{
  throw std::runtime_error(std::string(op) + ": " + message);
}}

[[maybe_unused]] std::string trt_hex(const void* p) {{
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  return buf;
}}

[[maybe_unused]] int64_t trt_cdiv(int64_t a, int64_t b) {{ return b == 0 ? 0 : (a + b - 1) / b; }}
[[maybe_unused]] int64_t trt_div(int64_t a, int64_t b) {{ return b == 0 ? 0 : a / b; }}
[[maybe_unused]] int64_t trt_mod(int64_t a, int64_t b) {{ return b == 0 ? 0 : a % b; }}

const char* trt_dtype_name(ScalarType t) {{
  switch (t) {{
{dtype_cases}
    default: return "another dtype";
  }}
}}

void trt_check_tensor(const char* op, const char* name, const Tensor& t, ScalarType dtype,
                      const char* dtype_name, int64_t min_dim, bool contiguous) {{
  if (!t.defined()) trt_fail(op, std::string("argument '") + name + "' is an undefined tensor");
  if (t.scalar_type() != dtype)
    trt_fail(op, std::string("argument '") + name + "' must be " + dtype_name + ", got " +
                     trt_dtype_name(t.scalar_type()));
  if (t.dim() < min_dim)
    trt_fail(op, std::string("argument '") + name + "' must have at least " +
                     std::to_string(min_dim) + " dimension(s), got " + std::to_string(t.dim()));
  if (contiguous && !t.is_contiguous())
    trt_fail(op, std::string("argument '") + name + "' must be contiguous");
}}

void trt_check_range(const char* op, const char* param, const char* text, int64_t v, int64_t lo,
                     int64_t hi, const char* ctype) {{
  if (v < lo || v > hi)
    trt_fail(op, std::string(param) + " = " + text + " = " + std::to_string(v) +
                     " does not fit the kernel's " + ctype);
}}

void trt_check_cuda(const char* op, const char* name, const Tensor& t, const Tensor& first) {{
  if (!t.is_cuda()) {{
    trt_fail(op, std::string("argument '") + name + "' must be a CUDA tensor, got " +
                     (t.is_cpu() ? "a CPU tensor" : "a tensor on another device"));
  }}
  if (t.get_device_index() != first.get_device_index())
    trt_fail(op, std::string("argument '") + name + "' is on cuda:" +
                     std::to_string(t.get_device_index()) + ", the others on cuda:" +
                     std::to_string(first.get_device_index()));
}}

// torch's current CUDA stream, through the AOTI shim of libtorch_cuda (looked up at run time:
// the op library links against no torch library, and a CPU-only torch has no CUDA shim).
using GetStreamFn = int32_t (*)(int32_t, void**);
using CuCtxGetCurrentFn = CUresult (*)(CUcontext*);
using CuCtxGetDeviceFn = CUresult (*)(CUdevice*);
using CuPrimaryCtxRetainFn = CUresult (*)(CUcontext*, CUdevice);
using CuCtxSetCurrentFn = CUresult (*)(CUcontext);
using CuGetErrorNameFn = CUresult (*)(CUresult, const char**);

struct TrtDriver {{
  GetStreamFn get_stream = nullptr;
  CuCtxGetCurrentFn ctx_get_current = nullptr;
  CuCtxGetDeviceFn ctx_get_device = nullptr;
  CuPrimaryCtxRetainFn primary_ctx_retain = nullptr;
  CuCtxSetCurrentFn ctx_set_current = nullptr;
  CuGetErrorNameFn get_error_name = nullptr;
}};

const TrtDriver& trt_driver() {{
  static TrtDriver d;
  static std::once_flag once;
  std::call_once(once, [] {{
    d.get_stream = reinterpret_cast<GetStreamFn>(dlsym(RTLD_DEFAULT, "aoti_torch_get_current_cuda_stream"));
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cuda != nullptr) {{
      d.ctx_get_current = reinterpret_cast<CuCtxGetCurrentFn>(dlsym(cuda, "cuCtxGetCurrent"));
      d.ctx_get_device = reinterpret_cast<CuCtxGetDeviceFn>(dlsym(cuda, "cuCtxGetDevice"));
      d.primary_ctx_retain = reinterpret_cast<CuPrimaryCtxRetainFn>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
      d.ctx_set_current = reinterpret_cast<CuCtxSetCurrentFn>(dlsym(cuda, "cuCtxSetCurrent"));
      d.get_error_name = reinterpret_cast<CuGetErrorNameFn>(dlsym(cuda, "cuGetErrorName"));
    }}
  }});
  return d;
}}

std::string trt_error_name(CUresult r) {{
  const char* name = nullptr;
  const TrtDriver& d = trt_driver();
  if (d.get_error_name == nullptr || d.get_error_name(r, &name) != CUDA_SUCCESS || name == nullptr)
    return "CUresult " + std::to_string(static_cast<int>(r));
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}}

// The stream torch uses on `device`, with that device's primary context current on this thread
// (the context torch's CUDA runtime uses), as the kernel library's C API expects.
CUstream trt_current_stream(const char* op, int32_t device) {{
  const TrtDriver& d = trt_driver();
  if (d.get_stream == nullptr)
    trt_fail(op, "this torch has no CUDA support (aoti_torch_get_current_cuda_stream is missing)");
  if (d.ctx_get_current == nullptr || d.ctx_get_device == nullptr ||
      d.primary_ctx_retain == nullptr || d.ctx_set_current == nullptr)
    trt_fail(op, "cannot open the CUDA driver (libcuda.so.1)");
  void* stream = nullptr;
  if (d.get_stream(device, &stream) != 0)
    trt_fail(op, "torch could not give its current CUDA stream on cuda:" + std::to_string(device));
  CUcontext ctx = nullptr;
  CUdevice current = -1;
  if (d.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr ||
      d.ctx_get_device(&current) != CUDA_SUCCESS || current != device) {{
    CUcontext primary = nullptr;
    CUresult r = d.primary_ctx_retain(&primary, device);
    if (r == CUDA_SUCCESS) r = d.ctx_set_current(primary);
    if (r != CUDA_SUCCESS)
      trt_fail(op, "cannot make cuda:" + std::to_string(device) + "'s primary context current: " +
                       trt_error_name(r));
  }}
  return reinterpret_cast<CUstream>(stream);
}}

void trt_check_launch(const char* op, const char* entry, CUresult r) {{
  if (r != CUDA_SUCCESS) trt_fail(op, std::string(entry) + " failed: " + trt_error_name(r));
}}

'''


def render_cc(ns: str, label: str, ops: list[Op]) -> str:
    from triton_aot.torch import torch_steps  # ops over several launches
    includes = "\n".join(sorted({f'#include "{inc}"' for op in ops
                                 for inc in getattr(op, "includes", None) or {op.include}}))
    cases = "\n".join(f"    case ScalarType::{enum}: return \"{name}\";" for name, enum in
                      sorted(set(DTYPES.values()), key=lambda v: v[1]))
    out = [CC_PRELUDE.format(label=label, ns=ns, includes=includes, dtype_cases=cases)]
    out += [(torch_steps.render_cc(ns, op) if isinstance(op, torch_steps.StepsOp)
             else _cc_op(ns, op)) + "\n" for op in ops]
    out.append("}  // namespace\n")
    out.append(f"STABLE_TORCH_LIBRARY({ns}, m) {{")
    out += [f"  m.def({_cstr(_schema(op))});" for op in ops]
    out.append("}\n")
    # CUDA is the real kernel; CPU and the others refuse with the same checks (a CPU tensor is
    # told it must be CUDA, after the dtype/shape checks, which CPU tests exercise).
    for key in ("CUDA", "CPU"):
        out.append(f"STABLE_TORCH_LIBRARY_IMPL({ns}, {key}, m) {{")
        out += [f"  m.impl({_cstr(op.name)}, TORCH_BOX(&op_{op.name}));" for op in ops]
        out.append("}\n")
    return "\n".join(out)


# --- Python ---------------------------------------------------------------------------------


PY_TEMPLATE = '''"""torch ops {ns}::{{{names}}} (Triton kernels compiled ahead of time), from {label}.

Generated by rules_triton (python -m triton_aot.torch.torch_ops). Do not edit.

Importing this module loads {so} (next to this file; no Triton, no JIT) and registers the fake
implementations, so the ops work in eager mode, under torch.compile (one opaque node each) and
torch.export:

{usage}
"""

import ctypes
import os
import sys

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_false, sym_and, sym_or

NAMESPACE = {ns!r}
LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), {so!r})
SCHEMAS = {schemas!r}


def _make_torch_symbols_global():
    # The op library links against no torch library (one binary for every torch since its
    # TORCH_TARGET_VERSION, whatever the libraries' sonames); it resolves the stable ABI's
    # symbols from libtorch_cpu (and libtorch_cuda, libc10), which torch loaded privately.
    # Opened again with RTLD_NOLOAD | RTLD_GLOBAL, they stay what they are and become visible.
    paths = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) < 6:
                continue
            path = fields[5].strip()
            base = os.path.basename(path)
            if path not in paths and base.split(".so")[0] in ("libtorch_cpu", "libtorch_cuda", "libc10", "libtorch"):
                paths.append(path)
    for path in paths:
        ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD | os.RTLD_NOW)


LABEL = {display_label!r}


def _load():
    # A namespace belongs to one library (torch registers it once); which library loaded which
    # namespace is kept on a module that is never dropped, so that a second library of the same
    # namespace is refused naming both, instead of one silently running the other's ops.
    owners = sys.__dict__.setdefault("_rules_triton_torch_namespaces", {{}})
    owner = owners.get(NAMESPACE)
    ops = ", ".join(NAMESPACE + "::" + name for name in SCHEMAS)
    if owner is not None and owner != LABEL:
        raise ImportError(
            f"{{LABEL}}: attribute 'namespace': {{NAMESPACE!r}} (ops {{ops}}) is already "
            f"registered in this process by {{owner}}, another triton_torch_library; a namespace "
            f"belongs to one library: give {{LABEL}} another namespace, or move its ops into the "
            f"ops of {{owner}}")
    namespace = getattr(torch.ops, NAMESPACE)
    if owner == LABEL and all(hasattr(namespace, name) for name in SCHEMAS):
        return  # already loaded (e.g. this module imported under two names)
    taken = [name for name in SCHEMAS if hasattr(namespace, name)]
    if taken:
        raise ImportError(
            f"{{LABEL}}: attribute 'ops': {{', '.join(NAMESPACE + '::' + n for n in taken)}} "
            "is already registered in this process by something other than a "
            "triton_torch_library; give the library another namespace")
    _make_torch_symbols_global()
    torch.ops.load_library(LIBRARY)
    owners[NAMESPACE] = LABEL


_load()


def _fail(op, message):
    raise RuntimeError("{ns}::" + op + ": " + message)


# The expression language's cdiv, min, max, and, or, not: symbolic sizes stay symbolic.
def _cdiv(a, b):
    return (a + b - 1) // b


_min, _max, _not = torch.sym_min, torch.sym_max, torch.sym_not
_and, _or = sym_and, sym_or


def _check(op, condition, text):
    # Refuses what is false for these sizes. A symbolic condition is not guarded on (that would
    # specialize or constrain sizes torch.export and torch.compile keep dynamic): the op checks
    # it again at run time.
    if statically_known_false(condition):
        _fail(op, "check failed: " + text)


def _check_tensor(op, name, t, dtype, min_dim):
    if t.dtype != dtype:
        _fail(op, "argument '%s' must be %s, got %s" % (name, str(dtype).replace("torch.", ""),
                                                        str(t.dtype).replace("torch.", "")))
    if t.dim() < min_dim:
        _fail(op, "argument '%s' must have at least %d dimension(s), got %d" % (name, min_dim, t.dim()))

{fakes}
'''


def _py_fake(ns: str, op: Op) -> str:
    L = []
    w = L.append
    sig = ", ".join(a.name + (f"={a.default}" if a.default is not None else "") for a in op.args)
    w(f'@torch.library.register_fake("{ns}::{op.name}")')
    w(f"def _fake_{op.name}({sig}):")
    dtype_of = {}
    for b in op.bindings:
        if b.kind == "tensor":
            dtype_of.setdefault(b.tensor, b.dtype)
    for a in op.args:
        if a.kind == "Tensor":
            w(f"    _check_tensor({op.name!r}, {a.name!r}, {a.name}, torch.{DTYPES[dtype_of[a.name]][0]}, {op.min_dims.get(a.name, 0)})")
    for py, text in op.py_checks:
        w(f"    _check({op.name!r}, {py}, {text!r})")
    first = next(a.name for a in op.args if a.kind == "Tensor")
    outs = []
    for pname, elem, shape in op.outputs:
        if isinstance(shape, str):
            dims = f"{shape}.shape"
        else:
            dims = "(" + ", ".join(py for _, py in shape) + ("," if len(shape) == 1 else "") + ")"
        w(f"    _out_{pname} = {first}.new_empty({dims}, dtype=torch.{DTYPES[elem][0]})")
        outs.append(f"_out_{pname}")
    if not outs:
        w("    return None")
    elif len(outs) == 1:
        w(f"    return {outs[0]}")
    else:
        w(f"    return {', '.join(outs)}")
    return "\n".join(L) + "\n"


def render_py(ns: str, label: str, so: str, ops: list[Op]) -> str:
    names = ", ".join(op.name for op in ops)
    usage = "\n".join(f"    torch.ops.{ns}.{_schema(op)}" for op in ops)
    schemas = {op.name: f"{ns}::{_schema(op)}" for op in ops}
    from triton_aot.torch import torch_steps
    fakes = "\n\n".join(torch_steps.render_py_fake(ns, op) if isinstance(op, torch_steps.StepsOp)
                         else _py_fake(ns, op) for op in ops)
    # as a BUILD file of the main repository spells it (Bazel's str(label) is "@@//pkg:name")
    display_label = label[2:] if label.startswith("@@//") else label
    return PY_TEMPLATE.format(ns=ns, names=names, label=label, so=so, usage=usage, schemas=schemas,
                              display_label=display_label,
                              fakes=fakes)


# --- tool -----------------------------------------------------------------------------------


def generate(plan: dict) -> tuple[str, str]:
    ns = plan["namespace"]
    if not _IDENT.match(ns):
        raise UserError(f"namespace {ns!r} is not an identifier")
    from triton_aot.torch import torch_steps
    ops = [torch_steps.build(o["name"], o["spec"], o["steps"]) if o.get("steps")
           else build_op(o["name"], o["spec"], o["lib"]) for o in plan["ops"]]
    if not ops:
        raise UserError("ops: a torch library needs at least one op")
    py = render_py(ns, plan["label"], plan["so_name"], ops)
    check_python(py, plan["so_name"])
    return render_cc(ns, plan["label"], ops), py


def check_python(source: str, so_name: str) -> None:
    """Refuses to write a module Python cannot compile: the build fails, not the user's import.

    Every accepted declaration must render valid Python; a module that does not compile is a
    bug of this generator, reported as one line naming the module and the problem.
    """
    module = so_name.removeprefix("lib").removesuffix(".so") + ".py"
    try:
        compile(source, module, "exec")
    except SyntaxError as e:
        line = source.splitlines()[e.lineno - 1].strip() if e.lineno else ""
        raise RuntimeError(f"the generated {module} does not compile (a bug of the generator): "
                           f"line {e.lineno}: {e.msg}: {line}") from None


def define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("plan", None, "JSON: namespace, label, so_name and the ops (spec, library "
                        "description and include path).", flag_values=fv)
    flags.DEFINE_string("out_cc", None, "The C++ source to write.", flag_values=fv)
    flags.DEFINE_string("out_py", None, "The Python module to write.", flag_values=fv)


def _run(fv: flags.FlagValues, _: list[str]) -> None:
    cli.require(fv, "plan", "out_cc", "out_py")
    plan = json.loads(Path(fv.plan).read_text())
    try:
        cc, py = generate(plan)
    except UserError as e:
        raise UserError(f"{plan.get('label', '')}: {e.message}") from None
    Path(fv.out_cc).write_text(cc)
    Path(fv.out_py).write_text(py)


TOOL = cli.Tool(module="triton_aot.torch.torch_ops",
                usage="python -m triton_aot.torch.torch_ops --plan=P.json --out_cc=F.cc --out_py=F.py",
                define_flags=define_flags, run=_run)

if __name__ == "__main__":
    sys.exit(cli.main(TOOL))
