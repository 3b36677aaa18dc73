"""The capture proves its op: the record run at sizes nobody wrote down, against the launcher.

A capture generalises a few example calls into an op over dynamic sizes: checks, the algo by
the sizes, every kernel argument as an expression of the inputs, the tensors it allocates and
returns. `prove` tests that generalisation where it could go wrong: at each example call's own
sizes (the self-check) and at sizes drawn apart from them (1, 0, the edges of every size
condition, an odd and a large value, every size at 1 at once: the decode step), it runs

- the launcher again on fake tensors of those sizes, all static, and notes what it launched:
  kernels, algos, grids, every scalar, and every pointer as the tensor it points at;
- the op record at the same inputs, through the same expressions the op and the C entry
  evaluate (checks, algo conditions, bindings, output shapes, the algo's grid),

and compares the two launch lists, the tensors returned and the inputs written.
Where the op runs, it must run exactly what the launcher runs: anything else is a refusal
naming the launcher's line and the sizes (never a build). Where the op refuses a call that the
launcher runs the same way, a check is stricter than the launcher: also refused, since a
declaration must take every call its launcher takes. Where the launcher itself fails, or runs
something the examples never showed (another algo), the op may refuse: that is the point of
its checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from triton_aot.capture.record import CallCapture
from triton_aot.contract.op_record import OpRecord
from triton_aot.core.errors import UserError

# Values drawn for a dynamic size besides its examples': the sizes the JIT specializes on, an
# odd one, one past a power of two, and a large one.
UNSEEN = (1, 0, 3, 77, 4097, 65537)


class ProofFailed(UserError):
    """The op does not run what the launcher runs at some sizes."""


@dataclass
class Proof:
    """What `prove` checked: per size point, its outcome."""
    points: list[tuple[str, str]] = field(default_factory=list)  # (call text, outcome)

    def count(self, outcome: str) -> int:
        return sum(1 for _, o in self.points if o == outcome)


class _Tensor:
    """An input or an allocation at static sizes, as the expressions read it."""

    def __init__(self, sizes: tuple[int, ...], strides: tuple[int, ...]) -> None:
        self._sizes, self._strides = tuple(sizes), tuple(strides)

    def size(self, d: int) -> int:
        return self._sizes[d]

    def stride(self, d: int) -> int:
        return self._strides[d]

    def numel(self) -> int:
        n = 1
        for s in self._sizes:
            n *= s
        return n

    def dim(self) -> int:
        return len(self._sizes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._sizes


def _cdiv(a: int, b: int) -> int:
    return -1 if b == 0 else -(-a // b)


_FUNCTIONS = {"cdiv": _cdiv, "min": min, "max": max, "True": True, "False": False}


def _eval(text: str, env: dict[str, Any]) -> Any:
    """An expression of the record (Python syntax over sizes and strides, as the torch op and
    the C entry evaluate it); the grid language's `/` truncates like C."""
    code = re.sub(r"(?<![/])/(?![/])", "//", text)
    return eval(code, {"__builtins__": {}}, dict(_FUNCTIONS, **env))  # noqa: S307 (our record)


def static_value(call: CallCapture, text: str) -> Any:
    """`text` (an expression of the inputs) at `call`'s inputs, when what it reads of them are
    numbers; None otherwise, or where it cannot be evaluated."""
    def number(s: str) -> Any:
        return int(s) if s.isdigit() else None  # a dynamic size: reading it fails below

    env = {t.name: _Tensor(tuple(number(s) for s in t.sizes),
                           tuple(number(s) for s in t.strides)) for t in call.tensors}
    try:
        value = _eval(text, env)
        return value if isinstance(value, int) else None
    except Exception:  # noqa: BLE001 (any failure: the expression does not hold there)
        return None


def _dense(sizes: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for s in reversed(sizes):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


def static_text(text: str, values: dict[str, int]) -> str:
    """An example call with its dynamic sizes written as numbers."""
    if not values:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, values)) + r")\b")
    return pattern.sub(lambda m: str(values[m.group(1)]), text)


def int_variants(text: str) -> list[str]:
    """The call with each int argument it passes (a literal, not a size) changed: the op must
    follow the launcher wherever an int argument reaches a kernel."""
    import ast
    try:
        tree = ast.parse(f"_call({text})", mode="eval")
    except SyntaxError:
        return []
    literals = [node for node in tree.body.args + [k.value for k in tree.body.keywords]
                if isinstance(node, ast.Constant) and type(node.value) is int]
    out = []
    for node in literals:
        old = node.value
        node.value = old + 7 if old > 1 else 5
        out.append(ast.unparse(tree.body)[len("_call("):-1])
        node.value = old
    return out


def _edges(guards: list[str], name: str) -> list[int]:
    """The values around each constant a condition on `name` compares with."""
    out = []
    for g in guards:
        if re.search(rf"\b{re.escape(name)}\b", g):
            for c in re.findall(r"(?<![\w.(])(\d+)\b", g):
                out += [int(c) - 1, int(c), int(c) + 1]
    return out


def size_points(examples: dict[str, int], guards: list[str]) -> list[dict[str, int]]:
    """The sizes to prove at: the examples', then each size alone at unseen values and at the
    edges of the conditions naming it, then every size at 1 at once."""
    points = [dict(examples)]
    for name in examples:
        for v in list(UNSEEN) + _edges(guards, name):
            if v >= 0 and v != examples[name]:
                points.append(dict(examples, **{name: v}))
    if len(examples) > 1:
        points.append({n: 1 for n in examples})
    unique = []
    for p in points:
        if p not in unique:
            unique.append(p)
    return unique


@dataclass
class _Launch:
    """One launch as both sides describe it, in comparable values."""
    kernel: str
    algo: tuple
    grid: tuple[int, ...]
    args: dict[str, tuple]


def _algo_key(constexprs: dict, num_warps: int, num_stages: int, options: dict) -> tuple:
    return (tuple(sorted((k, repr(v)) for k, v in constexprs.items())), num_warps, num_stages,
            tuple(sorted((k, repr(v)) for k, v in options.items())))


def _launcher_launches(call: CallCapture) -> tuple[list[_Launch], dict[int, tuple[int, ...]]]:
    launches = []
    for launch in call.launches:
        args = {}
        for a in launch.arguments:
            if a.kind == "pointer":
                args[a.name] = ("tensor", a.source)
            elif a.kind == "int":
                args[a.name] = ("int", int(a.value))
            elif a.kind == "float":
                args[a.name] = ("float", a.source.partition(":")[2] if a.source
                                else float(a.value))
        grid = tuple(int(g) for g in launch.grid) + (1,) * (3 - len(launch.grid))
        algo = _algo_key(launch.constexprs(), launch.num_warps, launch.num_stages,
                         dict(getattr(launch, "options", {}) or {}))
        launches.append(_Launch(launch.kernel, algo, grid, args))
    shapes = {k: tuple(int(s) for s in a.sizes) for k, a in enumerate(call.allocations)}
    return launches, shapes


class _Refused(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _op_launches(record: OpRecord, decl: Any, call: CallCapture, ignore_checks: bool):
    """The launches the op makes at `call`'s inputs (static), its allocations' shapes by
    (launch, parameter) and what it returns; _Refused when a check or no algo condition
    holds."""
    env: dict[str, Any] = {t.name: _Tensor(tuple(int(s) for s in t.sizes),
                                           tuple(int(s) for s in t.strides))
                           for t in call.tensors}
    inputs = set(env)
    env.update({name: value for name, value in call.floats})
    env.update({name: value for name, value in call.ints})
    libraries = {l.name: l for l in decl.libraries}
    made: dict[str, str] = {}  # a step's output parameter -> its tensor's id
    shapes: dict[str, tuple[int, ...]] = {}
    launches = []
    for index, launch in enumerate(record.launches):
        lib = libraries[launch.lib]
        if not ignore_checks:
            for text in launch.checks + (record.checks if index == 0 else ()):
                if not _eval(text, env):
                    raise _Refused(f"the check {text}")
        algos = [a for cond, a in launch.algo_choice if _eval(cond, env)] \
            if launch.algo_choice else [0]
        if not algos:
            raise _Refused("no algo condition")
        algo = lib.algos[algos[0]]
        args = {}
        earlier = dict(made)  # what this launch's bindings may name: earlier launches' tensors
        for pname, text in launch.outputs.items():
            sizes = tuple(int(_eval(s, env)) for s in _split(text))
            tid = f"alloc:{index}:{pname}"
            shapes[tid] = sizes
            made[pname] = tid
            args[pname] = ("tensor", tid)
        values = {}
        for pname, text in launch.bind.items():
            text = text.strip()
            if text in earlier and text not in inputs:
                args[pname] = ("tensor", earlier[text])
            elif text in env and isinstance(env[text], _Tensor):
                args[pname] = ("tensor", f"input:{text}")
            elif text in dict(call.floats):
                args[pname] = ("float", text)
            else:
                value = _eval(text, env)
                kind = "float" if isinstance(value, float) else "int"
                args[pname] = (kind, float(value) if kind == "float" else int(value))
                values[pname] = value
        for pname in launch.arg_names:  # a tensor an earlier step made, by its parameter
            if pname in earlier and pname not in args:
                args[pname] = ("tensor", earlier[pname])
        for shape_owner, tid in made.items():
            env.setdefault(shape_owner, _Tensor(shapes[tid], _dense(shapes[tid])))
        grid = tuple(int(_eval(g, dict(values, **algo_constants(algo)))) for g in algo.grid)
        grid += (1,) * (3 - len(grid))
        launches.append((_Launch(lib.kernel, _algo_key(algo.constexprs, algo.num_warps,
                                                       algo.num_stages, algo.options),
                                 grid, args), launch, algo))
    if record.form == "composite":
        returns = None
    else:
        returns = [f"alloc:{i}:{p}" for i, p in record.returns]
    return launches, shapes, returns


_TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
                 "i32": "int32", "i64": "int64", "i16": "int16", "i8": "int8", "u8": "uint8",
                 "i1": "bool"}


def plan_at(record: OpRecord, decl: Any, call: CallCapture) -> dict[str, Any]:
    """What the op runs at the static call `call`, as plain data a replay can launch: each
    launch's kernel, grid, algo and arguments (a tensor as "input:x" or "alloc:K:P", a scalar
    as its value or the float argument's name), the tensors it allocates (shape, dtype, fill)
    and what it returns. _Refused propagates when the op refuses the call."""
    ours, shapes, returns = _op_launches(record, decl, call, ignore_checks=False)
    libraries = {l.name: l for l in decl.libraries}
    launches, allocs = [], {}
    for (mine, launch, algo), theirs in zip(ours, call.launches):
        lib = libraries[launch.lib]
        order = [a.name for a in theirs.arguments]
        for pname, value in mine.args.items():
            if value[0] == "tensor" and value[1] in shapes and value[1] not in allocs:
                elem = lib.signature[order.index(pname)].lstrip("*").removeprefix("k")
                allocs[value[1]] = {"shape": list(shapes[value[1]]),
                                    "dtype": _TORCH_DTYPES[elem],
                                    "fill": launch.fills.get(pname)}
        launches.append({"module": lib.module, "kernel": lib.kernel, "grid": list(mine.grid),
                         "args": {k: list(v) for k, v in mine.args.items()},
                         "order": order, "constexprs": dict(algo.constexprs),
                         "num_warps": algo.num_warps, "num_stages": algo.num_stages,
                         "options": dict(algo.options)})
    return {"launches": launches, "allocs": allocs, "returns": returns,
            "mutates": list(record.mutates)}


def algo_constants(algo: Any) -> dict[str, Any]:
    return {k: v for k, v in algo.constexprs.items() if isinstance(v, (int, float))}


def _split(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [s for s in (out + [cur]) if s.strip()]


def _compare(record: OpRecord, decl: Any, call: CallCapture, ignore_checks: bool) -> str:
    """"" when the op runs exactly what the launcher ran at `call`, else what differs."""
    ours, shapes, returns = _op_launches(record, decl, call, ignore_checks)
    theirs, alloc_shapes = _launcher_launches(call)
    if len(ours) != len(theirs):
        return f"the op makes {len(ours)} launches, the launcher {len(theirs)}"
    pairing: dict[str, str] = {}
    for i, ((mine, _, _), other) in enumerate(zip(ours, theirs)):
        where = f"launch {i} ({other.kernel})"
        if mine.kernel != other.kernel:
            return f"{where}: the op launches {mine.kernel}"
        if mine.algo != other.algo:
            return f"{where}: the op's algo {mine.algo} is not the launcher's {other.algo}"
        if mine.grid != other.grid:
            return f"{where}: grid {mine.grid} where the launcher's is {other.grid}"
        for name, value in other.args.items():
            got = mine.args.get(name)
            if 0 in other.grid and value[0] != "tensor":
                continue  # an empty grid runs no program: its scalars reach nothing
            if value[0] == "tensor" and got is not None and got[0] == "tensor":
                theirs_id, ours_id = value[1], got[1]
                if theirs_id.startswith("input:") or ours_id.startswith("input:"):
                    if theirs_id != ours_id:
                        return f"{where}: {name} points at {ours_id}, the launcher's at {theirs_id}"
                    continue
                if pairing.setdefault(ours_id, theirs_id) != theirs_id or \
                        list(pairing.values()).count(theirs_id) != 1:
                    return f"{where}: {name} points at another tensor than the launcher's"
                k = int(theirs_id.partition(":")[2])
                if shapes.get(ours_id) != alloc_shapes[k]:
                    return (f"{where}: the op allocates {name} as {list(shapes.get(ours_id))}, "
                            f"the launcher as {list(alloc_shapes[k])}")
            elif got != value:
                return f"{where}: {name} is {got} where the launcher passes {value}"
    if returns is not None:
        returned = [pairing.get(r, r) for r in returns]
        expected = [f"output:{k}" for k, a in enumerate(call.allocations) if a.returned]
        if returned != expected:
            return (f"the op returns {len(returned)} tensor(s) ({', '.join(returned) or 'none'}), "
                    f"the launcher {len(expected)} ({', '.join(expected) or 'none'})")
    return ""


def _renamed(call: CallCapture, names: dict[str, str]) -> CallCapture:
    """The call with the launcher's argument names as the op's (`out` -> `out_arg`)."""
    if not names:
        return call
    import dataclasses
    tensors = tuple(dataclasses.replace(t, name=names.get(t.name, t.name)) for t in call.tensors)
    floats = tuple((names.get(n, n), v) for n, v in call.floats)
    ints = tuple((names.get(n, n), v) for n, v in call.ints)

    def source(a):
        kind, _, ref = a.source.partition(":")
        if kind in ("input", "arg") and ref in names:
            return dataclasses.replace(a, source=f"{kind}:{names[ref]}")
        return a
    launches = tuple(dataclasses.replace(l, arguments=tuple(source(a) for a in l.arguments))
                     for l in call.launches)
    return dataclasses.replace(call, tensors=tensors, floats=floats, ints=ints,
                               launches=launches)


def check_call(record: OpRecord, decl: Any, call: CallCapture) -> str:
    """The outcome at one static call: "same", "refused" (the op refuses what the launcher
    runs otherwise than any example), or a defect's description."""
    try:
        diff = _compare(record, decl, call, ignore_checks=False)
    except _Refused:
        try:
            would = _compare(record, decl, call, ignore_checks=True)
        except (_Refused, KeyError, IndexError, ZeroDivisionError, TypeError):
            return "refused"
        return "refused" if would else "stricter"
    except (KeyError, IndexError, ZeroDivisionError, TypeError) as e:
        return f"the record cannot be evaluated there ({type(e).__name__}: {e})"
    return diff or "same"


def prove(examples: list[tuple[str, dict[str, int]]], record: OpRecord, decl: Any,
          what: str, capture_static: Any, names: dict[str, str]) -> Proof:
    """Checks `record` against the launcher at every size point of every example call;
    ProofFailed naming the launcher's line and the sizes at the first difference.

    `capture_static(text)` runs the launcher on the static call `text` and returns its
    CallCapture, or None when the launcher itself fails there. `examples`: each example call
    (without its own "[n=8]" sizes) and the example values of its dynamic sizes."""
    proof = Proof()
    for body, values in examples:
        used = {n: v for n, v in values.items() if re.search(rf"\b{re.escape(n)}\b", body)}
        guards = [g for l in record.launches for g in l.checks + tuple(c for c, _ in
                                                                        l.algo_choice)]
        variants = [(k, point, static_text(body, point))
                    for k, point in enumerate(size_points(used, guards))]
        sized = len(variants)
        variants += [(sized + i, dict(used), static_text(v, used))
                     for i, v in enumerate(int_variants(body))]
        example_ints: dict[str, int] = {}
        for k, point, static in variants:
            call = capture_static(static)
            if call is not None and k == 0:
                example_ints = dict(call.ints)
            if call is not None and k >= sized and not any(
                    names.get(n, n) in record.arg_names
                    for n, v in call.ints if example_ints.get(n) != v):
                continue  # an int the op does not take: fixed at its example value
            if call is None:
                if k == 0:
                    raise ProofFailed(f"{what}: the launcher fails on example call {body!r} "
                                      "with its sizes written as numbers")
                proof.points.append((static, "launcher fails"))
                continue
            outcome = check_call(record, decl, _renamed(call, names)) \
                if record.form != "composite" \
                else "composite"
            sizes_text = ", ".join(f"{n} = {v}" for n, v in point.items()) or "its sizes"
            site = call.launches[0].site if call.launches else "<the launcher>"
            if outcome == "stricter":
                raise ProofFailed(
                    f"{what}: {site}: at {sizes_text} ({static}) the launcher runs the same "
                    "launches as the op would, but the op's checks refuse the call; the "
                    "declaration must take every call its launcher takes")
            if outcome not in ("same", "refused", "composite"):
                raise ProofFailed(f"{what}: {site}: at {sizes_text} ({static}) the op would "
                                  f"not run what the launcher runs: {outcome}")
            if k == 0 and outcome == "refused":
                raise ProofFailed(f"{what}: {site}: the op refuses its own example call "
                                  f"{body!r}")
            proof.points.append((static, outcome))
    return proof
