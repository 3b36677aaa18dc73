"""The op of a launcher that computes with torch: a composite over one primitive op per launch.

The launcher's graph (triton_aot.capture.torch_graph) becomes `OP["composite"]`: the aten calls
the op replays, with every size written over the op's inputs (`x.size(0)`), and per launch the
attributes of a primitive op (triton_aot.capture.op's one-launch op, whose arguments are the
tensors the kernel gets: `Tensor(a!)` those it stores to, returning nothing). The torch stage
registers each launch as its own op and the composite as CompositeImplicitAutograd, so eager
mode runs the launcher's torch calls and torch.compile, torch.export and AOTInductor see aten
ops and the primitive kernel ops.

Every tensor argument of the launcher is an input of the op (also one read only through
torch), the op returns what the launcher returns, and the inputs a kernel or a torch call writes
are `Tensor(a!)`. The example calls must do the same torch work (the same calls over the same
size expressions); the kernels' algos are chosen per launch as the one-launch ops choose them.
"""

from __future__ import annotations

import dataclasses
import keyword
from typing import Any

from triton_aot.capture import op as one_launch
from triton_aot.capture.declaration import Declaration
from triton_aot.capture.record import Argument, CallCapture, TensorInput, TorchCall
from triton_aot.core.errors import UserError


def declare_op(decl: Declaration, calls: list[CallCapture], what: str) -> dict[str, Any]:
    """The composite op's attributes (`triton_torch_op(args, checks, mutates, composite)`)."""
    return declare(decl, calls, what, one_launch.renames(calls))


def declare(decl: Declaration, calls: list[CallCapture], what: str,
            names: dict[str, str]) -> dict[str, Any]:
    """The composite op's attributes; `names` renames the launcher's arguments the op cannot
    take (`out` -> `out_arg`)."""
    first = calls[0]
    plain = next((c for c in calls if not c.graph), None)
    if plain is not None:
        raise UserError(f"{what}: example call {plain.call!r} does no torch work, while "
                        f"{next(c.call for c in calls if c.graph)!r} does ({first.torch_work}); "
                        "one op does one launcher's work: capture them separately")
    for c in calls[1:]:
        _same_work(first, c, what)
    sizes = one_launch._Sizes(first)
    for c in calls[1:]:
        if one_launch._Sizes(c).of != sizes.of:
            raise UserError(f"{what}: example call {c.call!r} gives the dynamic sizes in other "
                            f"places than {first.call!r}; one op reads each size off one input")
    rename = lambda n: names.get(n, n)  # noqa: E731
    floats: list[str] = []
    launches = []
    for k in range(len(first.launches)):
        launches.append(_launch(decl, calls, k, floats, what))
    graph = [_node(g, sizes, rename, floats, what) for g in first.graph]
    for node, spec in zip((n for n in graph if "launch" in n), launches):
        node["floats"] = [rename(a.partition(":")[0]) for a in spec["args"] if ":" in a]
    inputs = [t.name for t in first.tensors]
    read = {f"{t.name}.stride({d})" for t in first.tensors for d in range(len(t.strides))}
    per_call = [one_launch._conditions(c, one_launch._Sizes(c), read, what) for c in calls]
    checks = [c for c in per_call[0] if all(c in p for p in per_call)]
    own = [" and ".join(c for c in p if c not in checks) for p in per_call]
    if any(own) and len(set(own)) > 1:
        checks.append(" or ".join(f"({o or 'True'})" for o in dict.fromkeys(own)))
    elif any(own):
        checks += own[0].split(" and ")
    op = {
        "args": [rename(t) for t in inputs] + [f"{rename(f)}: float" for f in floats],
        "checks": [one_launch._renamed(c, names) if names else c for c in checks],
        "composite": {
            "dtypes": {rename(t.name): t.dtype for t in first.tensors},
            "graph": graph,
            "result": _refs(first.result, sizes, rename, floats, what),
            "launches": launches,
            "torch_work": first.torch_work,
        },
    }
    mutated = [rename(t) for t in inputs if any(t in c.mutated for c in calls)]
    if mutated:
        op["mutates"] = mutated
    return op


def _same_work(first: CallCapture, other: CallCapture, what: str) -> None:
    def shape(g: TorchCall) -> tuple:
        return (g.kind, g.op, repr(g.args), repr(sorted(g.kwargs.items())))
    for a, b in zip(first.graph, other.graph):
        if shape(a) != shape(b):
            raise UserError(
                f"{what}: {b.site}: example call {other.call!r} calls {b.op} with other arguments "
                f"than {first.call!r} ({a.op} at {a.site}); the op replays one sequence of torch "
                "calls: give the calls the same torch work (sizes named in `sizes`), or capture "
                "them separately")
    if len(first.graph) != len(other.graph) or repr(first.result) != repr(other.result):
        raise UserError(f"{what}: example calls {first.call!r} and {other.call!r} do different "
                        "torch work (in number of calls or in what they return); the op replays "
                        "one sequence: capture them separately")


def _refs(value: Any, sizes: one_launch._Sizes, rename, floats: list[str], what: str) -> Any:
    """A recorded argument with its sizes written over the op's inputs."""
    if isinstance(value, list):
        return [_refs(v, sizes, rename, floats, what) for v in value]
    if isinstance(value, dict):
        if "input" in value:
            return {"input": rename(value["input"])}
        if "size" in value:
            return {"size": sizes.text(value["size"], what)}
        if "float" in value:
            if value["float"] not in floats:
                floats.append(value["float"])
            return {"float": rename(value["float"])}
    return value


def _node(g: TorchCall, sizes, rename, floats: list[str], what: str) -> dict[str, Any]:
    refs = lambda v: _refs(v, sizes, rename, floats, what)  # noqa: E731
    if g.kind == "constant":
        return {"constant": g.args[0], "dtype": g.args[1]}
    if g.kind == "launch":
        return {"launch": g.op, "args": _distinct([refs(a) for a in g.args])}
    return {"call": g.op, "args": refs(list(g.args)),
            "kwargs": {k: refs(v) for k, v in g.kwargs.items()}}


def _distinct(refs: list) -> list:
    out = []
    for r in refs:
        if r not in out:
            out.append(r)
    return out


def _arg_name(param: str) -> str:
    """A kernel parameter as an argument name of the primitive op."""
    if keyword.iskeyword(param) or param in one_launch._RESERVED or param.startswith("_"):
        return "p" + param if param.startswith("_") else param + "_arg"
    return param


def _launch(decl: Declaration, calls: list[CallCapture], k: int, floats: list[str],
            what: str) -> dict[str, Any]:
    """The primitive op of launch k: its arguments are the tensors the kernel gets (one per
    distinct tensor, named by its first pointer parameter), then the floats it takes."""
    views = []
    for c in calls:
        node = [g for g in c.graph if g.kind == "launch"][k]
        names: dict[str, str] = {}  # reference -> argument name
        by_param: dict[str, str] = {}
        tensors: list[TensorInput] = []
        for ref, t in zip(node.args, node.tensors):
            key = repr(ref)
            if key not in names:
                names[key] = _arg_name(t.name)
                tensors.append(dataclasses.replace(t, name=names[key]))
            by_param[t.name] = names[key]
        launch = c.launches[k]
        arguments = tuple(dataclasses.replace(a, source=f"input:{by_param[a.name]}")
                          if a.kind == "pointer" else a for a in launch.arguments)
        launches = list(c.launches)
        launches[k] = dataclasses.replace(launch, arguments=arguments)
        views.append((dataclasses.replace(c, tensors=tuple(tensors), launches=tuple(launches)),
                      by_param))
    lib = decl.calls[0][1][k][0]
    step_floats: list[str] = []
    spec = one_launch._step_op(decl, [v for v, _ in views], k, lib, step_floats, {}, what)
    for f in step_floats:
        if f not in floats:
            floats.append(f)
    call, by_param = views[0]
    writes = calls[0].launches[k].writes
    spec["args"] = [t.name for t in call.tensors] + [f"{f}: float" for f in step_floats]
    mutated = [n for n in (t.name for t in call.tensors)
               if any(by_param[p] == n for p in writes if p in by_param)]
    if mutated:
        spec["mutates"] = mutated
    return spec
