"""A kernel argument's type ("*fp16", "i32", "tensordesc<fp16[128, 64]>"), parsed once into an
`ArgType`.

signature.py's grammar (canonical_type, parse_tensordesc) makes one from `--signature` text; the
variant record and the library description carry it as JSON (`to_json`, `from_json`), never as
text to split again; every later stage reads its fields (`is_pointer`, `elem`, `block`, ...).

An ArgType is also its canonical spelling (it subclasses str): Triton's own spelling, which the
type tables (triton_types.py) are keyed by, and which C comments, info strings and messages show.
So `ty in INT_TYPES` and `f"{ty}"` read the same as before the type was structured, and the
generated C does not change.
"""

from __future__ import annotations

import math
from typing import Any

from triton_aot.core.errors import UserError
from triton_aot.core.triton_types import (FP8_TYPES, SCALAR_TYPES, TENSORDESC_DTYPES,
                                          TENSORDESC_MAX_NUMEL, TENSORDESC_MAX_RANK)

KINDS = ("pointer", "scalar", "tensordesc", "constexpr")


class ArgType(str):
    """One argument's type: its kind and parts, and (as a str) its canonical spelling."""

    kind: str  # one of KINDS
    elem: str | None  # pointer: the element type ("fp16"); tensordesc: its element type
    const: bool  # pointer: Triton's const pointer ("*kfp16")
    block: tuple[int, ...]  # tensordesc: the block shape

    def __new__(cls, kind: str, elem: str | None = None, *, const: bool = False,
                block: tuple[int, ...] = (), scalar: str | None = None) -> "ArgType":
        if kind == "pointer":
            text = f"*{'k' if const else ''}{elem}"
        elif kind == "tensordesc":
            text = f"tensordesc<{elem}[{', '.join(map(str, block))}]>"
        elif kind == "scalar":
            text = scalar
        elif kind == "constexpr":
            text = "constexpr"
        else:
            raise ValueError(f"unknown argument type kind {kind!r}")
        self = super().__new__(cls, text)
        self.kind, self.elem, self.const, self.block = kind, elem, const, tuple(block)
        return self

    def __reduce__(self):  # pickles as its parts (a str subclass would pickle as text)
        return (_rebuild, (self.to_json(),))

    @staticmethod
    def pointer(elem: str, const: bool = False) -> "ArgType":
        return ArgType("pointer", elem, const=const)

    @staticmethod
    def scalar(name: str) -> "ArgType":
        return ArgType("scalar", scalar=name)

    @staticmethod
    def tensordesc(elem: str, block: tuple[int, ...]) -> "ArgType":
        return ArgType("tensordesc", elem, block=block)

    @property
    def is_pointer(self) -> bool:
        return self.kind == "pointer"

    @property
    def is_tensordesc(self) -> bool:
        return self.kind == "tensordesc"

    @property
    def is_constexpr(self) -> bool:
        return self.kind == "constexpr"

    @property
    def rank(self) -> int:
        """A tensor descriptor's rank (the block's dimensions)."""
        return len(self.block)

    def to_json(self) -> dict[str, Any]:
        """The structured JSON form: {"kind": ..., and the kind's parts}."""
        if self.kind == "pointer":
            return {"kind": "pointer", "elem": self.elem, "const": self.const}
        if self.kind == "tensordesc":
            return {"kind": "tensordesc", "elem": self.elem, "block": list(self.block)}
        if self.kind == "scalar":
            return {"kind": "scalar", "name": str(self)}
        return {"kind": "constexpr"}

    @staticmethod
    def from_json(d: Any, where: str) -> "ArgType":
        """An ArgType from `to_json`'s form, each part checked against the type tables; a
        UserError names `where` and the part."""
        kind = d.get("kind") if isinstance(d, dict) else None
        keys = {"pointer": {"kind", "elem", "const"}, "tensordesc": {"kind", "elem", "block"},
                "scalar": {"kind", "name"}, "constexpr": {"kind"}}.get(kind)
        if keys is None or set(d) != keys:
            raise UserError(f"{where}: type {d!r} is not an object of one of the kinds "
                            f"{', '.join(KINDS)} with its parts")
        if kind == "pointer":
            if d["elem"] not in SCALAR_TYPES + FP8_TYPES or not isinstance(d["const"], bool):
                raise UserError(f"{where}: pointer type {d!r}: unknown element type")
            return ArgType.pointer(d["elem"], d["const"])
        if kind == "scalar":
            if d["name"] not in SCALAR_TYPES:
                raise UserError(f"{where}: scalar type {d['name']!r} is not a Triton scalar type")
            return ArgType.scalar(d["name"])
        if kind == "tensordesc":
            block = d["block"]
            if (d["elem"] not in TENSORDESC_DTYPES or not isinstance(block, list)
                    or not 1 <= len(block) <= TENSORDESC_MAX_RANK
                    or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 or b & (b - 1)
                           for b in block)
                    or math.prod(block) > TENSORDESC_MAX_NUMEL):
                raise UserError(f"{where}: tensor descriptor type {d!r}: the element type is "
                                f"not one of {', '.join(TENSORDESC_DTYPES)}, or the block is "
                                f"not 1 to {TENSORDESC_MAX_RANK} powers of two of at most "
                                f"{TENSORDESC_MAX_NUMEL} elements")
            return ArgType.tensordesc(d["elem"], tuple(block))
        return CONSTEXPR


CONSTEXPR = ArgType("constexpr")


def _rebuild(d: dict) -> ArgType:
    return ArgType.from_json(d, "argument type")
