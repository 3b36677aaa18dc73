"""Reads a variant record back from its JSON (`read_json`, `read`): the one validation of
a record.

A record crosses a process boundary: the compile action writes it, the link action (perhaps on
another machine, perhaps from an older build's cache) reads it, and what it holds ends up in C.
So nothing in it is trusted: every field's type and range, the names that become C identifiers,
the ABI of every type, hints, the grid's and reset_to_zero's C expressions, and the agreement
between fields are checked here, once, and a bad record is a RecordError naming the field.
"""

from __future__ import annotations

import json
import re
from typing import Any

from triton_aot.contract.variant import (FORMAT, MAXNREG_MAX, MAXNREG_MIN, TMA_DATA_TYPES,
                                         TMA_ELEM_SIZES, TMA_MAX_BOX, TMA_SWIZZLES, Arg, AutotuneRecord,
                                         LaunchConfig, RecordError, ResetRegion, Target, TmaInfo,
                                         VariantRecord)
from triton_aot.core import abi, c_syntax, launch_options
from triton_aot.core.arg_type import ArgType
from triton_aot.core.errors import UserError
from triton_aot.core.reset_to_zero import COUNTS_TEXT, EXTENT_COUNTS
from triton_aot.core.triton_types import INT_TYPES


def read_json(text: str) -> VariantRecord:
    """A record from its JSON text (`--out_json`), validated."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"not valid JSON: {e}") from None
    return read(data)


def read(d: Any) -> VariantRecord:
    """The one validation of a record: every field's type and range, names that become C
    identifiers, the ABI of every type, hints, and the grid's C expressions."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        got = d.get("format") if isinstance(d, dict) else None
        raise RecordError(f"metadata format {got!r} is not {FORMAT!r}: not a variant record "
                          "of this rules_triton (pass the --out_json files of "
                          "triton_aot.compile.compile)")
    unknown = sorted(set(d) - _KEYS)
    if unknown:
        raise RecordError(f"malformed variant metadata: unknown field(s) {unknown}")
    try:
        return _from_dict(d)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        what = f"lacks {e.args[0]!r}" if isinstance(e, KeyError) else f"{e}"
        raise RecordError(f"malformed variant metadata: {what}") from None


_KEYS = frozenset(("format", "symbol", "kernel_name", "kernel_file", "target", "algo_index",
                   "specialization_index",
                   "args", "constexprs", "num_warps", "num_stages", "num_ctas", "launch_cooperative_grid",
                   "launch_pdl", "shared", "global_scratch_size", "global_scratch_align",
                   "profile_scratch_size", "profile_scratch_align", "grid", "grid_c",
                   "triton_version", "cubin_file", "cubin_sha256", "cubin_size", "ptx_embedded",
                   "ptx_file", "export_symbols", "launch_args", "maxnreg", "enable_fp_fusion",
                   "algo_targets", "autotune", "heuristics", "algo_launch", "reset_to_zero"))


def _int(d: dict, key: str, minimum: int = 0) -> int:
    value = d[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RecordError(f"metadata field {key!r} must be an integer >= {minimum}, got "
                          f"{value!r}")
    return value


def _bool(d: dict, key: str) -> bool:
    value = d.get(key, False)
    if not isinstance(value, bool):
        raise RecordError(f"metadata field {key!r} must be true or false, got {value!r}")
    return value


def _opt_str(d: dict, key: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise RecordError(f"metadata field {key!r} must be a string or null, got {value!r}")
    return value


def _type(name: str, a: dict) -> ArgType:
    """The argument's structured type (ArgType.to_json's form)."""
    try:
        return ArgType.from_json(a.get("type"), f"argument {name!r}")
    except UserError as e:
        raise RecordError(str(e)) from None


def _arg(i: int, a: Any) -> Arg:
    if not isinstance(a, dict) or not isinstance(a.get("name"), str):
        raise RecordError(f"malformed variant metadata: args[{i}] is not an object with a "
                          "string 'name'")
    name = a["name"]
    ty = _type(name, a)
    if ty.is_constexpr:
        # constexprs never become C names (only comments and info strings): any name is fine
        value = a.get("value")
        if not isinstance(value, (int, float, bool, str, type(None))):
            raise RecordError(f"argument {name!r}: constexpr value {value!r} is not a JSON scalar")
        return Arg(name, ty, None, value, str(a.get("value_repr", value)))
    abi.c_param_name(name)
    if ty.is_tensordesc:
        return _tensordesc_arg(name, ty, a)
    if "tma" in a:
        raise RecordError(f"argument {name!r}: only tensor descriptors have 'tma'")
    try:
        ctype = abi.c_type(ty).ctype
    except UserError:
        raise RecordError(f"argument {name!r}: unsupported type {ty!r}") from None
    if a.get("ctype") not in (None, ctype):
        raise RecordError(f"argument {name!r}: ctype {a.get('ctype')!r} does not match the ABI "
                          f"type {ctype!r} for {ty}")
    hint = a.get("hint")
    if hint is not None:
        if not ((hint == 16 and (ty.is_pointer or ty in INT_TYPES)) or
                (hint == 1 and ty in INT_TYPES)) or isinstance(hint, bool):
            raise RecordError(f"argument {name!r}: hint {hint!r} is not valid for type {ty} "
                              "(pointers take :16, integers :16 or :1)")
    return Arg(name, ty, hint)


def _tensordesc_arg(name: str, ty: ArgType, a: dict) -> Arg:
    if a.get("hint") is not None or "ctype" in a:
        raise RecordError(f"argument {name!r}: a tensor descriptor has no hint and no ctype")
    t = a.get("tma")
    if not isinstance(t, dict) or set(t) != {"data_type", "elem_size", "swizzle", "box"}:
        raise RecordError(f"argument {name!r}: 'tma' must be an object with data_type, "
                          "elem_size, swizzle and box")
    box = t["box"]
    ints = [t["data_type"], t["elem_size"], t["swizzle"]] + (box if isinstance(box, list) else [])
    if any(isinstance(v, bool) or not isinstance(v, int) for v in ints):
        raise RecordError(f"argument {name!r}: 'tma' fields must be integers")
    if (t["data_type"] not in TMA_DATA_TYPES or t["elem_size"] not in TMA_ELEM_SIZES
            or t["swizzle"] not in TMA_SWIZZLES):
        raise RecordError(f"argument {name!r}: tma {t!r} is not a TMA encoding "
                          "(data_type 0-15, elem_size 1/2/4/8, swizzle 0-3)")
    if (not isinstance(box, list) or len(box) != ty.rank
            or not all(1 <= b <= TMA_MAX_BOX and b <= blk for b, blk in zip(box, ty.block))):
        raise RecordError(f"argument {name!r}: tma box {box!r} does not fit the block "
                          f"{list(ty.block)} (one entry per dimension, 1 to {TMA_MAX_BOX})")
    return Arg(name, ty, None, tma=TmaInfo(t["data_type"], t["elem_size"], t["swizzle"],
                                           tuple(box)))


def _launch_args(value: Any, args: tuple[Arg, ...]) -> tuple[Arg, ...]:
    """Launch-only arguments: integer C parameters the grid reads; never kernel parameters."""
    if not isinstance(value, list):
        raise RecordError(f"launch_args must be a list, got {value!r}")
    out: list[Arg] = []
    names = {a.name for a in args} | {n for a in args if a.is_tensordesc for _, n in a.c_params}
    for i, a in enumerate(value):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str) or set(a) - {
                "name", "type", "ctype"}:
            raise RecordError(f"launch_args[{i}] is not an object with 'name', 'type', 'ctype'")
        name = a["name"]
        abi.c_param_name(name)
        ty = _type(name, a)
        if ty not in INT_TYPES:
            raise RecordError(f"launch argument {name!r}: type {ty!r} is not an integer type")
        if a.get("ctype") not in (None, abi.c_type(ty).ctype):
            raise RecordError(f"launch argument {name!r}: ctype {a.get('ctype')!r} does not "
                              f"match {ty}")
        if name in names or name in ("stream", "algo_id"):
            raise RecordError(f"launch argument {name!r} clashes with a kernel argument or a "
                              "parameter of the C API")
        names.add(name)
        out.append(Arg(name, ty))
    return tuple(out)


def _reset_to_zero(value: Any, args: tuple[Arg, ...], target: Target) -> tuple[ResetRegion, ...]:
    """The regions zeroed before each launch: pointer arguments of the kernel, each once, in
    parameter order, with 1, 3 or 4 extents whose C is a plain grid expression (the launcher
    evaluates it like the grid, but no device attribute is read for it)."""
    if not isinstance(value, list) or not value:
        raise RecordError(f"reset_to_zero {value!r} is not a non-empty list of regions")
    if not target.row.reset_to_zero:
        raise RecordError("reset_to_zero is CUDA only; a hip variant cannot have one")
    from triton_aot.core.grid import DEVICE_ATTRS
    order = [a.name for a in args]
    pointers = {a.name for a in args if a.is_pointer}
    out: list[ResetRegion] = []
    for i, r in enumerate(value):
        if (not isinstance(r, dict) or set(r) != {"name", "extents", "extents_c"}
                or not isinstance(r["name"], str)):
            raise RecordError(f"reset_to_zero[{i}] is not an object with 'name', 'extents' and "
                              "'extents_c'")
        name, extents, extents_c = r["name"], r["extents"], r["extents_c"]
        if name not in pointers:
            raise RecordError(f"reset_to_zero[{i}]: {name!r} is not a pointer argument of the "
                              "kernel")
        if (not isinstance(extents, list) or not isinstance(extents_c, list)
                or len(extents) not in EXTENT_COUNTS or len(extents_c) != len(extents)
                or not all(isinstance(e, str) for e in extents)):
            raise RecordError(f"reset_to_zero[{i}] ({name}): 'extents' and 'extents_c' must "
                              f"both hold {COUNTS_TEXT} expressions")
        for j, expr in enumerate(extents_c):
            c_syntax.grid_expression(expr, f"reset_to_zero[{i}].extents_c[{j}]")
            if any(re.search(rf"\b{var}\b", expr) for var, _, _ in DEVICE_ATTRS.values()):
                raise RecordError(f"reset_to_zero[{i}].extents_c[{j}] {expr!r} reads a device "
                                  "attribute; extents are the arguments' only")
        if out and order.index(name) <= order.index(out[-1].name):
            raise RecordError(f"reset_to_zero[{i}] ({name}): regions must name distinct "
                              "pointers in the kernel's parameter order")
        out.append(ResetRegion(name, tuple(extents), tuple(extents_c)))
    return tuple(out)


def _autotune(value: Any) -> AutotuneRecord:
    if (not isinstance(value, dict) or set(value) != {"key", "config"}
            or not isinstance(value["key"], list)
            or not all(isinstance(k, str) for k in value["key"])):
        raise RecordError(f"autotune {value!r} is not an object with 'key' (a list of argument "
                          "names) and 'config'")
    config = value["config"]
    if config is not None and (isinstance(config, bool) or not isinstance(config, int)
                               or config < 0):
        raise RecordError(f"autotune config {config!r} is not an integer >= 0 or null")
    return AutotuneRecord(tuple(value["key"]), config)


def _args(d: dict) -> tuple[Arg, ...]:
    """The kernel's arguments: distinct names, and distinct C parameter names."""
    if not isinstance(d["args"], list):
        raise RecordError("malformed variant metadata: 'args' is not a list")
    args = tuple(_arg(i, a) for i, a in enumerate(d["args"]))
    seen: set[str] = set()
    for a in args:
        if a.name in seen:
            raise RecordError(f"argument name {a.name!r} appears twice")
        seen.add(a.name)
    c_names: set[str] = set()
    for a in args:
        for _, c_name in (() if a.is_constexpr else a.c_params):
            if c_name in c_names or (c_name != a.name and c_name in seen):
                raise RecordError(f"C parameter name {c_name!r} (of argument {a.name!r}) "
                                  "appears twice")
            abi.c_param_name(c_name)
            c_names.add(c_name)
    return args


def _target(value: Any) -> Target:
    try:
        return Target.from_dict(value)
    except RecordError:
        raise
    except UserError as e:
        raise RecordError(str(e)) from None


def _check_target_fits(d: dict, args: tuple[Arg, ...], target: Target) -> None:
    """What the variant has, the target must have (the targets table's row)."""
    if any(a.is_tensordesc for a in args) and not target.has_tma:
        raise RecordError(f"host tensor descriptors need TMA (cuda:90 or newer), not {target}")
    if not target.row.embed_ptx and (d.get("ptx_embedded") or d.get("ptx_file") is not None):
        raise RecordError("a hip variant cannot embed PTX (ptx_embedded/ptx_file are CUDA only)")


def _index(d: dict, key: str) -> int | None:
    value = d.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0):
        raise RecordError(f"{key} {value!r} is not an integer >= 0")
    return value


def _grids(d: dict) -> tuple[tuple, tuple]:
    """(grid, grid_c): three expressions each, grid_c's valid C."""
    grid_c = d["grid_c"]
    if not isinstance(grid_c, (list, tuple)) or len(grid_c) != 3:
        raise RecordError(f"grid_c must hold 3 C expressions, got {grid_c!r}")
    for i, expr in enumerate(grid_c):
        c_syntax.grid_expression(expr, f"grid_c[{i}]")
    grid = d.get("grid", grid_c)
    if not isinstance(grid, (list, tuple)) or len(grid) != 3:
        raise RecordError(f"grid must hold 3 expressions, got {grid!r}")
    return tuple(str(g) for g in grid), tuple(grid_c)


def _maxnreg(d: dict, target: Target) -> int | None:
    maxnreg = d.get("maxnreg")
    if maxnreg is not None and (isinstance(maxnreg, bool) or not isinstance(maxnreg, int)
                                or not MAXNREG_MIN <= maxnreg <= MAXNREG_MAX):
        raise RecordError(f"maxnreg {maxnreg!r} is not an integer from {MAXNREG_MIN} to "
                          f"{MAXNREG_MAX}")
    if (maxnreg is not None and launch_options.BY_NAME["maxnreg"].cuda_only
            and not target.row.cuda_launch_options):
        raise RecordError("maxnreg is CUDA only; a hip variant cannot have one")
    return maxnreg


def _fp_fusion(d: dict) -> bool:
    """enable_fp_fusion: written only when False (records of fused algos read as before)."""
    value = d.get("enable_fp_fusion", True)
    if not isinstance(value, bool):
        raise RecordError(f"metadata field 'enable_fp_fusion' must be true or false, got "
                          f"{value!r}")
    return value


def _algo_targets(d: dict, target: Target) -> tuple[Target, ...] | None:
    """The targets the variant's algo is restricted to (Target JSON each), its own among them."""
    algo_targets = d.get("algo_targets")
    if algo_targets is None:
        return None
    if not isinstance(algo_targets, list) or not algo_targets:
        raise RecordError(f"algo_targets {algo_targets!r} is not a list of distinct targets")
    parsed = []
    for t in algo_targets:
        try:
            parsed.append(Target.from_dict(t))
        except UserError:
            raise RecordError(f"algo_targets entry {t!r} is not a target like "
                              "{'backend': 'cuda', 'arch': 90, 'warp_size': 32}") from None
    if len(set(parsed)) != len(parsed):
        raise RecordError(f"algo_targets {algo_targets!r} is not a list of distinct targets")
    if target not in parsed:
        raise RecordError(f"algo_targets {', '.join(map(str, parsed))} does not include the "
                          f"record's own target {target}")
    return tuple(parsed)


def _heuristics(d: dict, args: tuple[Arg, ...]) -> tuple[str, ...]:
    heuristics = d.get("heuristics", [])
    names = {a.name for a in args if a.is_constexpr} | {"num_warps", "num_stages", "num_ctas",
                                                         "maxnreg"}
    if (not isinstance(heuristics, list) or not all(isinstance(h, str) for h in heuristics)
            or len(set(heuristics)) != len(heuristics) or set(heuristics) - names):
        raise RecordError(f"heuristics {heuristics!r} is not a list of distinct constexpr or "
                          "launch option names of the variant")
    return tuple(heuristics)


def _algo_launch(d: dict) -> LaunchConfig | None:
    if "algo_launch" not in d:
        return None
    a = d["algo_launch"]
    if not isinstance(a, dict) or set(a) != {"num_warps", "num_stages", "num_ctas", "maxnreg"}:
        raise RecordError(f"algo_launch {a!r} is not an object with num_warps, num_stages, "
                          "num_ctas and maxnreg")
    m = a["maxnreg"]
    if m is not None and (isinstance(m, bool) or not isinstance(m, int)):
        raise RecordError(f"algo_launch maxnreg {m!r} is not an integer or null")
    return LaunchConfig(_int(a, "num_warps", 1), _int(a, "num_stages", 0),
                        _int(a, "num_ctas", 1), _bool(d, "launch_cooperative_grid"),
                        _bool(d, "launch_pdl"), m, _fp_fusion(d))


def _from_dict(d: dict) -> VariantRecord:
    symbol = abi.check_c_identifier(d["symbol"], "symbol")
    kernel_name = abi.check_c_identifier(d["kernel_name"], "kernel_name")
    args = _args(d)
    target = _target(d["target"])
    _check_target_fits(d, args, target)
    grid, grid_c = _grids(d)
    maxnreg = _maxnreg(d, target)
    constexprs = {a.name: a.value_repr for a in args if a.is_constexpr}
    if "constexprs" in d and d["constexprs"] != constexprs:
        raise RecordError(f"malformed variant metadata: 'constexprs' {d['constexprs']!r} "
                          f"disagrees with the constexpr args {constexprs!r}")
    return VariantRecord(
        symbol=symbol,
        kernel_name=kernel_name,
        kernel_file=str(d.get("kernel_file", "?")),
        target=target,
        algo_index=_index(d, "algo_index"),
        specialization_index=_index(d, "specialization_index"),
        args=args,
        launch=LaunchConfig(_int(d, "num_warps", 1), _int(d, "num_stages", 0),
                            _int(d, "num_ctas", 1), _bool(d, "launch_cooperative_grid"),
                            _bool(d, "launch_pdl"), maxnreg, _fp_fusion(d)),
        shared=_int(d, "shared"),
        global_scratch=(_int(d, "global_scratch_size"), _int(d, "global_scratch_align", 1)),
        profile_scratch=(_int(d, "profile_scratch_size"), _int(d, "profile_scratch_align", 1)),
        grid=grid,
        grid_c=grid_c,
        triton_version=str(d.get("triton_version", "?")),
        cubin_file=_opt_str(d, "cubin_file"),
        cubin_sha256=str(d.get("cubin_sha256", "")),
        cubin_size=_int(d, "cubin_size") if "cubin_size" in d else 0,
        ptx_file=_opt_str(d, "ptx_file"),
        ptx_embedded=_bool(d, "ptx_embedded"),
        export_symbols=_bool(d, "export_symbols"),
        launch_args=_launch_args(d.get("launch_args", []), args),
        algo_targets=_algo_targets(d, target),
        autotune=_autotune(d["autotune"]) if "autotune" in d else None,
        heuristics=_heuristics(d, args),
        algo_launch=_algo_launch(d),
        reset_to_zero=(_reset_to_zero(d["reset_to_zero"], args, target)
                       if "reset_to_zero" in d else ()),
    )
