"""The op record: what one torch op (and a captured launcher's C entry) runs, typed.

Two writers make it: the capture (`OP` of NAME.launcher.bzl, triton_aot.capture.op and
.composite) and a hand-written `triton_torch_op` in a BUILD file; both reach the readers as the
same JSON object. Its readers (the torch op generator, the C entry generator and the capture's
self-check) take it from `read`, the one place that knows its keys and checks their types, so a
key added here is seen by every reader and a misspelt one is refused once, here.

Three forms, by what the launcher did:
- one launch: an op over one kernel library (`lib`, `bind`, `outputs`, ...);
- `steps`: several launches in order, each one launch's attributes over the op's arguments and
  the tensors earlier steps allocated, and `returns` naming what the op hands back;
- `composite`: torch work around the launches, replayed from `graph`, with one primitive op
  per launch (`launches`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from triton_aot.core.errors import UserError

# An argument as the op's `args` write it: "x" (a Tensor), "eps: float", "n: static int"...
ARG_PATTERN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::\s*(static\s+)?(\w+))?\s*(?:=\s*(\S.*?))?\s*$")

# The keys each form writes, in the order the committed NAME.launcher.bzl files write them.
LAUNCH_KEYS = ("lib", "bind", "checks", "contiguous", "outputs", "fills", "algo_choice", "args",
               "mutates", "entry")
STEPS_KEYS = ("args", "steps", "returns", "mutates")
COMPOSITE_KEYS = ("args", "checks", "composite", "mutates")
COMPOSITE_PARTS = ("dtypes", "graph", "result", "launches", "torch_work")
ENTRIES = ("", "auto", "default", "algo")


class RecordError(UserError):
    """The op record is malformed (a writer's bug, or a hand-edited record)."""


@dataclass(frozen=True)
class OpArg:
    """One argument of the op: its name, kind ("Tensor", "float", "int", "bool"), whether an
    int is static (never a size) and its default as written."""
    name: str
    kind: str = "Tensor"
    static: bool = False
    default: Optional[str] = None

    @property
    def text(self) -> str:
        kind = "" if self.kind == "Tensor" and not self.static else \
            f": {'static ' if self.static else ''}{self.kind}"
        return self.name + kind + ("" if self.default is None else f" = {self.default}")


@dataclass(frozen=True)
class LaunchOp:
    """One launch: the kernel library's C entry called with every parameter bound.

    bind: C parameter -> the op argument (a tensor, or a scalar) or an expression of them;
    outputs: pointer parameter -> the shape of the tensor the op allocates for it;
    fills: output parameter -> the constant it is filled with first (`torch.zeros`), as text;
    algo_choice: (condition, algo index) in order: the first that holds chooses the algo;
    contiguous: the tensors that must be dense (None: those whose strides nothing reads)."""
    lib: str
    args: tuple[OpArg, ...] = ()
    bind: dict = field(default_factory=dict)
    checks: tuple[str, ...] = ()
    contiguous: Optional[tuple[str, ...]] = None
    outputs: dict = field(default_factory=dict)
    fills: dict = field(default_factory=dict)
    algo_choice: tuple[tuple[str, int], ...] = ()
    entry: str = ""
    mutates: tuple[str, ...] = ()

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"lib": self.lib, "bind": dict(self.bind),
                               "checks": list(self.checks)}
        if self.contiguous is not None:
            out["contiguous"] = list(self.contiguous)
        if self.outputs:
            out["outputs"] = dict(self.outputs)
        if self.fills:
            out["fills"] = dict(self.fills)
        if self.algo_choice:
            out["algo_choice"] = [[cond, str(algo)] for cond, algo in self.algo_choice]
        out["args"] = [a.text for a in self.args]
        if self.mutates:
            out["mutates"] = list(self.mutates)
        if self.entry:
            out["entry"] = self.entry
        return out


@dataclass(frozen=True)
class Composite:
    """Torch work around the launches: the aten calls replayed in order (`graph`, references to
    the op's arguments and earlier results: triton_aot.capture.torch_graph), what the op
    returns (`result`), the tensor arguments' dtypes, one primitive op per launch, and the
    launcher's first computing torch call (`torch_work`, "file:line: torch.sort (...)")."""
    dtypes: dict
    graph: tuple
    result: Any
    launches: tuple[LaunchOp, ...]
    torch_work: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"dtypes": dict(self.dtypes), "graph": list(self.graph), "result": self.result,
                "launches": [l.to_dict() for l in self.launches], "torch_work": self.torch_work}


@dataclass(frozen=True)
class OpRecord:
    """One op: its arguments and its launches; `returns` ((launch, output parameter) the op
    hands back) and `mutates` (the tensor arguments a kernel or torch writes) over all of them;
    `checks` the composite's own conditions (a launch's checks are its own)."""
    form: str  # "launch", "steps" or "composite"
    args: tuple[OpArg, ...]
    launches: tuple[LaunchOp, ...]
    returns: tuple[tuple[int, str], ...] = ()
    mutates: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    composite: Optional[Composite] = None

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `read` takes back (what NAME.launcher.bzl writes as `OP`)."""
        if self.form == "launch":
            out = self.launches[0].to_dict()
            out["args"] = [a.text for a in self.args]
            if self.mutates:
                out["mutates"] = list(self.mutates)
            elif "mutates" in out:
                del out["mutates"]
            return out
        if self.form == "steps":
            out = {"args": [a.text for a in self.args],
                   "steps": [l.to_dict() for l in self.launches],
                   "returns": [[i, p] for i, p in self.returns]}
        else:
            out = {"args": [a.text for a in self.args], "checks": list(self.checks),
                   "composite": self.composite.to_dict()}
        if self.mutates:
            out["mutates"] = list(self.mutates)
        return out


def _fail(where: str, what: str) -> RecordError:
    return RecordError(f"{where}: {what}")


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _fail(where, f"{key} must be a list of strings, got {value!r}")
    return tuple(value)


def _mapping(value: Any, where: str, key: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise _fail(where, f"{key} must be a dict of strings, got {value!r}")
    return dict(value)


def _keys(spec: Any, known: tuple[str, ...], where: str) -> dict:
    if not isinstance(spec, dict):
        raise _fail(where, f"the op record must be a dict, got {type(spec).__name__}")
    unknown = sorted(k for k in spec if k not in known)
    if unknown:
        raise _fail(where, f"unknown key{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(map(repr, unknown))} (known: {', '.join(known)})")
    return spec


def parse_arg(text: Any, where: str) -> OpArg:
    m = ARG_PATTERN.match(text) if isinstance(text, str) else None
    if not m:
        raise _fail(where, f"attribute 'args': {text!r} is not 'NAME', 'NAME: TYPE' or "
                           "'NAME: TYPE = DEFAULT'")
    return OpArg(m.group(1), m.group(3) or "Tensor", bool(m.group(2)), m.group(4))


def _args(value: Any, where: str) -> tuple[OpArg, ...]:
    return tuple(parse_arg(a, where) for a in _strings(value, where, "args"))


def _launch(spec: Any, where: str) -> LaunchOp:
    _keys(spec, LAUNCH_KEYS, where)
    if not isinstance(spec.get("lib"), str) or not spec["lib"]:
        raise _fail(where, "no kernel library (lib)")
    entry = spec.get("entry") or ""
    if entry not in ENTRIES:
        raise _fail(where, f"entry must be one of \"auto\", \"default\", \"algo\", got {entry!r}")
    choice = []
    for item in spec.get("algo_choice") or []:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
                and str(item[1]).isdigit()):
            raise _fail(where, f"algo_choice: {item!r} is not [condition, algo index]")
        choice.append((item[0], int(item[1])))
    contiguous = spec.get("contiguous")
    return LaunchOp(
        lib=spec["lib"], args=_args(spec.get("args"), where),
        bind=_mapping(spec.get("bind"), where, "bind"),
        checks=_strings(spec.get("checks"), where, "checks"),
        contiguous=None if contiguous is None else _strings(contiguous, where, "contiguous"),
        outputs=_mapping(spec.get("outputs"), where, "outputs"),
        fills=_mapping(spec.get("fills"), where, "fills"),
        algo_choice=tuple(choice), entry=entry,
        mutates=_strings(spec.get("mutates"), where, "mutates"))


def read(spec: Any, where: str = "the op") -> OpRecord:
    """The typed record of `spec` (the JSON object); RecordError naming the key when malformed."""
    if isinstance(spec, dict) and spec.get("composite") is not None:
        _keys(spec, COMPOSITE_KEYS, where)
        part = _keys(spec["composite"], COMPOSITE_PARTS, f"{where}: composite")
        if not isinstance(part.get("graph"), list):
            raise _fail(where, "composite: graph must be a list of calls")
        launches = tuple(_launch(l, f"{where}: composite launch {k}")
                         for k, l in enumerate(part.get("launches") or []))
        dtypes = _mapping(part.get("dtypes"), where, "composite dtypes")
        composite = Composite(dtypes, tuple(part["graph"]), part.get("result"), launches,
                              part.get("torch_work") or "")
        return OpRecord("composite", _args(spec.get("args"), where), launches,
                        mutates=_strings(spec.get("mutates"), where, "mutates"),
                        checks=_strings(spec.get("checks"), where, "checks"),
                        composite=composite)
    if isinstance(spec, dict) and spec.get("steps"):
        _keys(spec, STEPS_KEYS, where)
        if not isinstance(spec["steps"], list):
            raise _fail(where, "steps must be a list of launches")
        launches = tuple(_launch(s, f"{where}: step {i}") for i, s in enumerate(spec["steps"]))
        returns = []
        for item in spec.get("returns") or []:
            if not (isinstance(item, (list, tuple)) and len(item) == 2
                    and str(item[0]).isdigit() and isinstance(item[1], str)):
                raise _fail(where, f"returns: {item!r} is not [step index, pointer parameter]")
            if int(item[0]) >= len(launches):
                raise _fail(where, f"returns: step {item[0]} is past the last step")
            returns.append((int(item[0]), item[1]))
        return OpRecord("steps", _args(spec.get("args"), where), launches, tuple(returns),
                        _strings(spec.get("mutates"), where, "mutates"))
    launch = _launch(spec, where)
    return OpRecord("launch", launch.args, (launch,),
                    tuple((0, name) for name in launch.outputs), launch.mutates)
