"""Binding of kernel arguments: one op's C entry point bound to tensor-level arguments.

For each op it reads the kernel library's description (triton_aot.contract.library: the C
functions `NAME`, `NAME_default`, `NAME_auto` with their parameters' C and signature types, and
the hint pattern of each specialization) and binds every C parameter to an expression over the
op's arguments: a pointer to an input tensor or to an output it allocates, a scalar to an
expression (triton_aot.torch.expression). The result, `Op`, is what the C++ and the fake render.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Optional

from triton_aot.contract import library
from triton_aot.contract.op_record import LaunchOp
from triton_aot.core.arg_type import ArgType
from triton_aot.core.op_expression import split_top
from triton_aot.torch.expression import Expr
from triton_aot.torch.schema import (DTYPES, FLOAT_CTYPES, IDENT, INT_RANGES, Arg, fail,
                                     parse_args)

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
    # output parameter -> the constant the op fills it with before the call (else uninitialised)
    fills: dict[str, float] = field(default_factory=dict)


@dataclass
class _Entry:
    """The C function an op calls and its parameters (stream and algo id left out)."""
    c_name: str
    kind: str  # "auto", "default" or "algo"
    name: str
    params: list[CParam]
    types: dict[str, ArgType | None]  # kernel parameter -> signature type
    hint_sets: list[list[tuple[str, int]]]
    algo_arg: bool
    choice: list


def _entry(name: str, spec: LaunchOp, description) -> _Entry:
    c_name = description.name
    for p in description.function("default").params:
        if p.type is not None and p.type.is_tensordesc:
            raise fail(name, f"{c_name} takes a tensor descriptor ({p.kernel_param}); torch ops "
                             "over tensordesc parameters are not supported yet")
    choice = list(spec.algo_choice)
    kind = spec.entry or ("algo" if choice else "auto" if description.function("auto")
                                 else "default")
    if choice and kind != "algo":
        raise fail(name, "algo_choice: the op chooses the algo, so entry must be 'algo' or unset")
    entry = {"auto": f"{c_name}_auto", "default": f"{c_name}_default", "algo": c_name}.get(kind)
    if entry is None:
        raise fail(name, f"entry: {kind!r} is not 'auto', 'default' or 'algo'")
    function = description.function(kind)
    if function is None:
        raise fail(name, f"entry: {c_name} has no {entry}() (entry = {kind!r}); "
                         f"it has {', '.join(f.name for f in description.functions)}")
    # The header spells a parameter C cannot use as it is (CU_SEQLENS, int) trt_ + the name
    # (abi.c_param_name); the op's declaration uses the kernel's own names.
    params = [CParam(p.c_type, p.kernel_param or p.name) for p in function.params]
    types = {p.kernel_param: p.type for p in function.params if p.kernel_param}
    if not params or params[0].ctype != "CUstream":
        raise fail(name, f"{entry}() does not take a CUstream first (a HIP library?); torch ops "
                         "are CUDA only")
    params = params[1:]
    if kind == "algo":
        params = params[:-1]  # int algo_id: an op argument of its own, or chosen
    return _Entry(c_name, kind, entry, params, types,
                  [list(pattern) for pattern in description.specializations],
                  kind == "algo" and not choice, choice)


def _with_algo_arg(name: str, args: list[Arg]) -> list[Arg]:
    if "algo_id" in [a.name for a in args]:
        raise fail(name, "attribute 'args': 'algo_id' is added by entry = 'algo': rename the "
                         "argument")
    # Positional and required: after the arguments without a default, before those with
    # one. A static int: an algo is chosen, never a size.
    at = next((i for i, a in enumerate(args) if a.default is not None), len(args))
    return args[:at] + [Arg("algo_id", "int", static=True)] + args[at:]


class _Binder:
    """Binds the entry's parameters one by one, noting what the expressions read."""

    def __init__(self, name: str, entry: _Entry, args: list[Arg], spec: LaunchOp) -> None:
        self.name, self.entry = name, entry
        self.argmap = {a.name: a for a in args}
        self.tensors = {a.name for a in args if a.kind == "Tensor"}
        self.outputs_spec: dict[str, str] = dict(spec.outputs)
        self.bind: dict[str, str] = dict(spec.bind)
        self.dims: dict[str, int] = {}
        self.strided: set[str] = set()
        self.bindings: list[Binding] = []
        self.outputs: list = []
        self.used: set[str] = set()
        for out in self.outputs_spec:
            if out in self.argmap:
                raise fail(name, f"outputs: {out!r} is also an argument of the op")
        param_names = [p.name for p in entry.params]
        for key in list(self.bind) + list(self.outputs_spec):
            if key not in param_names:
                raise fail(name, f"{'bind' if key in self.bind else 'outputs'}: {key!r} is not a "
                                 f"parameter of {entry.name}() ({', '.join(param_names)})")
        for p in entry.params:
            if p.name in self.outputs_spec and p.ctype != "CUdeviceptr":
                # outputs are the tensors the op allocates: only a pointer parameter can be one
                raise fail(name, f"outputs: {p.name!r} is a scalar parameter ({p.ctype}) of "
                                 f"{entry.name}(), not a pointer; outputs names the pointer "
                                 f"parameters the op allocates and returns: remove {p.name!r} "
                                 f"from outputs and give its value with bind = "
                                 f"{{\"{p.name}\": \"EXPRESSION\"}} or an argument {p.name!r}")

    def expr(self, what: str, text: str, boolean: bool = False) -> Expr:
        e = Expr(self.name, what, text, self.argmap, self.tensors, boolean)
        for t, d in e.dims.items():
            self.dims[t] = max(self.dims.get(t, 0), d)
        self.strided.update(e.strided)
        return e

    def param(self, p: CParam) -> None:
        if p.ctype == "CUdeviceptr":
            ttype = self.entry.types.get(p.name)
            # Triton's const pointer (*kfp16) stays refused: no torch op is tested over one yet
            elem = ttype.elem if ttype is not None and ttype.is_pointer and not ttype.const else ""
            if elem not in DTYPES:
                raise fail(self.name, f"{p.name} has type {(ttype or '')!r}, which has no torch "
                                      "dtype")
            if p.name in self.outputs_spec:
                self.output(p, elem)
            else:
                self.pointer(p, elem)
        elif p.ctype in INT_RANGES or p.ctype in FLOAT_CTYPES or p.ctype == "bool":
            self.scalar(p)
        else:
            raise fail(self.name, f"parameter {p.name!r} of {self.entry.name}() has C type "
                                  f"{p.ctype!r}, which torch ops do not support yet")

    def fills(self, spec: LaunchOp) -> dict[str, float]:
        """`fills`: output parameter -> the constant the op fills it with."""
        out = {}
        for key, text in spec.fills.items():
            if key not in self.outputs_spec:
                raise fail(self.name, f"fills: {key!r} is not an output of the op")
            try:
                out[key] = float(text)
            except (TypeError, ValueError):
                out[key] = math.nan  # refused below
            if not math.isfinite(out[key]):
                raise fail(self.name, f"fills[{key!r}]: {text!r} is not a finite number")
        return out

    def output(self, p: CParam, elem: str) -> None:
        name = self.name
        shape_text = self.outputs_spec[p.name].strip()
        like = re.match(r"^([A-Za-z_]\w*)\.shape$", shape_text)
        if like:
            if like.group(1) not in self.tensors:
                raise fail(name, f"outputs[{p.name!r}]: {like.group(1)!r} is not a tensor argument")
            self.outputs.append((p.name, elem, like.group(1)))
        else:
            shape = [self.expr(f"outputs[{p.name!r}]", s) for s in split_top(shape_text)]
            if not shape:
                raise fail(name, f"outputs[{p.name!r}]: the shape is empty (write \"x.shape\" or "
                                 "sizes such as \"x.size(0), 4\")")
            self.outputs.append((p.name, elem, [(s.cc, s.py) for s in shape]))
        self.bindings.append(Binding(p, "output", tensor=p.name, dtype=elem, text=p.name))

    def pointer(self, p: CParam, elem: str) -> None:
        tensors, name = self.tensors, self.name
        target = self.bind.get(p.name)
        if target is None:
            base = re.sub(r"(_ptr|_PTR|Ptr|_p)$", "", p.name)
            target = p.name if p.name in tensors else base if base in tensors else None
            if target is None:
                raise fail(name, f"pointer parameter {p.name!r} of {self.entry.name}() is bound "
                                 f"to no tensor: add bind = {{\"{p.name}\": \"TENSOR\"}} or "
                                 f"outputs = {{\"{p.name}\": \"SHAPE\"}}")
        if target not in tensors:
            raise fail(name, f"bind[{p.name!r}]: {target!r} is not a tensor argument "
                             f"({', '.join(sorted(tensors)) or 'none'})")
        self.used.add(target)
        self.bindings.append(Binding(p, "tensor", tensor=target, dtype=elem, text=target))

    def scalar(self, p: CParam) -> None:
        text = self.bind.get(p.name)
        if text is None:
            if p.name in self.argmap and self.argmap[p.name].kind != "Tensor":
                text = p.name
            else:
                raise fail(self.name, f"parameter {p.name!r} ({p.ctype}) of {self.entry.name}() "
                                      f"is bound to nothing: add bind = {{\"{p.name}\": "
                                      f"\"EXPRESSION\"}} (e.g. \"x.size(0)\") or an argument "
                                      f"{p.name!r}")
        e = self.expr(f"bind[{p.name!r}]", text)
        kind = "float" if p.ctype in FLOAT_CTYPES else "int"
        self.bindings.append(Binding(p, kind, cc=e.cc, text=text))
        if isinstance(ast.parse(text.strip(), mode="eval").body, ast.Name):
            self.used.add(text.strip())


def _tensor_lists(name: str, spec: LaunchOp, b: _Binder) -> tuple[list[str], list[str]]:
    """`mutates` and `contiguous` (default: every tensor whose strides no expression reads)."""
    mutates = list(spec.mutates)
    for m in mutates:
        if m not in b.tensors:
            raise fail(name, f"mutates: {m!r} is not a tensor argument")
    contiguous = None if spec.contiguous is None else list(spec.contiguous)
    if contiguous is None:
        contiguous = sorted(t for t in b.tensors if t not in b.strided)
    for t in contiguous:
        if t not in b.tensors:
            raise fail(name, f"contiguous: {t!r} is not a tensor argument")
    return mutates, contiguous


def build_op(name: str, spec: LaunchOp, lib: dict) -> Op:
    """Binds one op's C entry point to tensor-level arguments; UserError when it cannot."""
    if not IDENT.match(name):
        raise fail(name, "an op name is an identifier")
    entry = _entry(name, spec, library.read_library(lib["description"]))
    args = parse_args(name, [a.text for a in spec.args])
    if entry.algo_arg:
        args = _with_algo_arg(name, args)
    b = _Binder(name, entry, args, spec)
    for p in entry.params:
        b.param(p)
    checks, py_checks = [], []
    for text in spec.checks:
        e = b.expr("checks", text, boolean=True)
        checks.append((e.cc, text))
        py_checks.append((e.py, text))
    for t in b.tensors:
        if t not in b.used:
            raise fail(name, f"tensor argument {t!r} is passed to no pointer parameter of "
                             f"{entry.name}()")
    mutates, contiguous = _tensor_lists(name, spec, b)
    algo_choice = []
    for text, algo in entry.choice:
        cc = "true" if text.strip() == "True" else b.expr("algo_choice", text, boolean=True).cc
        algo_choice.append((cc, text, int(algo)))
    dims = {t: d for t, d in b.dims.items() if t in b.tensors}  # outputs: the shapes given
    return Op(name=name, lib=entry.c_name, entry=entry.name, include=lib["include"], args=args,
              outputs=b.outputs, bindings=b.bindings, checks=checks, min_dims=dims,
              contiguous=contiguous, mutates=mutates, hint_sets=entry.hint_sets,
              algo_arg=entry.algo_arg, py_checks=py_checks, algo_choice=algo_choice,
              fills=b.fills(spec))
