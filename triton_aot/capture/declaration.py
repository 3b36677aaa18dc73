"""The captured launches of every example call, merged into `triton_kernel_library` attributes.

One library per (kernel, argument types): its signature from the argument types, one
specialization per distinct hint pattern of the examples, the patterns the other values of the
dynamic sizes give (`_size_patterns`), and the generic one, one algo per
distinct (constexprs, num_warps, num_stages, other launch options such as enable_fp_fusion) the
launcher chose, and the grid in the rules'
grid language with each dynamic size written as the kernel's integer argument that carries it,
or else as a launch argument. Rendered twice: as NAME.launcher.bzl (data the BUILD file loads;
never edited by hand) and as the explicit BUILD text a user can read, review or freeze.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from triton_aot.capture.record import CallCapture, Launch
from triton_aot.contract.hint_patterns import int_hint
from triton_aot.core.errors import UserError

_INT_WIDTH = {"i32": 0, "u32": 1, "i64": 2, "u64": 3}

# A name in a grid expression (a kernel argument or a launch-only size), not a function.
_GRID_NAME = re.compile(r"\b(?!cdiv\b|min\b|max\b)[A-Za-z_]\w*")


@dataclass
class Algo:
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    grid: tuple[str, ...]
    # the launch's other options not at their default (record.Launch.options), triton_algo's
    # keyword arguments: {"enable_fp_fusion": False}
    options: dict[str, Any] = field(default_factory=dict)

    def config(self) -> tuple:
        """What makes two launches one algo (the grid must then agree)."""
        return (self.constexprs, self.num_warps, self.num_stages, self.options)


@dataclass
class Library:
    name: str
    kernel: str
    module: str
    kernel_src: str          # the srcs file that defines the kernel ("" for an installed module)
    signature: list[str]
    specializations: list[str]
    algos: list[Algo]
    launch_args: list[str]
    sites: list[str] = field(default_factory=list)

    def grid(self) -> tuple[str, ...] | None:
        grids = {a.grid for a in self.algos}
        return next(iter(grids)) if len(grids) == 1 else None


@dataclass
class Declaration:
    libraries: list[Library]
    # per example call: its launches as (library name, algo index), and its size guards
    calls: list[tuple[str, list[tuple[str, int]], list[str]]]


# Values a dynamic size is tried at to see which hints an integer argument derived from it can
# take: 1, multiples of 16 and neither.
_TRIAL_SIZES = (1, 2, 3, 7, 16, 17, 48, 77, 100, 4096)
_MAX_SIZE_PATTERNS = 16  # per example pattern; more free arguments: only all of them unhinted


def _eval_size(expr: str, names: dict[str, int]) -> int:
    """The value of a captured size expression (names, integers, + - * // %, cdiv/min/max)."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: a // b, ast.Div: lambda: a // b, ast.Mod: lambda: a % b}
            return ops[type(node.op)]()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [ev(x) for x in node.args]
            return {"cdiv": lambda: -(-args[0] // args[1]), "min": lambda: min(args),
                    "max": lambda: max(args)}[node.func.id]()
        raise KeyError(ast.dump(node))
    return ev(ast.parse(expr, mode="eval"))


def _size_hint_combos(launch: Launch) -> tuple[tuple[str, ...], set[tuple[int, ...]]]:
    """The integer arguments whose hint depends on a dynamic size (an argument that stays a
    multiple of 16 whatever the size, 4096 * seq, does not), and the hints they take together
    over trial values of the sizes."""
    exprs = {a.name: a.expr for a in launch.arguments
             if a.kind == "int" and a.expr and not a.expr.lstrip("-").isdigit()}
    names = sorted({n for e in exprs.values() for n in re.findall(r"[A-Za-z_]\w*", e)}
                   - {"cdiv", "min", "max"})
    if len(names) > 3:
        names = names[:3]  # enough to see which arguments vary; the rest at one value
    combos: dict[str, list[int]] = {}
    rows = []
    try:
        for values in itertools.product(_TRIAL_SIZES, repeat=len(names)):
            env = dict(zip(names, values))
            env.update({n: 7 for e in exprs.values() for n in re.findall(r"[A-Za-z_]\w*", e)
                        if n not in env and n not in ("cdiv", "min", "max")})
            row = {}
            for arg, e in exprs.items():
                v = _eval_size(e, env)
                row[arg] = int_hint(v) if v >= 0 else None
            rows.append(row)
    except (KeyError, ZeroDivisionError, SyntaxError):
        return (), set()  # an expression this cannot evaluate: the examples' hints only
    for row in rows:
        for arg, h in row.items():
            if h is not None:
                combos.setdefault(arg, []).append(h)
    free = tuple(a for a in exprs if len(set(combos.get(a, []))) > 1)
    return free, {tuple(row[a] for a in free) for row in rows
                  if all(row[a] is not None for a in free)}


def _size_patterns(pattern: tuple[tuple[str, int], ...], launch: Launch,
                   order: list[str]) -> set[tuple[tuple[str, int], ...]]:
    """An example's hint pattern with its size-derived arguments at every hint they can take
    together, so that a call with other sizes finds the variant the JIT would compile for it."""
    free, combos = _size_hint_combos(launch)
    if not free:
        return {pattern}
    fixed = [(n, h) for n, h in pattern if n not in free]
    if len(combos) > _MAX_SIZE_PATTERNS:
        return {tuple(fixed)}
    out = set()
    for hints in combos:
        hinted = dict(fixed) | {n: h for n, h in zip(free, hints) if h}
        out.add(tuple((n, hinted[n]) for n in order if n in hinted))
    return out


def _type_key(launch: Launch) -> tuple:
    return (launch.module, launch.kernel,
            tuple((a.name, a.kind, a.type if a.kind != "int" else "") for a in launch.arguments))


def _spelling(hints: tuple[tuple[str, int], ...]) -> str:
    return " ".join(f"{n}:{h}" for n, h in hints)


def _grid_in_arguments(grid: tuple[str, ...], launches: list[Launch]) -> tuple[tuple[str, ...], set[str]]:
    """The grid with each size name written as the integer argument that carries exactly that
    size in every launch, and the size names left (launch arguments)."""
    carriers = {}
    first = launches[0]
    for i, a in enumerate(first.arguments):
        if a.kind == "int" and a.expr and re.fullmatch(r"[A-Za-z_]\w*", a.expr) \
                and all(l.arguments[i].expr == a.expr for l in launches):
            carriers.setdefault(a.expr, a.name)
    left = set()

    def name(m: re.Match) -> str:
        word = m.group(0)
        if word in ("cdiv", "min", "max"):
            return word
        if word in carriers:
            return carriers[word]
        left.add(word)
        return word

    return tuple(re.sub(r"[A-Za-z_]\w*", name, g) for g in grid), left


def declare(calls: list[CallCapture], name: str, what: str,
            srcs: set[str] | None = None) -> Declaration:
    """The libraries of the captured launches; `srcs`: the rule's srcs files (execroot paths;
    None: every kernel file of the workspace counts as one)."""
    groups: dict[tuple, list[tuple[tuple[int, int], Launch]]] = {}
    for call_index, call in enumerate(calls):
        for launch_index, launch in enumerate(call.launches):
            groups.setdefault(_type_key(launch), []).append(((call_index, launch_index), launch))
    kernels = [key[1] for key in groups]
    libraries: list[Library] = []
    index_of: dict[tuple[int, int], tuple[str, int]] = {}  # (call, launch) -> (library, algo)
    for key, members in groups.items():
        launches = [l for _, l in members]
        kernel = key[1]
        lib_name = name if len(groups) == 1 else f"{name}_{kernel.strip('_')}"
        if kernels.count(kernel) > 1:
            lib_name += f"_{sum(1 for l in libraries if l.kernel == kernel)}"
        signature = []
        for i, a in enumerate(launches[0].arguments):
            if a.kind == "constexpr":
                signature.append(a.name)
            elif a.kind == "none":
                signature.append("None")
            elif a.kind == "bool":
                signature.append("i1")
            elif a.kind == "int":
                signature.append(max((l.arguments[i].type for l in launches),
                                     key=lambda t: _INT_WIDTH.get(t, 0)))
            else:
                signature.append(a.type)
        order = [a.name for a in launches[0].arguments]
        patterns = {l.hints() for l in launches} | {()}
        patterns |= {q for l in launches for q in _size_patterns(l.hints(), l, order)}
        patterns = sorted(patterns, key=lambda p: (-len(p), [-dict(p).get(n, 0) for n in order]))
        algos: list[Algo] = []
        launch_args: set[str] = set()
        for where, launch in members:
            grid, left = _grid_in_arguments(launch.grid, launches)
            clash = sorted(left & set(order))
            if clash:  # the grid's size would be bound where the kernel's argument is
                carried = next(a.expr for a in launch.arguments if a.name == clash[0])
                raise UserError(
                    f"{what}: {launch.site}: the grid of {kernel} ({', '.join(launch.grid)}) "
                    f"needs the size {clash[0]}, which is also the name of its parameter "
                    f"{clash[0]} (= {carried or 'a constant'}), so the one would be bound for "
                    f"the other; name the size otherwise in `sizes` and the calls (e.g. "
                    f"{clash[0]}_size)")
            launch_args |= left
            algo = Algo(launch.constexprs(), launch.num_warps, launch.num_stages, grid,
                        dict(launch.options))
            same = [i for i, a in enumerate(algos) if a.config() == algo.config()]
            if same and algos[same[0]].grid != algo.grid:
                # a call with a size written as a number (fp32(1)) gives the grid as that
                # number; the other call's expression of the size is the general one, and the
                # capture's proof checks it at the first call's sizes
                names = [len(_GRID_NAME.findall(" ".join(g))) for g in (algos[same[0]].grid,
                                                                         algo.grid)]
                if names[1] > names[0]:
                    algos[same[0]] = dataclasses.replace(algos[same[0]], grid=algo.grid)
                    same = same[:1]
            if same and algos[same[0]].grid != algo.grid and names[0] == names[1]:
                raise UserError(f"{what}: {launch.site}: the grid of {kernel} differs between "
                                f"example calls with the same constexprs ({algos[same[0]].grid} "
                                f"and {algo.grid}); a grid must be one expression of the sizes")
            if not same:
                algos.append(algo)
            index_of[where] = (lib_name, (same or [len(algos) - 1])[0])
        libraries.append(Library(
            name=lib_name, kernel=kernel, module=launches[0].module,
            kernel_src=_kernel_src(launches[0].module, srcs), signature=signature,
            specializations=[_spelling(p) for p in patterns], algos=algos,
            launch_args=[f"{n}: i32" for n in sorted(launch_args)],
            sites=sorted({l.site for l in launches})))
    per_call = []
    for call_index, call in enumerate(calls):
        per_call.append((call.call, [index_of[(call_index, i)] for i in range(len(call.launches))],
                         list(call.guards)))
    return Declaration(libraries, per_call)


def _kernel_src(module: str, srcs: set[str] | None) -> str:
    """The repository-relative file of a kernel module from the rule's srcs ("" when it is
    installed, or a file of a py_library dep: its libraries then import it by module name and
    depend on the library, whose package may not be the file's folder)."""
    mod = sys.modules.get(module)
    path = os.path.abspath(getattr(mod, "__file__", "") or "")
    here = os.getcwd() + os.sep
    if not path.startswith(here) or "site-packages" in path:
        return ""
    relative = _repo_relative(os.path.relpath(path, here))
    if srcs is not None and relative not in {_repo_relative(s) for s in srcs}:
        return ""
    return relative


def _repo_relative(path: str) -> str:
    """An execroot-relative path relative to its repository's root, as a label names it: not
    under external/REPO/ (the same BUILD file built from another module) nor
    bazel-out/CONFIG/bin/."""
    parts = os.path.normpath(path).split(os.sep)
    if parts[0] == "bazel-out":
        parts = parts[3:]
    if parts[0] == "external":
        parts = parts[2:]
    return "/".join(parts)


def _algo_dict(algo: Algo, with_grid: bool) -> dict[str, Any]:
    d: dict[str, Any] = {"constexprs": algo.constexprs, "num_warps": algo.num_warps,
                         "num_stages": algo.num_stages, **algo.options}
    if with_grid:
        d["grid"] = ", ".join(algo.grid)
    return d


def library_attrs(lib: Library) -> dict[str, Any]:
    grid = lib.grid()
    attrs: dict[str, Any] = {"kernel": lib.kernel}
    if lib.kernel_src:
        attrs["kernel_src"] = lib.kernel_src
    else:
        attrs["kernel_module"] = lib.module
    attrs["signature"] = ", ".join(lib.signature)
    attrs["specializations"] = lib.specializations
    attrs["algos"] = [_algo_dict(a, grid is None) for a in lib.algos]
    if grid is not None:
        attrs["grid"] = ", ".join(grid)
    if lib.launch_args:
        attrs["launch_args"] = lib.launch_args
    return attrs


def _starlark(value: Any, indent: str = "") -> str:
    """JSON with Starlark's True/False/None (the values here are str, int, float, bool, lists
    and dicts)."""
    text = json.dumps(value, indent=4, sort_keys=False)
    text = re.sub(r'(?<!")\btrue\b(?!")', "True", text)
    text = re.sub(r'(?<!")\bfalse\b(?!")', "False", text)
    text = re.sub(r'(?<!")\bnull\b(?!")', "None", text)
    text = re.sub(r'([^\[\{,\s])(?=\n\s*[\]\}])', r"\1,", text)  # buildifier's trailing commas
    return text.replace("\n", "\n" + indent)


def bzl_text(decl: Declaration, what: str, op: dict[str, Any] | None = None) -> str:
    libraries = {lib.name: library_attrs(lib) for lib in decl.libraries}
    calls = [{"call": c, "launches": [[n, i] for n, i in launches], "guards": guards}
             for c, launches, guards in decl.calls]
    return "\n".join([
        f'"""Captured from the launcher of {what} and its example calls by',
        "python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails",
        'when this differs from a fresh capture, and its failure message says how to update it."""',
        "",
        "# The triton_kernel_library attributes of each library the launcher launches.",
        "LIBRARIES = " + _starlark(libraries),
        "",
        "# Per example call: the (library, algo index) of each launch, in order, and the size",
        "# conditions the launcher's choices depended on.",
        "CALLS = " + _starlark(calls),
        "",
        "# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).",
        "OP = " + _starlark(op),
        "",
    ])


def build_text(decl: Declaration, targets: list[str], op: dict[str, Any] | None = None,
               op_name: str = "", package: str = "", srcs: tuple[str, ...] = (),
               deps: tuple[str, ...] = ()) -> str:
    """The declaration as explicit BUILD text for `package`; `srcs` and `deps` (labels as the
    target gives them) are what each library needs to import its kernel, so the text builds
    as printed."""
    out = ['load("@rules_triton//rules:defs.bzl", "triton_algo", "triton_kernel_library", '
           '"triton_torch_op")', ""]
    for lib in decl.libraries:
        attrs = library_attrs(lib)
        out.append(f"# launched at {', '.join(lib.sites)}")
        out.append("triton_kernel_library(")
        out.append(f'    name = "{lib.name}",')
        for key, value in attrs.items():
            if key == "algos":
                out.append("    algos = [")
                for a in value:
                    args = [f"constexprs = {_starlark(a['constexprs'], '        ')}",
                            f"num_warps = {a['num_warps']}", f"num_stages = {a['num_stages']}"]
                    args += [f"{k} = {_starlark(v)}" for k, v in a.items()
                             if k not in ("constexprs", "num_warps", "num_stages", "grid")]
                    if "grid" in a:
                        args.append(f'grid = "{a["grid"]}"')
                    out.append("        triton_algo(" + ", ".join(args) + "),")
                out.append("    ],")
            elif key == "kernel_src":
                out.append(f'    kernel_src = "{_src_label(value, package)}",')
            else:
                out.append(f"    {key} = {_starlark(value, '    ')},")
        if srcs and "kernel_src" in attrs:
            out.append(f"    srcs = {_starlark(list(srcs), '    ')},")
        if deps:
            out.append(f"    deps = {_starlark(list(deps), '    ')},")
        if targets:
            out.append(f"    targets = {_starlark(targets, '    ')},")
        out.append(")")
        out.append("")
    if op is not None:
        out.append(f"# the op, for triton_torch_library(ops = {{\"{op_name}\": ...}})")
        out.append(f"{op_name.upper()}_OP = triton_torch_op(")
        for key, value in op.items():
            if key == "lib":
                value = ":" + value
            if key == "steps":
                value = [dict(step, lib=":" + step["lib"]) for step in value]
            if key == "composite":
                value = dict(value, launches=[dict(launch, lib=":" + launch["lib"])
                                              for launch in value["launches"]])
            out.append(f"    {key} = {_starlark(value, '    ')},")
        out.append(")")
        out.append("")
    return "\n".join(out)


def _src_label(path: str, package: str) -> str:
    """A kernel file as the BUILD file of `package` names it: "file.py" in the package, else
    another package's exported file "//pkg:file.py" (as triton_launcher_library does)."""
    folder, _, name = path.rpartition("/")
    return name if folder == package else f"//{folder}:{name}"
