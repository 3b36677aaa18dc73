"""Variant metadata (`--out_json`, format rules_triton.variant.v1; schema in docs/design.md).

The JSON is written with a fixed key order (the design's order; "constexprs" keeps
declaration order), two-space indent and a final newline, so that equal inputs give
byte-identical files. It holds no absolute paths and no timestamps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from triton_aot.errors import UserError

FORMAT = "rules_triton.variant.v1"

JsonValue = Union[int, float, bool, str, None]


@dataclass(frozen=True)
class TargetInfo:
    backend: str
    arch: int
    warp_size: int

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "arch": self.arch, "warp_size": self.warp_size}


@dataclass(frozen=True)
class ArgInfo:
    """One kernel parameter. Runtime args have ctype/hint; constexprs have value/value_repr."""

    name: str
    type: str  # canonical Triton type, or "constexpr"
    constexpr: bool
    ctype: str | None = None
    hint: int | None = None  # 16, 1 or None
    value: JsonValue = None
    value_repr: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.constexpr:
            return {"name": self.name, "type": "constexpr", "value": self.value,
                    "value_repr": self.value_repr, "constexpr": True}
        return {"name": self.name, "type": self.type, "ctype": self.ctype, "hint": self.hint,
                "constexpr": False}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ArgInfo":
        if d["constexpr"]:
            return cls(d["name"], "constexpr", True, value=d["value"],
                       value_repr=d["value_repr"])
        return cls(d["name"], d["type"], False, ctype=d["ctype"], hint=d["hint"])


@dataclass(frozen=True)
class VariantMetadata:
    symbol: str  # C symbol of the variant launcher
    kernel_name: str  # cubin entry point
    kernel_file: str  # basename only
    target: TargetInfo
    algo_index: int | None
    args: tuple[ArgInfo, ...]
    constexprs: dict[str, str]  # name -> value_repr, declaration order
    num_warps: int
    num_stages: int
    num_ctas: int
    launch_cooperative_grid: bool
    launch_pdl: bool
    shared: int
    global_scratch_size: int
    global_scratch_align: int
    profile_scratch_size: int
    profile_scratch_align: int
    grid: tuple[str, str, str]  # validated source expressions
    grid_c: tuple[str, str, str]  # int64_t C expressions over the C parameter names
    triton_version: str
    cubin_sha256: str
    cubin_size: int
    ptx_embedded: bool
    export_symbols: bool = False  # optional key, written only when true
    format: str = field(default=FORMAT)

    # -- views used by the C generators

    def runtime_args(self) -> list[ArgInfo]:
        """Non-constexpr parameters: the dispatcher's C arguments (including `:1` ones)."""
        return [a for a in self.args if not a.constexpr]

    def launcher_args(self) -> list[ArgInfo]:
        """The variant launcher's C arguments and the kernel's parameters: `:1` ones omitted."""
        return [a for a in self.args if not a.constexpr and a.hint != 1]

    # -- (de)serialisation

    def to_dict(self) -> dict[str, Any]:
        d = {
            "format": self.format,
            "symbol": self.symbol,
            "kernel_name": self.kernel_name,
            "kernel_file": self.kernel_file,
            "target": self.target.to_dict(),
            "algo_index": self.algo_index,
            "args": [a.to_dict() for a in self.args],
            "constexprs": dict(self.constexprs),
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "num_ctas": self.num_ctas,
            "launch_cooperative_grid": self.launch_cooperative_grid,
            "launch_pdl": self.launch_pdl,
            "shared": self.shared,
            "global_scratch_size": self.global_scratch_size,
            "global_scratch_align": self.global_scratch_align,
            "profile_scratch_size": self.profile_scratch_size,
            "profile_scratch_align": self.profile_scratch_align,
            "grid": list(self.grid),
            "grid_c": list(self.grid_c),
            "triton_version": self.triton_version,
            "cubin_sha256": self.cubin_sha256,
            "cubin_size": self.cubin_size,
            "ptx_embedded": self.ptx_embedded,
        }
        if self.export_symbols:
            d["export_symbols"] = True
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=True, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "VariantMetadata":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise UserError(f"not a {FORMAT} metadata file (format is "
                            f"{d.get('format') if isinstance(d, dict) else None!r})")
        try:
            t = d["target"]
            return cls(
                symbol=d["symbol"],
                kernel_name=d["kernel_name"],
                kernel_file=d["kernel_file"],
                target=TargetInfo(t["backend"], int(t["arch"]), int(t["warp_size"])),
                algo_index=d["algo_index"],
                args=tuple(ArgInfo.from_dict(a) for a in d["args"]),
                constexprs=dict(d["constexprs"]),
                num_warps=d["num_warps"],
                num_stages=d["num_stages"],
                num_ctas=d["num_ctas"],
                launch_cooperative_grid=d["launch_cooperative_grid"],
                launch_pdl=d["launch_pdl"],
                shared=d["shared"],
                global_scratch_size=d["global_scratch_size"],
                global_scratch_align=d["global_scratch_align"],
                profile_scratch_size=d["profile_scratch_size"],
                profile_scratch_align=d["profile_scratch_align"],
                grid=tuple(d["grid"]),
                grid_c=tuple(d["grid_c"]),
                triton_version=d["triton_version"],
                cubin_sha256=d["cubin_sha256"],
                cubin_size=d["cubin_size"],
                ptx_embedded=d["ptx_embedded"],
                export_symbols=bool(d.get("export_symbols", False)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise UserError(f"malformed {FORMAT} metadata: {type(e).__name__}: {e}") from None

    @classmethod
    def from_json(cls, text: str) -> "VariantMetadata":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise UserError(f"malformed {FORMAT} metadata: {e}") from None
        return cls.from_dict(data)
