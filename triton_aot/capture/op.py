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

import dataclasses
import re
from typing import Any

from triton_aot.capture.declaration import Declaration
from triton_aot.capture.record import CallCapture, TensorInput
from triton_aot.core.errors import UserError

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
                raise UserError(f"{what}: the size {word} is no size of a tensor this launch "
                                "takes; each launch of the op reads its sizes off its own "
                                f"tensors: compute {word} from the sizes of the tensors the "
                                "kernel gets, or pass that tensor to the kernel")
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


def _view(call: CallCapture, names: list[str], intermediates: dict[int, str]) -> CallCapture:
    """The call as one launch sees it: its tensors are the inputs and earlier launches'
    allocations it takes (in `names` order), so sizes are read off the step's own tensors."""
    by_name = {t.name: t for t in call.tensors}
    for k, name in intermediates.items():
        alloc = call.allocations[k]
        by_name[name] = TensorInput(name, alloc.dtype, alloc.sizes, (), True)
    return dataclasses.replace(call, tensors=tuple(by_name[n] for n in names if n in by_name))


def declare_op(decl: Declaration, calls: list[CallCapture], what: str) -> dict[str, Any]:
    """`triton_torch_op` attributes (lib as the library's name) of the launcher; when it makes
    several launches, `steps` (one op's attributes per launch, run in order in one op) and
    `returns` (the tensors the op returns: [step, pointer parameter]). A launcher that
    computes with torch has a composite op instead (triton_aot.capture.composite)."""
    names = renames(calls)
    op = _declare_op(decl, calls, what)
    return _renamed(op, names) if names else op


def renames(calls: list[CallCapture]) -> dict[str, str]:
    """The launcher's argument names an op cannot take, renamed (`out` -> `out_arg`)."""
    names = {t.name: f"{t.name}_arg" for t in calls[0].tensors if t.name in _RESERVED}
    names |= {n: f"{n}_arg" for n, _ in calls[0].floats + calls[0].ints if n in _RESERVED}
    return names


def _declare_op(decl: Declaration, calls: list[CallCapture], what: str) -> dict[str, Any]:
    counts = {len(c.launches) for c in calls}
    if len(counts) != 1 or len({tuple(l for l, _ in launches) for _, launches, _ in decl.calls}) != 1:
        raise _different_launches(calls, what)
    first = calls[0]
    inputs = [t.name for t in first.tensors]
    written: dict[int, tuple[int, str]] = {}  # allocation -> (step, pointer parameter)
    steps, floats, used_inputs = [], [], []
    for index in range(counts.pop()):
        launch = first.launches[index]
        step_tensors, intermediates = [], {}
        for a in launch.arguments:
            kind, _, ref = a.source.partition(":")
            if a.kind != "pointer" or kind not in ("input", "output"):
                continue
            if kind == "input":
                step_tensors.append(ref)
                if ref not in used_inputs:
                    used_inputs.append(ref)
            elif int(ref) in written:
                intermediates[int(ref)] = written[int(ref)][1]
                step_tensors.append(written[int(ref)][1])
        views = [_view(c, step_tensors, intermediates) for c in calls]
        lib = decl.calls[0][1][index][0]
        try:
            spec = _step_op(decl, views, index, lib, floats, intermediates, what)
        except UserError as e:
            raise _at_launch(e, what, launch.site) from None
        for a in launch.arguments:
            kind, _, ref = a.source.partition(":")
            if a.kind == "pointer" and kind == "output" and int(ref) not in written:
                written[int(ref)] = (index, a.name)
        spec["args"] = step_tensors + [_scalar_arg(f, first) for f in floats
                                       if f in spec["bind"].values()]
        steps.append(spec)
    unused = [t for t in inputs if t not in used_inputs]
    if unused:
        raise UserError(
            f"{what}: {_reading(first, unused[0])}: the launcher's tensor {unused[0]} reaches no "
            "kernel (the launcher reads only its sizes, or nothing of it), so the op, whose "
            "arguments are the tensors its kernels get, would not take it; drop it from the "
            "launcher, or compute what it reads from the tensors the kernels get")
    returned = [k for k, alloc in enumerate(first.allocations) if alloc.returned]
    args = [t for t in inputs if t in used_inputs] + [_scalar_arg(f, first) for f in floats]
    mutated = _written_inputs(calls, inputs)
    returns = [[written[k][0], written[k][1]] for k in returned if k in written]
    # one launch that returns exactly its outputs, in the C API's order: the op's plain form
    # (a scratch tensor, or another order, needs `returns`: the steps form of one step)
    if len(steps) == 1 and [p for _, p in returns] == list(steps[0].get("outputs") or {}):
        op = steps[0]
        op["args"] = args
        if mutated:
            op["mutates"] = mutated
        return op
    op = {
        "args": args,
        "steps": steps,
        "returns": returns,
    }
    if mutated:
        op["mutates"] = mutated
    return op


def _scalar_binding(a: Any, scalars: list[str]) -> str:
    """A float argument, or an int the launcher passed as it got it: the launcher's argument
    (noted in `scalars`, the op's scalar arguments in order), else a float literal."""
    if not a.source:
        return repr(float(a.value))
    name = a.source.partition(":")[2]
    if name not in scalars:
        scalars.append(name)
    return name


def _reading(call: CallCapture, tensor: str) -> str:
    """The site of the last launch whose grid or sizes use a size of `tensor`."""
    names = {s for t in call.tensors if t.name == tensor for s in t.sizes if _NAME.fullmatch(s)}
    for launch in reversed(call.launches):
        used = set(_NAME.findall(" ".join(launch.grid + tuple(a.expr for a in launch.arguments))))
        if used & names:
            return launch.site
    return call.launches[-1].site


def _scalar_arg(name: str, call: CallCapture) -> str:
    """The op's argument for the launcher's scalar `name`: "eps: float" or "shift: int"."""
    return f"{name}: {'int' if name in dict(call.ints) else 'float'}"


def _at_launch(e: UserError, what: str, site: str) -> UserError:
    """`e` naming the launch's file:line, where it names none yet."""
    if re.match(rf"{re.escape(what)}: [^:\s]+\.py:\d+:", e.message):
        return e
    return UserError(f"{what}: {site}: {e.message.removeprefix(what + ': ')}")


def _different_launches(calls: list[CallCapture], what: str) -> UserError:
    """The example calls make other launches: named at the first launch that differs, and
    said plainly when only the tensors' dtypes differ (one library per element type)."""
    first = calls[0]
    for other in calls[1:]:
        pairs = list(zip(first.launches, other.launches))
        diff = next(((a, b) for a, b in pairs if (a.kernel, [x.type for x in a.arguments])
                     != (b.kernel, [x.type for x in b.arguments])), None)
        if diff is None and len(first.launches) == len(other.launches):
            continue
        site = (diff[1] if diff else other.launches[min(len(pairs), len(other.launches) - 1)]).site
        dtypes = [(t.dtype, u.dtype) for t, u in zip(first.tensors, other.tensors)]
        if diff and diff[0].kernel == diff[1].kernel and len(first.launches) == len(other.launches) \
                and any(a != b for a, b in dtypes) \
                and [t.sizes for t in first.tensors] == [t.sizes for t in other.tensors]:
            changed = ", ".join(sorted({f"{a} and {b}" for a, b in dtypes if a != b}))
            return UserError(
                f"{what}: {site}: example calls {first.call!r} and {other.call!r} differ only in "
                f"their tensors' dtypes ({changed}), which makes {diff[0].kernel} another kernel "
                "library per dtype; one op runs one dtype: declare a triton_launcher_library per "
                "dtype (each with its own calls)")
        return UserError(f"{what}: {site}: example calls {first.call!r} and {other.call!r} launch "
                         "different kernels (in number or order); one op runs one sequence of "
                         "launches: capture them separately")
    return UserError(f"{what}: the example calls launch different kernels; capture them "
                     "separately")


# Argument names a torch op cannot take (`out` and `self` mean something in a schema; `torch`
# would shadow the module in the generated fake): the op names them NAME_arg.
_RESERVED = ("out", "self", "torch")


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """`value` (the op's attributes) with each reserved argument name replaced, in expressions
    and lists alike; dict keys (kernel parameters) stay."""
    if isinstance(value, str):
        return re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: names[m.group(1)], value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value


def _written_inputs(calls: list[CallCapture], inputs: list[str]) -> list[str]:
    """The inputs some launch stores to (`Tensor(a!)` in the schema: torch.compile keeps the
    call and orders it), in argument order; inputs only read are not marked."""
    written = {a.source.partition(":")[2] for c in calls for launch in c.launches
               for a in launch.arguments
               if a.kind == "pointer" and a.source.startswith("input:") and a.name in launch.writes}
    return [t for t in inputs if t in written]


def _step_op(decl: Declaration, calls: list[CallCapture], index: int, lib: str,
             floats: list[str], intermediates: dict[int, str], what: str) -> dict[str, Any]:
    """One launch's op attributes; `calls` see only the launch's own tensors."""
    first = calls[0]
    sizes = _Sizes(first)
    candidates = [f"{t.name}.size({d})" for t in first.tensors for d in range(len(t.sizes))]
    candidates += [f"{t.name}.stride({d})" for t in first.tensors for d in range(len(t.strides))]
    bind: dict[str, str] = {}
    outputs: dict[str, str] = {}
    fills: dict[str, str] = {}
    launch = first.launches[index]
    for i, a in enumerate(launch.arguments):
        per_call = [c.launches[index].arguments[i] for c in calls]
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
            elif int(ref) in intermediates:  # an earlier launch's tensor
                bind[a.name] = intermediates[int(ref)]
            else:
                ranks = {len(c.allocations[int(ref)].sizes) for c in calls}
                if len(ranks) != 1:
                    raise UserError(f"{what}: {launch.site}: the tensor behind {a.name} has "
                                    "another rank in each example call")
                fills.update(_fill(calls, int(ref), a.name, what, launch.site))
                outputs[a.name] = ", ".join(
                    _one_text([c.allocations[int(ref)].sizes[d] for c in calls], calls,
                              candidates, what, f"{a.name}'s size {d}", launch.site)
                    for d in range(ranks.pop()))
        elif a.kind == "float" or (len({p.source for p in per_call}) == 1
                                   and a.source.startswith("arg:")):
            bind[a.name] = _scalar_binding(a, floats)
        elif a.kind == "bool":
            raise UserError(f"{what}: {launch.site}: {a.name} is a runtime bool; torch ops take "
                            "no bool kernel arguments yet: make it a constexpr")
        else:
            bind[a.name] = _int_binding(a, per_call, calls, candidates, sizes, what, launch.site)
    bind.update(_launch_args(decl, calls, lib, what))
    read = {m.group(0) for v in bind.values() for m in re.finditer(r"\w+\.stride\(\d+\)", v)}
    per_call_conditions = [_conditions(c, _Sizes(c), read, what) for c in calls]
    common = [c for c in per_call_conditions[0] if all(c in p for p in per_call_conditions)]
    choice_of = {}
    for (text, launches, _), conditions in zip(decl.calls, per_call_conditions):
        own = [c for c in conditions if c not in common]
        choice_of.setdefault(" and ".join(own) or "True", launches[index][1])
    library = next(l for l in decl.libraries if l.name == lib)
    op: dict[str, Any] = {
        "lib": lib,
        "bind": bind,
        "checks": common,
        "contiguous": [t.name for t in first.tensors
                       if all(next(x for x in c.tensors if x.name == t.name).contiguous
                              for c in calls)],
    }
    if outputs:
        op["outputs"] = outputs
    if fills:
        op["fills"] = fills
    if len(library.algos) > 1:
        op["algo_choice"] = [[cond, str(algo)] for cond, algo in choice_of.items()]
    elif len(choice_of) > 1 and "True" not in choice_of:  # a call with no own condition: any
        op["checks"].append(" or ".join(f"({c})" for c in choice_of))
    elif "True" not in choice_of:
        op["checks"] += next(iter(choice_of)).split(" and ")
    return op


def _launch_args(decl: Declaration, calls: list[CallCapture], lib: str,
                 what: str) -> dict[str, str]:
    """The grid's sizes that no kernel argument carries (launch_args), as sizes of the inputs."""
    bind = {}
    for spec in (l for l in decl.libraries if l.name == lib):
        for la in spec.launch_args:
            name = la.partition(":")[0].strip()
            texts = {_Sizes(c).text(name, what) for c in calls if name in _Sizes(c).of}
            if len(texts) != 1:
                raise UserError(f"{what}: the grid's size {name} is not one size of the inputs in "
                                "every example call; name a dynamic size the same in every call "
                                "(\"[rows=8192] ...\" gives a call its own example value)")
            bind[name] = texts.pop()
    return bind


def _fill(calls: list[CallCapture], k: int, name: str, what: str, site: str) -> dict[str, str]:
    """{name: the constant the launcher filled allocation k with} ({} when uninitialised)."""
    values = {c.allocations[k].fill for c in calls}
    if values == {None}:
        return {}
    if len(values) != 1:
        raise UserError(f"{what}: {site}: the tensor behind {name} is filled with "
                        f"{' and '.join(map(repr, values))} in different example calls; "
                        "one op fills it with one constant")
    return {name: repr(values.pop())}


def _one_text(per_call: list[str], calls, candidates, what, name, site) -> str:
    """One expression of the inputs for a size the example calls give as `per_call`."""
    texts = {_Sizes(c).text(e, what) for c, e in zip(calls, per_call)}
    if len(texts) == 1:
        return texts.pop()
    if all(e.isdigit() for e in per_call):
        for cand in candidates:
            if all(_value_in(c, cand) == int(e) for c, e in zip(calls, per_call)):
                return cand
    general = _general_text(calls, [None if e.isdigit() else _Sizes(c).text(e, what)
                                    for c, e in zip(calls, per_call)],
                            [int(e) if e.isdigit() else None for e in per_call])
    if general:
        return general
    raise UserError(f"{what}: {site}: {name} is {', '.join(per_call)} in the example calls, "
                    "which no one expression of the inputs' sizes gives")


def _general_text(calls: list[CallCapture], texts: list[str | None],
                  values: list[int | None]) -> str:
    """The one expression the calls with dynamic sizes give (`texts`), when it also gives the
    value of every call whose sizes are numbers (`values`, e.g. an example call fp32(1)); ""
    otherwise. The capture's proof checks it at every example's sizes."""
    from triton_aot.capture.proof import static_value
    general = {t for t in texts if t is not None}
    if len(general) != 1:
        return ""
    text = general.pop()
    for call, value in zip(calls, values):
        if value is not None and static_value(call, text) != value:
            return ""
    return text


def _names_tensor(arg: str, candidate: str) -> bool:
    """Whether the argument's name points at the candidate's tensor, by the usual spellings
    (`stride_kn` and `k`, `X_row_stride` and `X`, `stride_kb` and `k_cache`)."""
    tensor = candidate.partition(".")[0].split("_")[0].lower()
    return any(token.startswith(tensor) for token in arg.lower().split("_") if token != "stride")


def _int_binding(a, per_call, calls, candidates, sizes, what, site) -> str:
    if all(p.expr for p in per_call):
        texts = {_Sizes(c).text(p.expr, what) for c, p in zip(calls, per_call)}
        if len(texts) == 1:
            return texts.pop()
    values = [p.value for p in per_call]
    general = _general_text(calls, [_Sizes(c).text(p.expr, what) if p.expr else None
                                    for c, p in zip(calls, per_call)],
                            [None if p.expr else p.value for p in per_call])
    if general and any(p.expr for p in per_call):
        return general
    if all(not p.expr for p in per_call):
        if all(v in (0, 1) for v in values) and len(set(values)) == 1:
            return str(values[0])
        for cand in sorted(candidates, key=lambda c: not _names_tensor(a.name, c)):
            if all(_value_in(c, cand) == v for c, v in zip(calls, values)):
                return cand
        if len(set(values)) == 1:
            return str(values[0])
    raise UserError(f"{what}: {site}: {a.name} is {', '.join(map(str, values))} in the example "
                    "calls, which no one expression of the inputs' sizes gives; make the sizes "
                    "it depends on static in every call, or capture the calls separately")
