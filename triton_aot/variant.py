"""The variant record: what the compile tool knows about one compiled variant, and the only
thing the link tool reads (`--out_json`, format rules_triton.variant.v2; docs/design.md).

This module owns the record: its fields, their validation (done once, in `from_dict`), its JSON
form, and every view derived from it (C parameter lists, launcher arguments, hint conditions,
target, algo identity and info). Other modules take typed `VariantRecord`s and never look at
the JSON.

The JSON is written with a fixed key order, two-space indent and a final newline, so equal
inputs give byte-identical files. It holds no absolute paths and no timestamps: images are
named relative to the record's own folder.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Union

from triton_aot import abi, c_syntax, signature
from triton_aot.errors import UserError
from triton_aot.launch_options import MAXNREG_RANGE
from triton_aot.reset_to_zero import COUNTS_TEXT, EXTENT_COUNTS, Region
from triton_aot.targets import arch_name
from triton_aot.triton_types import INT_TYPES

FORMAT = "rules_triton.variant.v2"

JsonValue = Union[int, float, bool, str, None]

class RecordError(UserError):
    """A record the tools cannot use; the message names the field."""


# AMD targets: gfx followed by the family/stepping hex digits (gfx90a, gfx942, gfx1100).
HIP_ARCH = re.compile(r"gfx[0-9]{1,2}[0-9a-f]{2}\Z")


@dataclass(frozen=True)
class Target:
    backend: str  # "cuda" or "hip"
    arch: int | str  # cuda: SM number, 90 for sm_90; hip: the gfx name, "gfx942"
    warp_size: int

    @property
    def name(self) -> str:
        return arch_name(self.arch)

    @property
    def is_hip(self) -> bool:
        return self.backend == "hip"

    def __str__(self) -> str:  # the --target spelling
        return f"{self.backend}:{self.arch}"

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "arch": self.arch, "warp_size": self.warp_size}


# cuTensorMapEncodeTiled's CUtensorMapSwizzle values (NONE, 32B, 64B, 128B) and the
# CUtensorMapDataType values Triton's launcher may pass (its TMA_DTYPE_DEVICE_TO_HOST range).
TMA_SWIZZLES = (0, 1, 2, 3)
TMA_DATA_TYPES = range(0, 16)
TMA_ELEM_SIZES = (1, 2, 4, 8)
TMA_MAX_BOX = 256  # cuTensorMapEncodeTiled: every box dimension is at most 256 elements


@dataclass(frozen=True)
class TmaInfo:
    """How the launcher encodes one host tensor descriptor's CUtensorMap: what triton.compile
    decided (its `tensordesc_meta`, triton_adapter.tma_infos), in Triton's order (outermost
    dimension first). The rest of the encoding is fixed, as in Triton's launcher: interleave
    none, L2 promotion 128B, element strides 1, out-of-bounds fill none (padding="zero")."""

    data_type: int  # CUtensorMapDataType (host enum)
    elem_size: int  # bytes per element
    swizzle: int  # CUtensorMapSwizzle
    box: tuple[int, ...]  # the TMA box: the block shape, each dim clamped to 256 by Triton

    def to_dict(self) -> dict[str, Any]:
        return {"data_type": self.data_type, "elem_size": self.elem_size,
                "swizzle": self.swizzle, "box": list(self.box)}


@dataclass(frozen=True)
class Arg:
    """One kernel parameter. Runtime args have a type and a hint; constexprs a value; host
    tensor descriptors (`tensordesc<fp16[64, 64]>`) their TMA encoding."""

    name: str
    type: str  # canonical Triton type ("*fp16", "i32", "tensordesc<fp16[64, 64]>"), or "constexpr"
    hint: int | None = None  # 16, 1 or None
    value: JsonValue = None  # constexprs only
    value_repr: str | None = None  # constexprs only: canonical source spelling
    tma: TmaInfo | None = None  # tensor descriptors only

    @property
    def is_constexpr(self) -> bool:
        return self.type == "constexpr"

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("*")

    @property
    def is_tensordesc(self) -> bool:
        return signature.is_tensordesc(self.type)

    @property
    def desc(self) -> "signature.TensorDescType":
        return signature.parse_tensordesc(self.type, f"argument {self.name!r}")

    @property
    def c_type(self) -> abi.CType:
        return abi.c_type(self.type)

    @property
    def c_params(self) -> tuple[tuple[str, str], ...]:
        """(C type, C name) of the C API parameters this argument is: one, or for a tensor
        descriptor its base pointer, shape and strides (signature.tensordesc_c_names)."""
        if self.is_tensordesc:
            rank = self.desc.rank
            names = signature.tensordesc_c_names(self.name, rank)
            return tuple(zip(["CUdeviceptr"] + ["int64_t"] * (2 * rank), names))
        return ((self.c_type.ctype, self.name),)

    def to_dict(self) -> dict[str, Any]:
        if self.is_constexpr:
            return {"name": self.name, "type": "constexpr", "value": self.value,
                    "value_repr": self.value_repr, "constexpr": True}
        if self.is_tensordesc:
            return {"name": self.name, "type": self.type, "hint": None, "constexpr": False,
                    "tma": self.tma.to_dict() if self.tma else None}
        return {"name": self.name, "type": self.type, "ctype": self.c_type.ctype,
                "hint": self.hint, "constexpr": False}


@dataclass(frozen=True)
class LaunchConfig:
    num_warps: int
    num_stages: int
    num_ctas: int = 1
    cooperative: bool = False
    pdl: bool = False
    maxnreg: int | None = None  # register cap per thread (ptxas .maxnreg); None: Triton's default


@dataclass(frozen=True)
class AutotuneRecord:
    """The kernel's @triton.autotune, for tuning: the argument names it re-tunes on (`key`) and
    which of its configs (index into the unpruned list) this variant's algo is, if one is."""

    key: tuple[str, ...]
    config: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"key": list(self.key), "config": self.config}


ResetRegion = Region  # a record's reset_to_zero region (triton_aot/reset_to_zero.py)


@dataclass(frozen=True)
class VariantRecord:
    symbol: str  # C name of the variant (unique in its library)
    kernel_name: str  # entry point in the cubin
    kernel_file: str  # basename only
    target: Target
    algo_index: int | None
    args: tuple[Arg, ...]  # declaration order
    launch: LaunchConfig
    shared: int  # dynamic shared memory, bytes
    global_scratch: tuple[int, int]  # (bytes per CTA, alignment)
    profile_scratch: tuple[int, int]
    grid: tuple[str, str, str]  # validated source expressions
    grid_c: tuple[str, str, str]  # int64_t C expressions over the C parameter names
    triton_version: str
    cubin_file: str | None  # the image (cubin, or hsaco for hip), relative to the record's folder
    cubin_sha256: str
    cubin_size: int
    ptx_file: str | None  # set when the PTX is embedded (driver JIT fallback)
    ptx_embedded: bool = False
    export_symbols: bool = False  # standalone variant C: default visibility
    # integers the grid uses that the kernel does not take: C API parameters after the kernel's
    launch_args: tuple[Arg, ...] = ()
    # the targets this variant's algo is restricted to ("cuda:90", ...); None: every target
    algo_targets: tuple[str, ...] | None = None
    # the kernel's @triton.autotune (None: it has none)
    autotune: AutotuneRecord | None = None
    # what @triton.heuristics set in this variant (constexpr names, launch options): values of
    # the variant, not of its algo (they may differ per specialization)
    heuristics: tuple[str, ...] = ()
    # the launch options the algo asked for, when a heuristic changed them (None: `launch`)
    algo_launch: LaunchConfig | None = None
    # memory zeroed before each launch, in the kernel's parameter order (a split-K algo's output)
    reset_to_zero: tuple[ResetRegion, ...] = ()
    format: str = field(default=FORMAT)

    # ---- views

    @property
    def runtime_args(self) -> tuple[Arg, ...]:
        """Non-constexpr parameters: the dispatcher's C arguments (including `:1` ones)."""
        return tuple(a for a in self.args if not a.is_constexpr)

    @property
    def c_args(self) -> tuple[Arg, ...]:
        """The dispatcher's C arguments after the stream: the runtime args, then the launch args."""
        return self.runtime_args + self.launch_args

    @property
    def launcher_c_args(self) -> tuple[Arg, ...]:
        """The variant launcher's C arguments: the kernel's parameters, then the launch args
        (which only the grid reads)."""
        return self.launcher_args + self.launch_args

    @property
    def device_attrs(self) -> tuple[str, ...]:
        """The device attributes (grid.DEVICE_ATTRS names) the grid reads."""
        from triton_aot.grid import device_attrs_of
        return device_attrs_of(self.grid_c)

    @property
    def tensordescs(self) -> tuple[Arg, ...]:
        """The host tensor descriptor arguments (each encoded by the launcher)."""
        return tuple(a for a in self.runtime_args if a.is_tensordesc)

    @property
    def launcher_args(self) -> tuple[Arg, ...]:
        """The variant launcher's C arguments and the kernel's parameters: `:1` ones omitted
        (the kernel was compiled with them as the constant 1)."""
        return tuple(a for a in self.runtime_args if a.hint != 1)

    @property
    def constexprs(self) -> dict[str, str]:
        """Constexpr name -> canonical value spelling, declaration order."""
        return {a.name: a.value_repr or "" for a in self.args if a.is_constexpr}

    @property
    def hints(self) -> tuple[tuple[str, int | None], ...]:
        """(name, hint) of every runtime argument: what tells variants of one algo apart."""
        return tuple((a.name, a.hint) for a in self.runtime_args)

    @property
    def hint_conditions(self) -> tuple[tuple[str, int], ...]:
        """(name, hint) that must hold at run time for this variant to be launched."""
        return tuple((a.name, a.hint) for a in self.runtime_args if a.hint is not None)

    def hint_summary(self) -> str:
        parts = [f"{n}%16" if h == 16 else f"{n}==1" for n, h in self.hint_conditions]
        return " ".join(parts) if parts else "(no hints)"

    @property
    def signature(self) -> tuple[tuple[str, str], ...]:
        """(name, type) per parameter: must agree across the variants of a library. A tensor
        descriptor counts by element type and rank: its block shape may differ per algo (a
        {CONSTEXPR} placeholder in the rule's signature) and its C API does not depend on it."""
        return tuple((a.name, f"tensordesc<{a.desc.dtype}, rank {a.desc.rank}>"
                      if a.is_tensordesc else a.type) for a in self.args)

    @property
    def algo_constexprs(self) -> dict[str, str]:
        """The constexprs the algo sets (or the signature fixes): all but heuristic values."""
        return {k: v for k, v in self.constexprs.items() if k not in self.heuristics}

    @property
    def heuristic_summary(self) -> str:
        """`HAS_BIAS=True num_warps=1`: what this variant's heuristics set."""
        values = {**self.constexprs, "num_warps": self.launch.num_warps,
                  "num_stages": self.launch.num_stages, "num_ctas": self.launch.num_ctas,
                  "maxnreg": self.launch.maxnreg}
        return " ".join(f"{k}={values.get(k)}" for k in self.heuristics)

    @property
    def algo_config(self) -> tuple:
        """What makes two variants the same algo: the constexprs and launch config the algo
        asked for (heuristic values are the variant's and may differ per specialization)."""
        return (tuple(self.algo_constexprs.items()), self.algo_launch or self.launch,
                tuple((r.name, r.extents) for r in self.reset_to_zero))

    def algo_sort_key(self) -> tuple:
        """Order of algos without algo_index: numeric constexprs compare as numbers (BLOCK=64
        before BLOCK=128), others by their spelling, then the launch config."""
        values = []
        for a in self.args:
            if a.is_constexpr:
                if isinstance(a.value, (int, float)) and not isinstance(a.value, bool):
                    values.append((a.name, 0, float(a.value), ""))
                else:
                    values.append((a.name, 1, 0.0, str(a.value_repr)))
        cfg = self.launch
        return (tuple(values), cfg.num_warps, cfg.num_stages, cfg.num_ctas, cfg.cooperative,
                cfg.pdl, cfg.maxnreg or 0)

    def algo_info(self) -> str:
        """The NAME_get_algo_info string: constexprs then launch config (the rarer knobs only
        when set, so the common case reads like upstream's)."""
        launch = self.algo_launch or self.launch
        parts = [f"{k}={v}" for k, v in self.algo_constexprs.items()]
        parts += [f"num_warps={launch.num_warps}", f"num_stages={launch.num_stages}"]
        if launch.num_ctas != 1:
            parts.append(f"num_ctas={launch.num_ctas}")
        if launch.cooperative:
            parts.append("launch_cooperative_grid=1")
        if launch.pdl:
            parts.append("launch_pdl=1")
        if launch.maxnreg is not None:
            parts.append(f"maxnreg={launch.maxnreg}")
        if self.algo_targets is not None:
            parts.append(f"targets={','.join(self.algo_targets)}")
        if self.reset_to_zero:
            parts.append(f"reset_to_zero={';'.join(r.summary for r in self.reset_to_zero)}")
        return " ".join(parts)

    def constexpr_summary(self) -> str:
        items = self.constexprs
        return " ".join(f"{k}={v}" for k, v in items.items()) if items else "(none)"

    @property
    def label(self) -> str:
        return self.symbol

    # ---- (de)serialisation

    def to_dict(self) -> dict[str, Any]:
        d = {
            "format": self.format,
            "symbol": self.symbol,
            "kernel_name": self.kernel_name,
            "kernel_file": self.kernel_file,
            "target": self.target.to_dict(),
            "algo_index": self.algo_index,
            "args": [a.to_dict() for a in self.args],
            "constexprs": self.constexprs,  # derived from args, for readers of the JSON
            "num_warps": self.launch.num_warps,
            "num_stages": self.launch.num_stages,
            "num_ctas": self.launch.num_ctas,
            "launch_cooperative_grid": self.launch.cooperative,
            "launch_pdl": self.launch.pdl,
            "shared": self.shared,
            "global_scratch_size": self.global_scratch[0],
            "global_scratch_align": self.global_scratch[1],
            "profile_scratch_size": self.profile_scratch[0],
            "profile_scratch_align": self.profile_scratch[1],
            "grid": list(self.grid),
            "grid_c": list(self.grid_c),
            "triton_version": self.triton_version,
            "cubin_file": self.cubin_file,
            "cubin_sha256": self.cubin_sha256,
            "cubin_size": self.cubin_size,
            "ptx_embedded": self.ptx_embedded,
            "ptx_file": self.ptx_file,
        }
        if self.export_symbols:
            d["export_symbols"] = True
        # optional keys, written only when used (records without them stay byte-identical)
        if self.launch_args:
            d["launch_args"] = [{"name": a.name, "type": a.type, "ctype": a.c_type.ctype}
                                for a in self.launch_args]
        if self.launch.maxnreg is not None:
            d["maxnreg"] = self.launch.maxnreg
        if self.algo_targets is not None:
            d["algo_targets"] = list(self.algo_targets)
        if self.autotune is not None:
            d["autotune"] = self.autotune.to_dict()
        if self.heuristics:
            d["heuristics"] = list(self.heuristics)
        if self.algo_launch is not None:
            a = self.algo_launch
            d["algo_launch"] = {"num_warps": a.num_warps, "num_stages": a.num_stages,
                                "num_ctas": a.num_ctas, "maxnreg": a.maxnreg}
        if self.reset_to_zero:
            d["reset_to_zero"] = [r.to_dict() for r in self.reset_to_zero]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=True, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "VariantRecord":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RecordError(f"not valid JSON: {e}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, d: Any) -> "VariantRecord":
        """The one validation of a record: every field's type and range, names that become C
        identifiers, the ABI of every type, hints, and the grid's C expressions."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            got = d.get("format") if isinstance(d, dict) else None
            raise RecordError(f"metadata format {got!r} is not {FORMAT!r}: not a variant record "
                              "of this rules_triton (pass the --out_json files of "
                              "triton_aot.compile)")
        unknown = sorted(set(d) - _KEYS)
        if unknown:
            raise RecordError(f"malformed variant metadata: unknown field(s) {unknown}")
        try:
            return _from_dict(d)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            what = f"lacks {e.args[0]!r}" if isinstance(e, KeyError) else f"{e}"
            raise RecordError(f"malformed variant metadata: {what}") from None


_KEYS = frozenset(("format", "symbol", "kernel_name", "kernel_file", "target", "algo_index",
                   "args", "constexprs", "num_warps", "num_stages", "num_ctas", "launch_cooperative_grid",
                   "launch_pdl", "shared", "global_scratch_size", "global_scratch_align",
                   "profile_scratch_size", "profile_scratch_align", "grid", "grid_c",
                   "triton_version", "cubin_file", "cubin_sha256", "cubin_size", "ptx_embedded",
                   "ptx_file", "export_symbols", "launch_args", "maxnreg",
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


def _arg(i: int, a: Any) -> Arg:
    if not isinstance(a, dict) or not isinstance(a.get("name"), str):
        raise RecordError(f"malformed variant metadata: args[{i}] is not an object with a "
                          "string 'name'")
    name = a["name"]
    if a.get("constexpr"):
        # constexprs never become C names (only comments and info strings): any name is fine
        value = a.get("value")
        if not isinstance(value, (int, float, bool, str, type(None))):
            raise RecordError(f"argument {name!r}: constexpr value {value!r} is not a JSON scalar")
        return Arg(name, "constexpr", None, value, str(a.get("value_repr", value)))
    ty = a.get("type")
    if not isinstance(ty, str):
        raise RecordError(f"malformed variant metadata: args[{i}] ({name}) has no string 'type'")
    abi.check_c_identifier(name, "argument name")
    if signature.is_tensordesc(ty):
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
        if not ((hint == 16 and (ty.startswith("*") or ty in INT_TYPES)) or
                (hint == 1 and ty in INT_TYPES)) or isinstance(hint, bool):
            raise RecordError(f"argument {name!r}: hint {hint!r} is not valid for type {ty} "
                              "(pointers take :16, integers :16 or :1)")
    return Arg(name, ty, hint)


def _tensordesc_arg(name: str, ty: str, a: dict) -> Arg:
    try:
        desc = signature.parse_tensordesc(ty, f"argument {name!r}")
    except UserError as e:
        raise RecordError(str(e)) from None
    if ty != desc.spelling:
        raise RecordError(f"argument {name!r}: type {ty!r} is not the canonical {desc.spelling!r}")
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
    if (not isinstance(box, list) or len(box) != desc.rank
            or not all(1 <= b <= TMA_MAX_BOX and b <= blk for b, blk in zip(box, desc.block))):
        raise RecordError(f"argument {name!r}: tma box {box!r} does not fit the block "
                          f"{list(desc.block)} (one entry per dimension, 1 to {TMA_MAX_BOX})")
    return Arg(name, ty, None, tma=TmaInfo(t["data_type"], t["elem_size"], t["swizzle"],
                                           tuple(box)))


MAXNREG_MIN, MAXNREG_MAX = MAXNREG_RANGE  # the launch options table's


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
        name, ty = a["name"], a.get("type")
        abi.check_c_identifier(name, "launch argument name")
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
    if target.is_hip:
        raise RecordError("reset_to_zero is CUDA only; a hip variant cannot have one")
    from triton_aot.grid import DEVICE_ATTRS
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


def _from_dict(d: dict) -> VariantRecord:
    symbol = abi.check_c_identifier(d["symbol"], "symbol")
    kernel_name = abi.check_c_identifier(d["kernel_name"], "kernel_name")
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
            abi.check_c_identifier(c_name, "C parameter name")
            c_names.add(c_name)
    t = d["target"]
    if not isinstance(t, dict):
        raise RecordError("malformed variant metadata: 'target' is not an object")
    backend = t.get("backend")
    arch = t.get("arch")
    if backend == "cuda":
        if isinstance(arch, bool) or not isinstance(arch, int) or arch < 10:
            raise RecordError(f"target arch {arch!r} is not an SM number like 90")
    elif backend == "hip":
        if not isinstance(arch, str) or not HIP_ARCH.match(arch):
            raise RecordError(f"target arch {arch!r} is not an AMD gfx name like 'gfx942'")
    else:
        raise RecordError(f"target backend {backend!r} is not supported (cuda or hip)")
    target = Target(backend, arch, _int(t, "warp_size", 1))
    if any(a.is_tensordesc for a in args) and (target.is_hip or target.arch < 90):
        raise RecordError(f"host tensor descriptors need TMA (cuda:90 or newer), not {target}")
    if target.is_hip and (d.get("ptx_embedded") or d.get("ptx_file") is not None):
        raise RecordError("a hip variant cannot embed PTX (ptx_embedded/ptx_file are CUDA only)")
    algo_index = d.get("algo_index")
    if algo_index is not None and (isinstance(algo_index, bool) or not isinstance(algo_index, int)
                                   or algo_index < 0):
        raise RecordError(f"algo_index {algo_index!r} is not an integer >= 0")
    grid_c = d["grid_c"]
    if not isinstance(grid_c, (list, tuple)) or len(grid_c) != 3:
        raise RecordError(f"grid_c must hold 3 C expressions, got {grid_c!r}")
    for i, expr in enumerate(grid_c):
        c_syntax.grid_expression(expr, f"grid_c[{i}]")
    grid = d.get("grid", grid_c)
    if not isinstance(grid, (list, tuple)) or len(grid) != 3:
        raise RecordError(f"grid must hold 3 expressions, got {grid!r}")
    launch_args = _launch_args(d.get("launch_args", []), args)
    maxnreg = d.get("maxnreg")
    if maxnreg is not None and (isinstance(maxnreg, bool) or not isinstance(maxnreg, int)
                                or not MAXNREG_MIN <= maxnreg <= MAXNREG_MAX):
        raise RecordError(f"maxnreg {maxnreg!r} is not an integer from {MAXNREG_MIN} to "
                          f"{MAXNREG_MAX}")
    if maxnreg is not None and target.is_hip:
        raise RecordError("maxnreg is CUDA only; a hip variant cannot have one")
    algo_targets = d.get("algo_targets")
    if algo_targets is not None:
        if (not isinstance(algo_targets, list) or not algo_targets
                or not all(isinstance(t, str) for t in algo_targets)
                or len(set(algo_targets)) != len(algo_targets)):
            raise RecordError(f"algo_targets {algo_targets!r} is not a list of distinct targets")
        for t in algo_targets:
            b, _, a = t.partition(":")
            if not ((b == "cuda" and a.isdigit()) or (b == "hip" and HIP_ARCH.match(a))):
                raise RecordError(f"algo_targets entry {t!r} is not a target like 'cuda:90'")
        if str(target) not in algo_targets:
            raise RecordError(f"algo_targets {algo_targets!r} does not include the record's own "
                              f"target {target}")
        algo_targets = tuple(algo_targets)
    autotune = _autotune(d["autotune"]) if "autotune" in d else None
    heuristics = d.get("heuristics", [])
    names = {a.name for a in args if a.is_constexpr} | {"num_warps", "num_stages", "num_ctas",
                                                         "maxnreg"}
    if (not isinstance(heuristics, list) or not all(isinstance(h, str) for h in heuristics)
            or len(set(heuristics)) != len(heuristics) or set(heuristics) - names):
        raise RecordError(f"heuristics {heuristics!r} is not a list of distinct constexpr or "
                          "launch option names of the variant")
    algo_launch = None
    if "algo_launch" in d:
        a = d["algo_launch"]
        if not isinstance(a, dict) or set(a) != {"num_warps", "num_stages", "num_ctas",
                                                 "maxnreg"}:
            raise RecordError(f"algo_launch {a!r} is not an object with num_warps, num_stages, "
                              "num_ctas and maxnreg")
        m = a["maxnreg"]
        if m is not None and (isinstance(m, bool) or not isinstance(m, int)):
            raise RecordError(f"algo_launch maxnreg {m!r} is not an integer or null")
        algo_launch = LaunchConfig(_int(a, "num_warps", 1), _int(a, "num_stages", 0),
                                   _int(a, "num_ctas", 1), _bool(d, "launch_cooperative_grid"),
                                   _bool(d, "launch_pdl"), m)
    ptx_embedded = _bool(d, "ptx_embedded")
    constexprs = {a.name: a.value_repr for a in args if a.is_constexpr}
    if "constexprs" in d and d["constexprs"] != constexprs:
        raise RecordError(f"malformed variant metadata: 'constexprs' {d['constexprs']!r} "
                          f"disagrees with the constexpr args {constexprs!r}")
    return VariantRecord(
        symbol=symbol,
        kernel_name=kernel_name,
        kernel_file=str(d.get("kernel_file", "?")),
        target=target,
        algo_index=algo_index,
        args=args,
        launch=LaunchConfig(_int(d, "num_warps", 1), _int(d, "num_stages", 0),
                            _int(d, "num_ctas", 1), _bool(d, "launch_cooperative_grid"),
                            _bool(d, "launch_pdl"), maxnreg),
        shared=_int(d, "shared"),
        global_scratch=(_int(d, "global_scratch_size"), _int(d, "global_scratch_align", 1)),
        profile_scratch=(_int(d, "profile_scratch_size"), _int(d, "profile_scratch_align", 1)),
        grid=tuple(str(g) for g in grid),
        grid_c=tuple(grid_c),
        triton_version=str(d.get("triton_version", "?")),
        cubin_file=_opt_str(d, "cubin_file"),
        cubin_sha256=str(d.get("cubin_sha256", "")),
        cubin_size=_int(d, "cubin_size") if "cubin_size" in d else 0,
        ptx_file=_opt_str(d, "ptx_file"),
        ptx_embedded=ptx_embedded,
        export_symbols=_bool(d, "export_symbols"),
        launch_args=launch_args,
        algo_targets=algo_targets,
        autotune=autotune,
        heuristics=tuple(heuristics),
        algo_launch=algo_launch,
        reset_to_zero=(_reset_to_zero(d["reset_to_zero"], args, target)
                       if "reset_to_zero" in d else ()),
    )
