"""The variant record: what the compile tool knows about one compiled variant, and the only
thing the link tool reads (`--out_json`, format rules_triton.variant.v3; docs/design.md).

This module owns the record: its fields, its JSON form, and every view derived from it (C
parameter lists, launcher arguments, hint conditions, target, algo identity and info). Reading it
back, with the one validation of everything in it, is record_reader.py's. Other modules take
typed `VariantRecord`s and never look at the JSON.

The JSON is written with a fixed key order, two-space indent and a final newline, so equal
inputs give byte-identical files. It holds no absolute paths and no timestamps: images are
named relative to the record's own folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from triton_aot.core import abi, signature
from triton_aot.core.arg_type import CONSTEXPR, ArgType
from triton_aot.core.errors import UserError
from triton_aot.core.launch_options import MAXNREG_RANGE
from triton_aot.core.reset_to_zero import Region
# The target is core's typed value; the record carries it as JSON (Target.to_dict).
from triton_aot.core.target import HIP_ARCH, Target  # noqa: F401 (read through here too)

FORMAT = "rules_triton.variant.v3"

JsonValue = Union[int, float, bool, str, None]

class RecordError(UserError):
    """A record the tools cannot use; the message names the field."""


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
    type: ArgType  # "*fp16", "i32", "tensordesc<fp16[64, 64]>", or CONSTEXPR
    hint: int | None = None  # 16, 1 or None
    value: JsonValue = None  # constexprs only
    value_repr: str | None = None  # constexprs only: canonical source spelling
    tma: TmaInfo | None = None  # tensor descriptors only

    def __post_init__(self):
        # a type given as text (a hand-built record) is parsed here, once
        object.__setattr__(self, "type",
                           signature.parse_type(self.type, f"argument {self.name!r}"))

    @property
    def is_constexpr(self) -> bool:
        return self.type.is_constexpr

    @property
    def is_pointer(self) -> bool:
        return self.type.is_pointer

    @property
    def is_tensordesc(self) -> bool:
        return self.type.is_tensordesc

    @property
    def c_type(self) -> abi.CType:
        return abi.c_type(self.type)

    @property
    def c_params(self) -> tuple[tuple[str, str], ...]:
        """(C type, name) of the C API parameters this argument is: one, or for a tensor
        descriptor its base pointer, shape and strides (signature.tensordesc_c_names). The names
        are the kernel's; generated C spells them as c_parts.c_params does (abi.c_param_name)."""
        if self.is_tensordesc:
            rank = self.type.rank
            names = signature.tensordesc_c_names(self.name, rank)
            return tuple(zip(["CUdeviceptr"] + ["int64_t"] * (2 * rank), names))
        return ((self.c_type.ctype, self.name),)

    def to_dict(self) -> dict[str, Any]:
        if self.is_constexpr:
            return {"name": self.name, "type": CONSTEXPR.to_json(), "value": self.value,
                    "value_repr": self.value_repr}
        if self.is_tensordesc:
            return {"name": self.name, "type": self.type.to_json(),
                    "tma": self.tma.to_dict() if self.tma else None}
        return {"name": self.name, "type": self.type.to_json(), "ctype": self.c_type.ctype,
                "hint": self.hint}


# Register cap per thread (ptxas .maxnreg): the launch options table's range.
MAXNREG_MIN, MAXNREG_MAX = MAXNREG_RANGE


@dataclass(frozen=True)
class LaunchConfig:
    num_warps: int
    num_stages: int
    num_ctas: int = 1
    cooperative: bool = False
    pdl: bool = False
    maxnreg: int | None = None  # register cap per thread (ptxas .maxnreg); None: Triton's default
    # a * b + c contracted into fma (Triton's default); False: as a launch with
    # enable_fp_fusion=False compiles, separate mul and add (another rounding, another cubin)
    enable_fp_fusion: bool = True


@dataclass(frozen=True)
class AutotuneRecord:
    """The kernel's @triton.autotune, for tuning: the argument names it re-tunes on (`key`) and
    which of its configs (index into the unpruned list) this variant's algo is, if one is."""

    key: tuple[str, ...]
    config: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"key": list(self.key), "config": self.config}


ResetRegion = Region  # a record's reset_to_zero region (triton_aot/core/reset_to_zero.py)


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
    algo_targets: tuple[Target, ...] | None = None
    # the kernel's @triton.autotune (None: it has none)
    autotune: AutotuneRecord | None = None
    # what @triton.heuristics set in this variant (constexpr names, launch options): values of
    # the variant, not of its algo (they may differ per specialization)
    heuristics: tuple[str, ...] = ()
    # the launch options the algo asked for, when a heuristic changed them (None: `launch`)
    algo_launch: LaunchConfig | None = None
    # memory zeroed before each launch, in the kernel's parameter order (a split-K algo's output)
    reset_to_zero: tuple[ResetRegion, ...] = ()
    # the index of the variant's hint pattern among the library's specializations (the rule's
    # `specializations` order); None: a record compiled without one (the tools on their own)
    specialization_index: int | None = None
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
        from triton_aot.core.grid import device_attrs_of
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
        return tuple((a.name, f"tensordesc<{a.type.elem}, rank {a.type.rank}>"
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
                cfg.pdl, cfg.maxnreg or 0, not cfg.enable_fp_fusion)

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
        if not launch.enable_fp_fusion:
            parts.append("enable_fp_fusion=0")
        if self.algo_targets is not None:
            parts.append(f"targets={','.join(map(str, self.algo_targets))}")
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
            d["launch_args"] = [{"name": a.name, "type": a.type.to_json(), "ctype": a.c_type.ctype}
                                for a in self.launch_args]
        if self.launch.maxnreg is not None:
            d["maxnreg"] = self.launch.maxnreg
        if not self.launch.enable_fp_fusion:
            d["enable_fp_fusion"] = False
        if self.algo_targets is not None:
            d["algo_targets"] = [t.to_dict() for t in self.algo_targets]
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
        if self.specialization_index is not None:  # the rule's records; not the tools' own
            d["specialization_index"] = self.specialization_index
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=True, allow_nan=False) + "\n"
