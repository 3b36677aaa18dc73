"""The torch op of a captured launcher: `triton_torch_op` attributes from the same record.

The op's schema is the launcher's: its tensors, then the float arguments that reach a kernel
(sizes are read off the tensors, so they stay symbolic under torch.export). Every kernel
argument is bound to what the launcher passed: an input tensor, a tensor it allocated (an
output of the op, shaped as the launcher returns it), a float argument, or an expression of the
inputs' sizes and strides (a dynamic size is `X.size(d)` of the first input that has it; a
constant is written as the first static size or stride of an input that equals it in every
example call, else as the literal).

What the examples fixed becomes conditions: ranks and static sizes of the inputs, the strides of
inputs that were not dense and that no binding reads, and the size guards of the launcher's
branches. With one algo they are checks (a call outside them is refused); with several, each
example call's conditions choose its algo at run time (`algo_choice`), and a call that no
example covers is refused with one error naming the op.
"""

from __future__ import annotations

import re
from typing import Any

from triton_aot.capture.declaration import Declaration
from triton_aot.capture.record import CallCapture
from triton_aot.errors import UserError

_NAME = re.compile(r"[A-Za-z_]\w*")
_FUNCTIONS = ("cdiv", "min", "max")


class _Sizes:
    """The size names of the examples written as sizes of the inputs."""

    def __init__(self, call: CallCapture) -> None:
        self.of: dict[str, str] = {}
        self.same: list[str] = []  # a dynamic size that several inputs share
        for t in call.tensors:
            for d, size in enumerate(t.sizes):
                if _NAME.fullmatch(size):
                    if size in self.of:
                        self.same.append(f"{t.name}.size({d}) == {self.of[size]}")
                    else:
                        self.of[size] = f"{t.name}.size({d})"

    def text(self, expr: str, what: str) -> str:
        def name(m: re.Match) -> str:
            word = m.group(0)
            if word in _FUNCTIONS:
                return word
            if word not in self.of:
                raise UserError(f"{what}: the size {word} is no size of a tensor argument of the "
                                "launcher; the op can only read sizes off its tensors")
            return self.of[word]
        return _NAME.sub(name, expr)


def _value_in(call: CallCapture, expr: str) -> int | None:
    """The static value of `t.size(d)` / `t.stride(d)` in this call, None when dynamic."""
    m = re.fullmatch(r"(\w+)\.(size|stride)\((\d+)\)", expr)
    for t in call.tensors:
        if t.name == m.group(1):
            values = t.sizes if m.group(2) == "size" else t.strides
            d = int(m.group(3))
            return int(values[d]) if d < len(values) and values[d].isdigit() else None
    return None


def _conditions(call: CallCapture, sizes: _Sizes, read: set[str], what: str) -> list[str]:
    out = []
    for t in call.tensors:
        out.append(f"{t.name}.dim() == {len(t.sizes)}")
        for d, size in enumerate(t.sizes):
            if size.isdigit():
                out.append(f"{t.name}.size({d}) == {size}")
        if not t.contiguous:
            for d, stride in enumerate(t.strides):
                if f"{t.name}.stride({d})" not in read:
                    out.append(f"{t.name}.stride({d}) == {sizes.text(stride, what)}")
    out += sizes.same
    out += [sizes.text(g, what) for g in call.guards]
    return out


def declare_op(decl: Declaration, calls: list[CallCapture], what: str) -> dict[str, Any] | None:
    """`triton_torch_op` attributes (lib as the library's name) for a launcher whose every
    example call makes one launch of one library; None otherwise (several launches)."""
    if any(len(c.launches) != 1 for c in calls):
        return None
    libs = {launches[0][0] for _, launches, _ in decl.calls}
    if len(libs) != 1:
        return None
    lib = next(iter(libs))
    first = calls[0]
    sizes = _Sizes(first)
    candidates = [f"{t.name}.size({d})" for t in first.tensors for d in range(len(t.sizes))]
    candidates += [f"{t.name}.stride({d})" for t in first.tensors for d in range(len(t.strides))]
    bind: dict[str, str] = {}
    outputs: dict[str, str] = {}
    floats: list[str] = []
    launch = first.launches[0]
    for i, a in enumerate(launch.arguments):
        per_call = [c.launches[0].arguments[i] for c in calls]
        if a.kind in ("constexpr", "none"):
            continue
        if a.kind == "pointer":
            if not a.source:
                raise UserError(f"{what}: {launch.site}: {a.name} points into a tensor at an "
                                "offset the launcher computed; the op binds pointers to whole "
                                "tensors (pass the view to the launcher instead)")
            kind, _, ref = a.source.partition(":")
            if kind == "input":
                bind[a.name] = ref
            else:
                alloc = first.allocations[int(ref)]
                outputs[a.name] = ", ".join(sizes.text(s, what) for s in alloc.sizes)
        elif a.kind == "float":
            if a.source:
                name = a.source.partition(":")[2]
                bind[a.name] = name
                if name not in floats:
                    floats.append(name)
            else:
                bind[a.name] = repr(float(a.value))
        elif a.kind == "bool":
            raise UserError(f"{what}: {launch.site}: {a.name} is a runtime bool; torch ops take "
                            "no bool kernel arguments yet: make it a constexpr")
        else:
            bind[a.name] = _int_binding(a, per_call, calls, candidates, sizes, what, launch.site)
    # launch arguments: the size names the grid reads
    for spec in (l for l in decl.libraries if l.name == lib):
        for la in spec.launch_args:
            name = la.partition(":")[0].strip()
            bind[name] = sizes.text(name, what)
    read = {m.group(0) for v in bind.values() for m in re.finditer(r"\w+\.stride\(\d+\)", v)}
    per_call_conditions = [_conditions(c, _Sizes(c), read, what) for c in calls]
    common = [c for c in per_call_conditions[0] if all(c in p for p in per_call_conditions)]
    choice_of = {}
    for (text, launches, _), conditions in zip(decl.calls, per_call_conditions):
        own = [c for c in conditions if c not in common]
        choice_of.setdefault(" and ".join(own) or "True", launches[0][1])
    library = next(l for l in decl.libraries if l.name == lib)
    op: dict[str, Any] = {
        "lib": lib,
        "args": [t.name for t in first.tensors] + [f"{f}: float" for f in floats],
        "bind": bind,
        "checks": common,
        "contiguous": [t.name for t in first.tensors
                       if all(next(x for x in c.tensors if x.name == t.name).contiguous
                              for c in calls)],
    }
    if outputs:
        op["outputs"] = outputs
    else:  # an op that allocates nothing writes into inputs: those the launcher hands back
        mutated = [t.name for t in first.tensors if t.name in first.returned_inputs]
        if mutated:
            op["mutates"] = mutated
    if len(library.algos) > 1:
        op["algo_choice"] = [[cond, str(algo)] for cond, algo in choice_of.items()]
    elif len(choice_of) > 1:
        op["checks"].append(" or ".join(f"({c})" for c in choice_of))
    elif "True" not in choice_of:
        op["checks"] += next(iter(choice_of)).split(" and ")
    return op


def _int_binding(a, per_call, calls, candidates, sizes, what, site) -> str:
    exprs = {p.expr for p in per_call}
    if any(exprs) and len(exprs) == 1:
        return sizes.text(a.expr, what)
    values = [p.value for p in per_call]
    if all(not p.expr for p in per_call):
        if all(v in (0, 1) for v in values) and len(set(values)) == 1:
            return str(values[0])
        for cand in candidates:
            if all(_value_in(c, cand) == v for c, v in zip(calls, values)):
                return cand
        if len(set(values)) == 1:
            return str(values[0])
    raise UserError(f"{what}: {site}: {a.name} is {', '.join(map(str, values))} in the example "
                    "calls, which no one expression of the inputs' sizes gives; make the sizes "
                    "it depends on static in every call, or capture the calls separately")
