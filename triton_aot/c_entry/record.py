"""A captured launcher's op record, read for its C entry: what the C can run, or one refusal.

The record is `OP` of NAME.launcher.bzl (triton_aot.capture.op writes it; `launcher_op(OP)` makes
the torch op of it): the launcher's arguments, and per launch the kernel library, the binding of
every C parameter, the checks, the contiguous inputs, the tensors the launch allocated
(`outputs`: pointer parameter -> shape) and the algo conditions (`algo_choice`); several launches
are `steps`, with `returns` naming the allocations the launcher hands back.

The C entry runs exactly that: checks, bindings, algo choice, launches in order, allocations
carved from the caller's workspace (or passed by the caller when returned). Anything else in a
record (a key or an argument kind this reader does not know: torch work between the launches,
such as a sort or a reduction, that only torch can run) is refused as a whole, in one line, so
no C entry ever runs part of what the launcher does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triton_aot.core.errors import UserError

# The keys of one launch (an op over one library, or one step of several).
LAUNCH_KEYS = frozenset(("lib", "args", "bind", "checks", "contiguous", "outputs", "algo_choice",
                         "mutates", "entry"))
# The keys of an op over several launches.
STEPS_KEYS = frozenset(("args", "steps", "returns"))
# Argument kinds: tensors, and the scalars C passes by value.
ARG_KINDS = ("Tensor", "float", "int")

_ARG = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::\s*(static\s+)?(\w+))?\s*$")


class NoCEntry(UserError):
    """The record holds work the C entry cannot run: the launcher gets no C entry."""


def refuse(what: str) -> NoCEntry:
    return NoCEntry(f"the launcher's record has {what}, which its C entry cannot run (torch work "
                    "beyond allocating and viewing tensors, e.g. a sort or a reduction, needs "
                    "torch): this launcher has no C entry; call its torch op (launcher_op) instead")


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str  # one of ARG_KINDS


@dataclass(frozen=True)
class Launch:
    lib: str  # the kernel library's label as the record names it
    bind: dict[str, str]
    checks: tuple[str, ...]
    contiguous: tuple[str, ...] | None  # None: those whose strides nothing reads
    outputs: dict[str, str]  # pointer parameter -> shape text
    algo_choice: tuple[tuple[str, int], ...]
    entry: str  # "", "auto", "default"
    mutates: tuple[str, ...]
    args: tuple[str, ...]  # the names this launch takes (inputs, earlier allocations, floats)


@dataclass(frozen=True)
class Record:
    args: tuple[Arg, ...]
    launches: tuple[Launch, ...]
    returns: tuple[tuple[int, str], ...]  # (launch, pointer parameter) the caller passes


def _keys(spec: object, known: frozenset, where: str) -> dict:
    if not isinstance(spec, dict):
        raise refuse(f"{where} that is not a dict")
    unknown = sorted(k for k in spec if k not in known)
    if unknown:
        raise refuse(f"{', '.join(repr(k) for k in unknown)} in {where}")
    return spec


def _args(specs: object, where: str) -> tuple[Arg, ...]:
    out = []
    for spec in specs or []:
        m = _ARG.match(spec) if isinstance(spec, str) else None
        if not m:
            raise refuse(f"the argument {spec!r} in {where}")
        kind = m.group(3) or "Tensor"
        if kind not in ARG_KINDS:
            raise refuse(f"an argument of kind {kind!r} ({spec!r}) in {where}")
        out.append(Arg(m.group(1), kind))
    return tuple(out)


def _launch(spec: dict, where: str) -> Launch:
    _keys(spec, LAUNCH_KEYS, where)
    entry = spec.get("entry") or ""
    if entry not in ("", "auto", "default"):
        raise refuse(f"entry {entry!r} (an algo_id argument) in {where}")
    if not isinstance(spec.get("lib"), str):
        raise refuse(f"no kernel library in {where}")
    choice = []
    for item in spec.get("algo_choice") or []:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
                and str(item[1]).isdigit()):
            raise refuse(f"the algo condition {item!r} in {where}")
        choice.append((item[0], int(item[1])))
    contiguous = spec.get("contiguous")
    return Launch(
        lib=spec["lib"],
        bind=dict(spec.get("bind") or {}),
        checks=tuple(spec.get("checks") or ()),
        contiguous=None if contiguous is None else tuple(contiguous),
        outputs=dict(spec.get("outputs") or {}),
        algo_choice=tuple(choice),
        entry=entry,
        mutates=tuple(spec.get("mutates") or ()),
        args=tuple(a.name for a in _args(spec.get("args"), where)),
    )


def composite_refusal(op: dict) -> NoCEntry:
    """A launcher that computes with torch (its op is a composite of aten calls and kernel
    launches): refused naming the launcher's line and its first torch call."""
    work = op["composite"].get("torch_work") if isinstance(op["composite"], dict) else None
    return NoCEntry(f"{work or 'the launcher'}: the launcher computes with torch besides its "
                    "kernel launches, and a C entry runs no torch: call its torch op "
                    "(launcher_op), or move that torch work into a kernel and capture again")


def read(op: object) -> Record:
    """The record of `op` (the OP dict); NoCEntry when it holds anything the C cannot run."""
    if isinstance(op, dict) and "composite" in op:
        raise composite_refusal(op)
    if isinstance(op, dict) and "steps" in op:
        _keys(op, STEPS_KEYS, "the op")
        steps = op["steps"]
        if not isinstance(steps, list) or not steps:
            raise refuse("steps that are not a list of launches")
        launches = tuple(_launch(s, f"step {i}") for i, s in enumerate(steps))
        returns = []
        for item in op.get("returns") or []:
            if not (isinstance(item, (list, tuple)) and len(item) == 2 and str(item[0]).isdigit()
                    and isinstance(item[1], str)):
                raise refuse(f"the returned tensor {item!r}")
            returns.append((int(item[0]), item[1]))
        return Record(_args(op.get("args"), "the op"), launches, tuple(returns))
    launch = _launch(_keys(op, LAUNCH_KEYS, "the op"), "the op")
    return Record(_args(op.get("args"), "the op"), (launch,),
                  tuple((0, name) for name in launch.outputs))
