"""Composite ops: a captured launcher's torch work replayed around one primitive op per launch.

A launcher that computes with torch (triton_aot.capture.composite writes its `composite`
attribute) becomes:

- one primitive op per launch, `NAME__K` (an ordinary op of triton_aot.torch.binding over the
  tensors its kernel gets: `Tensor(a!)` those it stores to, returning nothing), registered in
  the C++ source with its fake in the Python module;
- the op `NAME` itself: its schema is defined in the C++ source, and the Python module
  registers its implementation as CompositeImplicitAutograd: the launcher's aten calls replayed
  through `torch.ops.aten.*` and the primitive ops called where the launcher launched. Eager
  mode computes what the launcher computes; torch.compile, torch.export and AOTInductor trace
  through it and see aten ops and the primitive kernel ops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from triton_aot.contract.op_record import OpRecord
from triton_aot.core.errors import UserError
from triton_aot.torch.binding import Op, build_op
from triton_aot.torch.expression import Expr
from triton_aot.torch.fake import py_fake
from triton_aot.torch.schema import DTYPES, Arg, parse_args

_TORCH_DTYPES = {torch_name for torch_name, _ in DTYPES.values()}


@dataclass
class CompositeOp:
    name: str
    args: list[Arg]
    mutates: list[str]
    outputs: list  # one entry per returned tensor (the schema's count)
    checks: list[tuple[str, str]]  # (Python condition, text)
    dtypes: dict[str, str]  # tensor argument -> torch dtype name
    graph: list[dict]
    result: Any
    launches: list[Op]  # NAME__K, one per launch

    @property
    def includes(self) -> set[str]:
        return {p.include for p in self.launches}


def build(name: str, spec: OpRecord, libs: list[dict]) -> CompositeOp:
    args = parse_args(name, [a.text for a in spec.args])
    composite = spec.composite
    by_name = {a.name: a for a in args}
    tensors = {a.name for a in args if a.kind == "Tensor"}
    prims = [build_op(f"{name}__{k}", launch, lib)
             for k, (launch, lib) in enumerate(zip(composite.launches, libs))]
    checks = [(Expr(name, "checks", text, by_name, tensors, boolean=True).py, text)
              for text in spec.checks]
    mutates = list(spec.mutates)
    for m in mutates:
        if m not in tensors:
            raise UserError(f"op {name!r}: mutates: {m!r} is not a tensor argument")
    dtypes = dict(composite.dtypes)
    for t, dtype in dtypes.items():
        if t not in tensors or dtype not in _TORCH_DTYPES:
            raise UserError(f"op {name!r}: composite dtypes: {t!r}: {dtype!r} is not a tensor "
                            "argument and a dtype")
    result = composite.result
    outputs = [] if result is None else [result] if isinstance(result, dict) else list(result)
    op = CompositeOp(name, args, mutates, outputs, checks, dtypes, list(composite.graph), result,
                     prims)
    _Renderer(op, "").body()  # every reference resolves: refused at build time, not at import
    return op


class _Renderer:
    def __init__(self, op: CompositeOp, ns: str) -> None:
        self.op, self.ns = op, ns
        self.by_name = {a.name: a for a in op.args}
        self.tensors = {a.name for a in op.args if a.kind == "Tensor"}

    def value(self, v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            if "input" in v and v["input"] in self.by_name:
                return v["input"]
            if "node" in v:
                return f"_v{int(v['node'])}" + (f"[{int(v['item'])}]" if "item" in v else "")
            if "size" in v:
                return Expr(self.op.name, "a size of the graph", v["size"], self.by_name,
                            self.tensors).py
            if "float" in v and v["float"] in self.by_name:
                return v["float"]
            if v.get("dtype") in _TORCH_DTYPES:
                return f"torch.{v['dtype']}"
            if v == {"device": "input"}:
                return "_device"
            if v.get("layout") in ("strided",):
                return f"torch.{v['layout']}"
            if v.get("memory_format") in ("contiguous_format", "preserve_format",
                                          "channels_last", "channels_last_3d"):
                return f"torch.{v['memory_format']}"
            if v.get("scalar") in ("inf", "-inf", "nan"):
                return f"float({v['scalar']!r})"
            raise UserError(f"op {self.op.name!r}: composite: the reference {v!r} names nothing "
                            "the op has")
        if isinstance(v, float) and not math.isfinite(v):
            return f"float({repr(v)!r})"
        if v is None or isinstance(v, (bool, int, float, str)):
            return repr(v)
        raise UserError(f"op {self.op.name!r}: composite: {v!r} is no value")

    def constant(self, values: Any, dtype: str) -> str:
        """A tensor of `values` made with aten ops (torch.tensor would be a host tensor to
        copy, which torch.compile's tracing of the composite cannot lift)."""
        shape, flat = _shape_and_values(values)
        where = f"dtype=torch.{dtype}, device=_device"
        texts = [self.value(v) for v in flat]
        if len(set(texts)) <= 1:
            return f"torch.ops.aten.full.default({shape!r}, {texts[0] if texts else 0}, {where})"
        items = ", ".join(f"torch.ops.aten.scalar_tensor.default({t}, {where})" for t in texts)
        return f"torch.ops.aten.view.default(torch.ops.aten.stack.default([{items}]), {shape!r})"

    def body(self) -> list[str]:
        op = self.op
        first = next(a.name for a in op.args if a.kind == "Tensor")
        L = [f"    _device = {first}.device"]
        for t, dtype in op.dtypes.items():
            L.append(f"    _check_tensor({op.name!r}, {t!r}, {t}, torch.{dtype}, 0)")
        for py, text in op.checks:
            message = f"{self.ns}::{op.name}: check failed: {text}"
            L.append(f"    torch._check({py}, lambda: {message!r})")
        launch = 0
        for i, node in enumerate(op.graph):
            if "call" in node:
                parts = node["call"].split(".")
                if len(parts) != 3 or parts[0] != "aten" or not all(p.isidentifier() for p in parts):
                    raise UserError(f"op {op.name!r}: composite: {node['call']!r} is no aten op")
                args = [self.value(a) for a in node.get("args") or []]
                args += [f"{k}={self.value(v)}" for k, v in (node.get("kwargs") or {}).items()]
                L.append(f"    _v{i} = torch.ops.{node['call']}({', '.join(args)})")
            elif "constant" in node:
                if node.get("dtype") not in _TORCH_DTYPES:
                    raise UserError(f"op {op.name!r}: composite: constant of dtype "
                                    f"{node.get('dtype')!r}")
                L.append(f"    _v{i} = {self.constant(node['constant'], node['dtype'])}")
            elif "launch" in node:
                if launch >= len(op.launches):
                    raise UserError(f"op {op.name!r}: composite: more launches in the graph "
                                    "than in `launches`")
                prim = op.launches[launch]
                args = [self.value(a) for a in node.get("args") or []]
                args += [self.value({"float": f}) for f in node.get("floats") or []]
                if len(args) != len(prim.args):
                    raise UserError(f"op {op.name!r}: composite: launch {launch} passes "
                                    f"{len(args)} arguments to {prim.name}, which takes "
                                    f"{len(prim.args)}")
                L.append(f"    torch.ops.{self.ns or 'NS'}.{prim.name}({', '.join(args)})"
                         f"  # {node['launch']}")
                launch += 1
            else:
                raise UserError(f"op {op.name!r}: composite: graph entry {i} is no call, "
                                "constant or launch")
        if op.result is None:
            L.append("    return None")
        elif isinstance(op.result, dict):
            L.append(f"    return {self.value(op.result)}")
        else:
            L.append(f"    return ({', '.join(self.value(r) for r in op.result)},)")
        return L


def render_py(ns: str, op: CompositeOp) -> str:
    """The primitive ops' fakes and the composite's implementation (registered by the module's
    `_register_composites`)."""
    out = [py_fake(ns, p) for p in op.launches]
    sig = ", ".join(a.name + (f"={a.default}" if a.default is not None else "") for a in op.args)
    L = [f"def _composite_{op.name}({sig}):",
         f'    """{ns}::{op.name}: the launcher\'s torch calls and its launches, in order."""']
    L += _Renderer(op, ns).body()
    out.append("\n".join(L) + "\n")
    return "\n\n".join(out)


def _shape_and_values(values: Any) -> tuple[list[int], list]:
    """[[1, 2], [3, 4]] -> ([2, 2], [1, 2, 3, 4])."""
    if not isinstance(values, list):
        return [], [values]
    if not values:
        return [0], []
    inner = [_shape_and_values(v) for v in values]
    return [len(values)] + inner[0][0], [x for _, flat in inner for x in flat]


REGISTER = '''

_COMPOSITES = {{{entries}}}


def _register_composites():
    # CompositeImplicitAutograd: eager mode runs the torch calls and the primitive kernel ops,
    # and torch.compile, torch.export and AOTInductor trace through them. Registered once per
    # process (this module imported under two names registers nothing the second time).
    done = sys.__dict__.setdefault("_rules_triton_torch_composites", {{}})
    if NAMESPACE in done:
        return
    library = torch.library.Library(NAMESPACE, "IMPL")
    for name, fn in _COMPOSITES.items():
        library.impl(name, fn, "CompositeImplicitAutograd")
    done[NAMESPACE] = library


_register_composites()
'''


def render_register(ops: list[CompositeOp]) -> str:
    return REGISTER.format(entries=", ".join(f"{op.name!r}: _composite_{op.name}" for op in ops))
