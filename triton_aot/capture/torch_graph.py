"""The launcher as a graph: its aten calls and kernel launches, with references for arguments.

A launcher that computes with torch (a sort before its kernel, a reduction after it, a constant
tensor, work between two launches) becomes a composite op: the op replays the launcher's aten
calls (torch.ops.aten.*) and calls one primitive op per launch. While the launcher runs on the
fake inputs, every aten call is recorded with its arguments as references:

- a tensor: `{"input": "x"}` (the launcher's argument) or `{"node": 3}` / `{"node": 3,
  "item": 0}` (what call 3 returned), by the tensor object itself, so views are distinct;
- a size: `{"size": "x.size(0) * 4"}`, the expression of the dynamic sizes (torch's ShapeEnv)
  written over the launcher's inputs, as the op reads it;
- a float the launcher got: `{"float": "eps"}`; dtypes, the device (`{"device": "input"}`: the
  inputs' device), layouts, memory formats and non-finite floats as small dicts; lists, None,
  bools, ints, floats and strings as they are.

What the op could not reproduce is noted as a problem (not refused at once: a launcher that
only allocates and views never uses its graph) and refused, naming the launcher's line and the
torch call, when the graph is used: random numbers, the host's memory, a tensor from nowhere (a
global), a float or bool computed from a dynamic size.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from triton_aot.capture.record import Step, TensorInput, TorchCall


class Unencodable(Exception):
    """An argument the composite op could not pass again."""


class Graph:
    """The launcher's torch calls and launches, recorded while it runs."""

    def __init__(self, size_text: Callable[[Any], str], float_name: Callable[[float], str],
                 tensor_input: Callable[[str, Any], TensorInput], steps: list[Step]) -> None:
        self.size_text = size_text        # SymInt -> expression over the launcher's inputs
        self.float_name = float_name      # float -> the launcher's float argument ("" if none)
        self.tensor_input = tensor_input  # (name, tensor) -> TensorInput
        self.steps = steps
        self.calls: list[TorchCall] = []
        self.problems: list[tuple[str, str]] = []  # (site, what the op could not reproduce)
        self.refs: dict[int, Any] = {}
        self.keep: list[Any] = []  # the tensors referenced, alive so that their ids stay theirs
        self.written: list[Any] = []  # tensors a torch call wrote in place

    def add_input(self, name: str, tensor: Any) -> None:
        self.refs.setdefault(id(tensor), {"input": name})
        self.keep.append(tensor)

    def alias(self, result: Any, of: Any) -> None:
        """`result` is `of` for the op (a detach, an alias)."""
        import torch
        if isinstance(result, torch.Tensor) and id(result) not in self.refs:
            self.refs[id(result)] = self.refs[id(of)]
            self.keep.append(result)

    def encode(self, value: Any) -> Any:
        import torch
        if isinstance(value, torch.Tensor):
            if id(value) not in self.refs:
                raise Unencodable("a tensor the launcher neither got nor made with torch (a "
                                  "global?); pass it to the launcher as an argument")
            return self.refs[id(value)]
        if isinstance(value, torch.SymInt):
            return {"size": self.size_text(value)}
        if isinstance(value, (torch.SymFloat, torch.SymBool)):
            raise Unencodable(f"a {type(value).__name__[3:].lower()} computed from a dynamic size "
                              f"({value}); compute it from the tensors with torch, or make the "
                              "size static")
        if isinstance(value, torch.dtype):
            return {"dtype": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            if value.type not in ("cuda", "meta"):
                raise Unencodable(f"a tensor on {value.type}, the host: the op runs on the GPU "
                                  "and would copy to the host and wait; keep the work on the GPU")
            return {"device": "input"}
        if isinstance(value, torch.layout):
            return {"layout": str(value).removeprefix("torch.")}
        if isinstance(value, torch.memory_format):
            return {"memory_format": str(value).removeprefix("torch.")}
        if isinstance(value, float) and not isinstance(value, bool):
            if not math.isfinite(value):
                return {"scalar": repr(value)}
            name = self.float_name(value)
            return {"float": name} if name else value
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, (list, tuple)):
            return [self.encode(v) for v in value]
        raise Unencodable(f"an argument of type {type(value).__name__}, which the op cannot pass")

    def _noted(self, site: str, what: str, build: Callable[[], TorchCall]) -> None:
        try:
            self.calls.append(build())
        except Unencodable as e:
            self.problems.append((site, f"{what} with {e}"))
            self.calls.append(TorchCall("aten", what, (), {}, site))
        except Exception as e:  # e.g. a size read from tensor contents: refused when used
            self.problems.append((site, f"{what}: {e}"))
            self.calls.append(TorchCall("aten", what, (), {}, site))

    def call(self, name: str, func: Any, args: tuple, kwargs: dict, result: Any,
             site: str) -> None:
        """One aten call the launcher made (views, allocations and torch work alike)."""
        import torch
        what = f"torch.{name.split('.')[1]} ({name})"
        if torch.Tag.nondeterministic_seeded in func.tags:
            self.problems.append((site, f"{what}, which draws random numbers the op could not "
                                        "draw again as the launcher did; pass the random tensor "
                                        "to the launcher as an argument"))
        from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
        if free_unbacked_symbols(result):
            self.problems.append((site, f"{what}, whose result's shape depends on tensor values "
                                        "(nonzero, unique, a boolean mask): the op reads tensor "
                                        "values on the host to know it; keep shapes computed "
                                        "from sizes (e.g. torch.where instead of a mask)"))
        self._noted(site, what, lambda: TorchCall(
            "aten", name, tuple(self.encode(a) for a in args),
            {k: self.encode(v) for k, v in kwargs.items()}, site))
        for i, arg in enumerate(func._schema.arguments):
            info = arg.alias_info
            value = args[i] if i < len(args) else kwargs.get(arg.name)
            if info is not None and info.is_write and isinstance(value, torch.Tensor):
                self.written.append(value)
        self._results(result, len(self.calls) - 1)

    def _results(self, result: Any, index: int) -> None:
        import torch
        if isinstance(result, torch.Tensor):
            if id(result) not in self.refs:  # an in-place call returns its argument: kept
                self.refs[id(result)] = {"node": index}
                self.keep.append(result)
        elif isinstance(result, (tuple, list)):
            for j, r in enumerate(result):
                if isinstance(r, torch.Tensor) and id(r) not in self.refs:
                    self.refs[id(r)] = {"node": index, "item": j}
                    self.keep.append(r)

    def constant(self, made: Any, real: Any, site: str) -> None:
        """`made` (a fake tensor) holds the values of `real` (`torch.tensor(...)` on the
        launcher's device): replayed as a constant, not as the allocation it was made by."""
        if self.calls and self.refs.get(id(made)) == {"node": len(self.calls) - 1}:
            self.calls.pop()
            self.steps.pop()
        values = real.tolist()
        self.steps.append(Step("torch", "aten.lift_fresh_copy.default", site))
        self._noted(site, "torch.tensor", lambda: TorchCall(
            "constant", "torch.tensor", (_encode_values(values),
                                         str(real.dtype).removeprefix("torch.")), {}, site))
        self.refs[id(made)] = {"node": len(self.calls) - 1}
        self.keep.append(made)

    def launch(self, kernel: str, pointers: list[tuple[str, Any]], site: str) -> None:
        """A kernel launch: the tensor behind each pointer parameter, by reference."""
        def build() -> TorchCall:
            return TorchCall("launch", kernel, tuple(self.encode(t) for _, t in pointers), {},
                             site, tuple(self.tensor_input(p, t) for p, t in pointers))
        self._noted(site, f"{kernel}[grid](...)", build)


def _encode_values(values: Any) -> Any:
    if isinstance(values, list):
        return [_encode_values(v) for v in values]
    if isinstance(values, float) and not math.isfinite(values):
        return {"scalar": repr(values)}
    return values
