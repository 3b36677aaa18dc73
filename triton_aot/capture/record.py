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
    # where the value comes from: "input:X" (the launcher's tensor X), "output:K" (the K-th
    # tensor the launcher allocated), "arg:eps" (the launcher's float argument eps); "" when it
    # is a constant or a size expression (`expr`)
    source: str = ""


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
    # the pointer parameters the kernel stores to (torch's own analysis of user Triton
    # kernels, triton_aot.capture.kernel_writes): the inputs behind them are mutated
    writes: tuple[str, ...] = ()
    # the other options of the algo (triton_aot/core/launch_options.py) the launch passed at
    # other than their default, in the table's order: (("enable_fp_fusion", False),)
    options: tuple[tuple[str, Any], ...] = ()

    def constexprs(self) -> dict[str, Any]:
        return {a.name: a.value for a in self.arguments if a.kind == "constexpr"}

    def hints(self) -> tuple[tuple[str, int], ...]:
        return tuple((a.name, a.hint) for a in self.arguments if a.hint)


@dataclass(frozen=True)
class TensorInput:
    """A tensor argument of the launcher: its dtype, sizes and strides as expressions of the
    dynamic sizes (a static size is a literal), and whether the example's layout is dense."""
    name: str
    dtype: str
    sizes: tuple[str, ...]
    strides: tuple[str, ...]
    contiguous: bool


@dataclass(frozen=True)
class Allocation:
    """A tensor the launcher allocated and a launch wrote: its dtype, its shape as the launcher
    returns it, whether the launcher returns it (else it is scratch), and the constant it was
    filled with (`torch.zeros`: 0.0; None: uninitialised, `torch.empty`)."""
    dtype: str
    sizes: tuple[str, ...]
    returned: bool
    fill: float | None = None


@dataclass(frozen=True)
class Step:
    """One thing the launcher did, in order. `kind`: "launch" (`op` the kernel's name: the
    call's launches are its "launch" steps, in order), "allocation" (uninitialised memory,
    `op` the aten op, e.g. "aten.empty_like.default"), "view" (an alias: "aten.transpose.int")
    or "torch" (torch work that computes values, triton_aot.capture.torch_work: then the call
    has a `graph`, which its composite op replays). `site` is the launcher's file:line."""
    kind: str
    op: str
    site: str


@dataclass(frozen=True)
class TorchCall:
    """One call of the launcher's torch work in order, as the composite op replays it.

    kind: "aten" (`op` an aten overload, "aten.sort.default"), "constant" (a tensor the launcher
    made from Python values: `args` (the values, its dtype name)) or "launch" (`op` the kernel,
    `args` the tensor reference of each pointer parameter, `tensors` what each one's tensor was
    at the launch, named by the parameter, in the same order).
    Arguments are references (triton_aot.capture.torch_graph): {"input": "x"}, {"node": 3,
    "item": 0}, {"size": "x.size(0) * 4"}, {"float": "eps"}, {"dtype": "float32"},
    {"device": "input"}, {"layout": ...}, {"memory_format": ...}, {"scalar": "inf"}, lists and
    plain constants."""
    kind: str
    op: str
    args: tuple
    kwargs: dict
    site: str
    tensors: tuple[TensorInput, ...] = ()


@dataclass(frozen=True)
class CallCapture:
    """Everything one example call launched, in order, and the size guards the launcher's
    choices (branches on sizes) added while it ran."""
    call: str                       # the example call as written
    launches: tuple[Launch, ...]
    guards: tuple[str, ...] = field(default=())
    tensors: tuple[TensorInput, ...] = field(default=())
    floats: tuple[tuple[str, float], ...] = field(default=())  # the launcher's float arguments
    ints: tuple[tuple[str, int], ...] = field(default=())  # and its int arguments
    allocations: tuple[Allocation, ...] = field(default=())
    returned_inputs: tuple[str, ...] = field(default=())  # inputs the launcher returns (views)
    steps: tuple[Step, ...] = field(default=())  # everything it did, in order
    # with torch work that computes values (else all empty): the calls the composite op
    # replays, what the launcher returns (references), the inputs it writes (by torch or a
    # kernel), and the first computing torch call ("file:line: torch.sort (aten.sort.default)")
    graph: tuple[TorchCall, ...] = field(default=())
    result: Any = None
    mutated: tuple[str, ...] = field(default=())
    torch_work: str = ""


_COMPOSITE_KEYS = ("graph", "result", "mutated", "torch_work")


def _call_json(c: CallCapture) -> dict:
    data = asdict(c)
    if not c.graph:  # a capture without torch work reads as it always did
        for key in _COMPOSITE_KEYS:
            del data[key]
    return data


def to_json(calls: list[CallCapture]) -> str:
    return json.dumps({"format": "rules_triton.capture.v1",
                       "calls": [_call_json(c) for c in calls]}, indent=1, sort_keys=True) + "\n"


def _tensor_input(t: dict) -> TensorInput:
    return TensorInput(t["name"], t["dtype"], tuple(t["sizes"]), tuple(t["strides"]),
                       t["contiguous"])


def from_json(text: str) -> list[CallCapture]:
    data = json.loads(text)
    out = []
    for c in data["calls"]:
        launches = tuple(
            Launch(kernel=l["kernel"], module=l["module"], site=l["site"],
                   arguments=tuple(Argument(**a) for a in l["arguments"]),
                   num_warps=l["num_warps"], num_stages=l["num_stages"], grid=tuple(l["grid"]),
                   writes=tuple(l.get("writes", ())),
                   options=tuple((k, v) for k, v in l.get("options", ())))
            for l in c["launches"])
        out.append(CallCapture(
            call=c["call"], launches=launches, guards=tuple(c["guards"]),
            tensors=tuple(_tensor_input(t) for t in c["tensors"]),
            floats=tuple((n, v) for n, v in c["floats"]),
            ints=tuple((n, v) for n, v in c.get("ints", ())),
            allocations=tuple(Allocation(a["dtype"], tuple(a["sizes"]), a["returned"],
                                         a.get("fill"))
                              for a in c["allocations"]),
            returned_inputs=tuple(c["returned_inputs"]),
            steps=tuple(Step(**s) for s in c.get("steps", ())),
            graph=tuple(TorchCall(g["kind"], g["op"], tuple(g["args"]), g["kwargs"], g["site"],
                                  tuple(_tensor_input(t) for t in g["tensors"]))
                        for g in c.get("graph", ())),
            result=c.get("result"), mutated=tuple(c.get("mutated", ())),
            torch_work=c.get("torch_work", "")))
    return out
