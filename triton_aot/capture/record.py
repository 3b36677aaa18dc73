"""The record of one captured launch: what `kernel[grid](...)` was called with, typed.

One record flows from the tracer to the declaration (the C library's attributes); its JSON
form is the capture action's output, so what the build compiles can be read and diffed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Argument:
    """One kernel parameter at one launch.

    kind: "pointer", "int", "float", "bool" (runtime arguments), "constexpr" or "none" (an
    optional argument passed as None, which the JIT makes the constant None).
    type: Triton's type of a runtime argument (`*bf16`, `i32`, `fp32`, `u1`); "" otherwise.
    hint: the JIT's specialization of this call (16: aligned / divisible by 16, 1: equal to
    one, 0: none), by Triton's own rules (`native_specialize_impl`).
    value: a constexpr's value (JSON: int, float, bool or str).
    expr: for an integer, its value as an expression of the launcher's inputs (the ShapeEnv's
    sympy expression, with the example's dynamic sizes as names), e.g. "n_rows"; "" when
    it is a constant.
    """
    name: str
    kind: str
    type: str = ""
    hint: int = 0
    value: Any = None
    expr: str = ""


@dataclass(frozen=True)
class Launch:
    """One `kernel[grid](...)` the launcher ran."""
    kernel: str            # the @triton.jit function's name
    module: str            # the module that defines it ("liger_kernel.ops.rms_norm")
    site: str              # file:line of the launch in the launcher
    arguments: tuple[Argument, ...]
    num_warps: int
    num_stages: int
    grid: tuple[str, ...]  # 1-3 entries in the rules' grid language (docs/kernels.md)

    def constexprs(self) -> dict[str, Any]:
        return {a.name: a.value for a in self.arguments if a.kind == "constexpr"}

    def hints(self) -> tuple[tuple[str, int], ...]:
        return tuple((a.name, a.hint) for a in self.arguments if a.hint)


@dataclass(frozen=True)
class CallCapture:
    """Everything one example call launched, in order, and the size guards the launcher's
    choices (branches on sizes) added while it ran."""
    call: str                       # the example call as written
    launches: tuple[Launch, ...]
    guards: tuple[str, ...] = field(default=())


def to_json(calls: list[CallCapture]) -> str:
    return json.dumps({"format": "rules_triton.capture.v1",
                       "calls": [asdict(c) for c in calls]}, indent=1, sort_keys=True) + "\n"


def from_json(text: str) -> list[CallCapture]:
    data = json.loads(text)
    out = []
    for c in data["calls"]:
        launches = tuple(
            Launch(kernel=l["kernel"], module=l["module"], site=l["site"],
                   arguments=tuple(Argument(**a) for a in l["arguments"]),
                   num_warps=l["num_warps"], num_stages=l["num_stages"], grid=tuple(l["grid"]))
            for l in c["launches"])
        out.append(CallCapture(call=c["call"], launches=launches, guards=tuple(c["guards"])))
    return out
