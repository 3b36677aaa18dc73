"""Torch ops over several launches: one op that runs a captured launcher's every launch.

A launcher such as a two-stage decode attention (a partial kernel, then a reduction) or a kernel
followed by a reduction makes several launches and hands back what the last ones wrote. Its op
(`triton_torch_op(steps = [...], returns = [...])`, written by triton_aot.capture) is one
schema over the launcher's arguments; each step is an ordinary op (triton_aot.torch.binding: its
checks, bindings, allocations and C API call), generated as a static function that is not
registered, and the op calls them in order, passing the tensors earlier steps allocated to the
later ones, and returns the tensors the launcher returned. The fake implementation chains the
steps' fakes the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from triton_aot.contract.op_record import OpRecord
from triton_aot.core.errors import UserError
from triton_aot.torch.binding import build_op
from triton_aot.torch.cc import cc_op
from triton_aot.torch.fake import py_fake
from triton_aot.torch.schema import SCALAR_KINDS, parse_args, schema


@dataclass
class StepsOp:
    name: str
    args: list  # schema.Arg, the op's schema
    steps: list  # binding.Op, one per launch, named NAME__i
    returns: list[tuple[int, str]]  # (step, output pointer parameter)
    mutates: list
    outputs: list  # one entry per returned tensor (its count is what the schema needs)

    @property
    def includes(self) -> set[str]:
        return {s.include for s in self.steps}


def build(name: str, spec: OpRecord, libs: list[dict]) -> StepsOp:
    args = parse_args(name, [a.text for a in spec.args])
    names = {a.name for a in args}
    built, produced = [], {}
    for i, (step, lib) in enumerate(zip(spec.launches, libs)):
        op = build_op(f"{name}__{i}", step, lib)
        for a in op.args:
            if a.name not in names and a.name not in produced:
                raise UserError(f"op {name!r}: step {i} takes {a.name!r}, which is no argument of "
                                "the op and no tensor an earlier step allocates")
        for pname, _, _ in op.outputs:
            produced[pname] = (i, pname)
        built.append(op)
    returns = []
    for i, pname in spec.returns:
        if not any(o[0] == pname for o in built[int(i)].outputs):
            raise UserError(f"op {name!r}: returns: step {i} allocates no {pname!r}")
        returns.append((int(i), pname))
    mutates = list(spec.mutates)
    for m in mutates:
        if m not in [a.name for a in args if a.kind == "Tensor"]:
            raise UserError(f"op {name!r}: mutates: {m!r} is not a tensor argument")
    return StepsOp(name, args, built, returns, mutates, returns)


def _var(step: int, pname: str) -> str:
    return f"s{step}_{pname}"


def render_cc(ns: str, op: StepsOp) -> str:
    out = [cc_op(ns, s) + "\n" for s in op.steps]
    n = len(op.returns)
    ret = "void" if n == 0 else "Tensor" if n == 1 else \
        "std::tuple<" + ", ".join(["Tensor"] * n) + ">"
    params = [f"Tensor t_{a.name}" if a.kind == "Tensor"
              else f"{SCALAR_KINDS[a.kind]} v_{a.name}" for a in op.args]
    L = [f"// {ns}::{op.name}: {schema(op)}; runs {len(op.steps)} launches.",
         f"static {ret} op_{op.name}({', '.join(params)}) {{"]
    arg_kind = {a.name: a.kind for a in op.args}
    where: dict[str, str] = {}  # tensor an earlier step allocated -> its C++ variable
    for i, step in enumerate(op.steps):
        call_args = []
        for a in step.args:
            if a.name in where:
                call_args.append(where[a.name])
            else:
                call_args.append(("t_" if arg_kind[a.name] == "Tensor" else "v_") + a.name)
        call = f"op_{step.name}({', '.join(call_args)})"
        outs = [o[0] for o in step.outputs]
        if not outs:
            L.append(f"  {call};")
        elif len(outs) == 1:
            L.append(f"  Tensor {_var(i, outs[0])} = {call};")
        else:
            L.append(f"  auto r{i} = {call};")
            for j, pname in enumerate(outs):
                L.append(f"  Tensor {_var(i, pname)} = std::get<{j}>(r{i});")
        for pname in outs:
            where[pname] = _var(i, pname)
    values = [_var(i, p) for i, p in op.returns]
    if n == 1:
        L.append(f"  return {values[0]};")
    elif n > 1:
        L.append(f"  return std::make_tuple({', '.join(values)});")
    L.append("}")
    return "\n".join(out + L)


def render_py_fake(ns: str, op: StepsOp) -> str:
    out = []
    for s in op.steps:  # the steps' fakes, not registered: the op's fake calls them
        out.append("\n".join(py_fake(ns, s).splitlines()[1:]) + "\n")
    sig = ", ".join(a.name + (f"={a.default}" if a.default is not None else "") for a in op.args)
    L = [f'@torch.library.register_fake("{ns}::{op.name}")', f"def _fake_{op.name}({sig}):"]
    where: dict[str, str] = {}
    for i, step in enumerate(op.steps):
        call = f"_fake_{step.name}({', '.join(where.get(a.name, a.name) for a in step.args)})"
        outs = [o[0] for o in step.outputs]
        if not outs:
            L.append(f"    {call}")
            continue
        names = [_var(i, p) for p in outs]
        L.append(f"    {', '.join(names)} = {call}")
        for pname, var in zip(outs, names):
            where[pname] = var
    values = [_var(i, p) for i, p in op.returns]
    L.append("    return " + (", ".join(values) if values else "None"))
    out.append("\n".join(L) + "\n")
    return "\n\n".join(out)
