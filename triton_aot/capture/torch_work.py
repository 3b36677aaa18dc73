"""The torch work of a launcher: every aten op it runs besides its kernel launches, classified.

Every torch op the launcher runs on the fake inputs is seen at dispatch level (a
TorchDispatchMode inside the FakeTensorMode, so `.sort()`, `.sum()`, `torch.tensor(1.0)`,
`.clone()` and copies inside torch's own composites are all seen), classified, and recorded with
its arguments in the launcher's graph (triton_aot.capture.torch_graph):

- "allocation": uninitialised memory (`empty`, `empty_like`, `new_empty`, `empty_strided`), or
  memory filled with one constant (`zeros`, `ones`, `full` and their `_like`/`new_` forms: the
  fill's value is noted), which the op allocates (and fills) the same way;
- "view": an alias of a tensor (`view`, `transpose`, `unbind`, slicing...), which the op binds
  through the tensor's sizes and strides;
- metadata queries (`prim.device`, `sym_size`...), which compute nothing and are not recorded;
- "torch": anything else (a sort, a reduction, a copy, a fill, a constant tensor). A launcher
  with torch work gets a composite op that replays its graph (triton_aot.capture.composite);
  one without keeps the op of its launches alone.
"""

from __future__ import annotations

from typing import Any, Callable

from triton_aot.capture import fake_cuda
from triton_aot.capture.record import Step

ALLOCATIONS = frozenset({
    "aten.empty.memory_format", "aten.empty.SymInt", "aten.empty_like.default",
    "aten.new_empty.default", "aten.empty_strided.default", "aten.new_empty_strided.default",
})
# Ops that only describe a tensor (no value computed, nothing allocated).
METADATA = frozenset({
    "prim.device.default", "aten.sym_size.int", "aten.sym_stride.int", "aten.sym_numel.default",
    "aten.sym_storage_offset.default", "aten.is_contiguous.default",
    "aten.is_contiguous.memory_format", "aten.is_non_overlapping_and_dense.default",
    "aten.detach.default", "aten.alias.default",
})
# Allocations filled with one constant: aten op -> the index of the fill value in its arguments
# (None: zeros or ones).
FILLS = {
    "aten.zeros.default": 0.0, "aten.zeros_like.default": 0.0, "aten.new_zeros.default": 0.0,
    "aten.ones.default": 1.0, "aten.ones_like.default": 1.0, "aten.new_ones.default": 1.0,
    "aten.full.default": 1, "aten.full_like.default": 1, "aten.new_full.default": 2,
}


def kind_of(name: str, func: Any) -> str:
    """"allocation", "view", "metadata" or "torch" for the aten op `name` (`func` its overload)."""
    if name in ALLOCATIONS or name in FILLS:
        return "allocation"
    if name in METADATA:
        return "metadata"
    if name == "aten._unsafe_view.default":  # reshape's view of a copy (the copy is refused)
        return "view"
    returns = func._schema.returns
    if returns and all(r.alias_info is not None and not r.alias_info.is_write for r in returns):
        return "view"
    return "torch"


def torch_call(name: str) -> str:
    """"aten.sort.default" -> "torch.sort" (the call a launcher writes, near enough)."""
    base = name.split(".")[1] if name.count(".") >= 1 else name
    return "torch." + base


def fill_value(name: str, args: tuple) -> float | None:
    """The constant a filled allocation holds; None when it is no plain number (a tensor, a
    symbolic value: torch work)."""
    how = FILLS[name]
    value = how if isinstance(how, float) else args[how] if len(args) > how else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def recorder(steps: list[Step], site: Callable[[], str], fills: dict[int, float],
             graph: Any = None):
    """A TorchDispatchMode that appends a Step for every allocation, view and torch op, notes
    the value of each filled allocation in `fills` (by its storage), and records every call
    with its arguments in `graph` (triton_aot.capture.torch_graph.Graph)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            kind = kind_of(name, func)
            where = site()
            if kind != "metadata":
                steps.append(Step(kind, name, where))
            # an allocation on the launcher's "cuda" (fake_cuda): on meta, like the inputs
            args, kwargs = fake_cuda.on_meta(args, kwargs or {})
            result = func(*args, **kwargs)
            if graph is not None:
                if kind != "metadata":
                    graph.call(name, func, args, kwargs, result, where)
                elif args and graph.refs.get(id(args[0])) is not None:
                    graph.alias(result, args[0])  # x.detach(): x again
            if name in FILLS:
                value = fill_value(name, args)
                if value is None:
                    steps[-1] = Step("torch", name, steps[-1].site)
                else:
                    fills[result.untyped_storage()._cdata] = value
            return result

    return _Record()
