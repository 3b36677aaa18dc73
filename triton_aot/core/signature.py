"""Parses --signature, --hints and --constexprs (binding.py binds them to the kernel's parameters).

Pure Python (no triton import), so that input mistakes are reported before the slow parts.

Signature syntax (upstream triton/tools/compile.py, comma separated, one entry per parameter;
the entries may stop before trailing parameters that have a value anyway: a tl.constexpr with a
Python default, set by --constexprs or by a @triton.heuristics, or an argument whose default is
None):
    *fp16   *fp16:16          pointer, optionally 16-byte aligned
    i32  i32:16  i32:1        integer, optionally divisible by 16 / equal to 1
    fp32  bf16 ...            other scalars (no hints)
    128  0.5  True  None  tl.float16  'relu'    value of a tl.constexpr parameter
    BLOCK                     a tl.constexpr whose value comes from --constexprs (must be the
                              parameter's own name)
    None                      also for a parameter that is not tl.constexpr: as the JIT does
                              with a None argument, it becomes the constexpr None
    tensordesc<fp16[128, 64]> a host tensor descriptor (triton.tools.tensor_descriptor.
                              TensorDescriptor) of that element type and block shape, rank 1-5;
                              the commas inside the brackets do not separate entries

Value spellings are Python's: a string constexpr is quoted ('relu'), a dtype is tl.float16.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Union

from triton_aot.core.arg_type import CONSTEXPR, ArgType
from triton_aot.core.errors import UserError
# The type tables are triton_types.py's; parsers and callers read them through here too.
from triton_aot.core.triton_types import (FP8_TYPES, INT_TYPES, SCALAR_TYPES,  # noqa: F401
                                          TENSORDESC_DTYPES, TENSORDESC_MAX_NUMEL,
                                          TENSORDESC_MAX_RANK, TL_DTYPES, TYPE_ALIASES)

VALID_HINTS = (1, 16)

_TENSORDESC = re.compile(r"tensordesc\s*<\s*([A-Za-z0-9_]+)\s*\[([^\]]*)\]\s*>\Z")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"[+-]?[0-9]+\Z")
_DIGITS = re.compile(r"[0-9]{1,20}\Z")  # ASCII only: str.isdigit() also accepts '\u00b2'...
_FLOAT = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?\Z")
# String constexprs end up in C comments and info strings: keep them boring.
_STRING = re.compile(r"""('[A-Za-z0-9_.+\- ]*'|"[A-Za-z0-9_.+\- ]*")\Z""")


# ----------------------------------------------------------------------------- values


@dataclass(frozen=True)
class ConstValue:
    """A tl.constexpr value.

    `value` is JSON-compatible (dtypes are their "tl.float16" spelling); `repr` is the
    canonical source spelling, used in metadata and info strings.
    """

    kind: str  # "int" | "float" | "bool" | "none" | "dtype" | "str"
    value: Union[int, float, bool, str, None]
    repr: str


def parse_value(text: str) -> ConstValue | None:
    """A constexpr literal, or None when `text` is not a literal at all.

    Raises UserError for things that look like a literal but are not valid ones.
    """
    text = text.strip()
    if text in ("True", "False"):
        return ConstValue("bool", text == "True", text)
    if text == "None":
        return ConstValue("none", None, "None")
    if _INT.match(text):
        if len(text.lstrip("+-")) > 20:  # int() refuses > 4300 digits; nothing > 20 fits anyway
            raise UserError(f"integer constant {text[:24]}... does not fit in 64 bits")
        value = int(text)
        if not -2**63 <= value < 2**64:
            raise UserError(f"integer constant {text} does not fit in 64 bits")
        return ConstValue("int", value, str(value))
    if _FLOAT.match(text):
        value = float(text)
        if not math.isfinite(value):
            raise UserError(f"float constant {text} is not finite")
        return ConstValue("float", value, repr(value))
    if text.startswith("tl."):
        name = text[3:]
        if name not in TL_DTYPES:
            raise UserError(f"unknown dtype {text!r}; use one of: "
                            + ", ".join("tl." + d for d in sorted(TL_DTYPES)))
        return ConstValue("dtype", text, text)
    if text[:1] in ("'", '"'):
        if not _STRING.match(text):
            raise UserError(f"string constant {text} must be quoted and contain only letters, "
                            "digits, spaces and _.+-")
        return ConstValue("str", text[1:-1], repr(text[1:-1]))
    return None


# ----------------------------------------------------------------------------- types


@dataclass(frozen=True)
class TensorDescType:
    """`tensordesc<fp16[128, 64]>`: element type and block shape of a host tensor descriptor."""

    dtype: str  # canonical element type
    block: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.block)

    @property
    def spelling(self) -> str:
        """The canonical type: Triton's own spelling (what its JIT specialises to)."""
        return f"tensordesc<{self.dtype}[{', '.join(map(str, self.block))}]>"

    @property
    def arg_type(self) -> ArgType:
        return ArgType.tensordesc(self.dtype, self.block)


def is_tensordesc(type_: str) -> bool:
    return type_.startswith("tensordesc")


def tensordesc_c_names(name: str, rank: int) -> list[str]:
    """The C API parameters a descriptor parameter `name` becomes, in order: its base pointer,
    then its shape, then its strides (elements), as TensorDescriptor(base, shape, strides)."""
    return ([f"{name}_base"] + [f"{name}_shape{i}" for i in range(rank)]
            + [f"{name}_stride{i}" for i in range(rank)])


def parse_tensordesc(text: str, where: str) -> TensorDescType:
    """`tensordesc<DTYPE[B0, B1, ...]>` (rank 1-5, power-of-two block sizes), or a UserError
    that shows the spelling."""
    text = text.strip()
    form = ("write tensordesc<DTYPE[B0, B1, ...]> with DTYPE one of "
            f"{', '.join(TENSORDESC_DTYPES)} and 1 to {TENSORDESC_MAX_RANK} power-of-two block "
            "sizes, e.g. tensordesc<fp16[128, 64]>")
    if text.startswith("tensordesc_im2col") or (text.endswith(">") and "]," in text):
        raise UserError(f"{where}: {text!r}: im2col and Gluon-layout descriptors are not "
                        f"supported; {form}")
    match = _TENSORDESC.match(text)
    if not match:
        raise UserError(f"{where}: cannot parse the tensor descriptor {text!r}; {form}")
    dtype = TYPE_ALIASES.get(match.group(1), match.group(1))
    if dtype not in TENSORDESC_DTYPES:
        raise UserError(f"{where}: {text!r}: element type {match.group(1)!r} cannot be a tensor "
                        f"descriptor's; {form}")
    dims = [d.strip() for d in match.group(2).split(",")]
    if not all(_DIGITS.match(d) for d in dims):
        raise UserError(f"{where}: {text!r}: the block shape must be integers; {form}")
    block = tuple(int(d) for d in dims)
    if not 1 <= len(block) <= TENSORDESC_MAX_RANK:
        raise UserError(f"{where}: {text!r} has rank {len(block)}; {form}")
    numel = 1
    for d in block:
        if d < 1 or d & (d - 1):
            raise UserError(f"{where}: {text!r}: block size {d} is not a power of two; {form}")
        numel *= d
    if numel > TENSORDESC_MAX_NUMEL:
        raise UserError(f"{where}: {text!r}: the block has {numel} elements, more than Triton's "
                        f"{TENSORDESC_MAX_NUMEL}; use a smaller block")
    return TensorDescType(dtype, block)


def canonical_type(text: str) -> ArgType | None:
    """A kernel argument type (its canonical spelling), or None if `text` is not a type name."""
    text = text.strip()
    if text.startswith("tensordesc"):
        return parse_tensordesc(text, "type").arg_type
    if text.startswith("*"):
        pointee = text[1:].strip()
        const = ""
        # Triton spells const pointers "*k<type>"; no element type starts with "k".
        if pointee.startswith("k"):
            const, pointee = "k", pointee[1:]
        pointee = TYPE_ALIASES.get(pointee, pointee)
        if pointee in SCALAR_TYPES or pointee in FP8_TYPES:
            return ArgType.pointer(pointee, const=bool(const))
        return None
    canon = TYPE_ALIASES.get(text, text)
    if canon in SCALAR_TYPES or canon in FP8_TYPES:
        return ArgType.scalar(canon)
    return None


def parse_type(text: str, where: str) -> ArgType:
    """`text` as an ArgType: a canonical_type, or "constexpr"; a UserError naming `where` else.
    For types given as text outside --signature (hand-built records and signatures)."""
    if isinstance(text, ArgType):
        return text
    if text == "constexpr":
        return CONSTEXPR
    type_ = canonical_type(text)
    if type_ is None:
        raise UserError(f"{where}: unknown type {text!r}; use {type_list()}")
    return type_


def type_list() -> str:
    return (", ".join(SCALAR_TYPES) + ", a pointer *T (e.g. *fp16), or a tensor descriptor "
            "tensordesc<T[B0, ...]>")


def check_hint(type_: str, hint: int, where: str) -> None:
    """Hints: :16 on pointers and integers, :1 on integers only."""
    if is_tensordesc(type_):
        raise UserError(f"{where}: a tensor descriptor takes no hint; the launcher checks its "
                        "base and strides for TMA's 16-byte alignment itself")
    if hint not in VALID_HINTS:
        raise UserError(f"{where}: hint :{hint} is not supported; only :16 (divisible by 16) "
                        "and :1 (equal to 1) exist")
    if type_.startswith("*"):
        if hint != 16:
            raise UserError(f"{where}: pointer {type_} can only take the :16 hint "
                            "(16-byte aligned)")
        return
    if type_ not in INT_TYPES:
        raise UserError(f"{where}: {type_} cannot take a hint; hints apply to pointers and "
                        "integer types (i8..i64, u8..u64) only")


# ----------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class TypedEntry:
    """A runtime argument: `i32`, `*fp16:16`, ..."""

    type: ArgType
    hint: int | None


@dataclass(frozen=True)
class ValueEntry:
    """A constexpr given by value in --signature."""

    value: ConstValue


@dataclass(frozen=True)
class NameEntry:
    """A constexpr whose value comes from --constexprs."""

    name: str


SigEntry = Union[TypedEntry, ValueEntry, NameEntry]


def split_entries(text: str, flag: str = "signature") -> list[str]:
    """Splits at the commas outside brackets: `tensordesc<fp16[128, 64]>` is one entry. A bracket
    left open would swallow every later entry, so it is an error of its own."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[<":
            depth += 1
        elif ch in "]>" and depth > 0:
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        rest = text[start:].strip()
        first = rest.split(",")[0].strip()
        raise UserError(f"--{flag}: entry {len(items) + 1} ({first!r}) opens a '<' or '[' that "
                        f"is never closed (everything after it would be one entry: {rest!r}); "
                        "close it, e.g. tensordesc<fp16[128, 64]>")
    items.append(text[start:])
    return items


def _split(text: str, flag: str) -> list[str]:
    items = [item.strip() for item in split_entries(text, flag)]
    for i, item in enumerate(items):
        if not item:
            raise UserError(f"--{flag}: entry {i + 1} is empty in {text!r}; separate entries "
                            "with single commas")
    return items


def parse_entry(text: str, where: str) -> SigEntry:
    entry = _parse_entry(text, where)
    if isinstance(entry, TypedEntry) and entry.type in FP8_TYPES:
        raise UserError(f"{where}: {entry.type} can only be a pointer element type (*{entry.type});"
                        " fp8 scalars have no C ABI")
    return entry


def _parse_entry(text: str, where: str) -> SigEntry:
    if text.startswith("tensordesc"):
        if re.search(r">\s*:", text):  # `tensordesc<...>:16`
            check_hint(parse_tensordesc(text.rpartition(":")[0], where).spelling, 16, where)
        return TypedEntry(parse_tensordesc(text, where).arg_type, None)
    if ":" in text:
        type_text, _, hint_text = text.partition(":")
        type_ = canonical_type(type_text)
        if type_ is None:
            raise UserError(f"{where}: unknown type {type_text.strip()!r}; use {type_list()}")
        hint_text = hint_text.strip()
        if not _DIGITS.match(hint_text):
            raise UserError(f"{where}: hint {hint_text!r} is not a number; use :16 or :1")
        hint = int(hint_text)
        check_hint(type_, hint, where)
        return TypedEntry(type_, hint)
    type_ = canonical_type(text)
    if type_ is not None:
        return TypedEntry(type_, None)
    if text.startswith("*"):
        raise UserError(f"{where}: unknown pointer element type {text[1:].strip()!r}; use "
                        f"*T with T one of {', '.join(SCALAR_TYPES + FP8_TYPES)}")
    try:
        value = parse_value(text)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    if value is not None:
        return ValueEntry(value)
    if _IDENT.match(text):
        return NameEntry(text)
    raise UserError(f"{where}: cannot parse {text!r}; expected a type ({type_list()}), "
                    "a constexpr value, or the name of a tl.constexpr parameter")


def parse_signature(text: str) -> list[SigEntry]:
    if not text or not text.strip():
        raise UserError("--signature is empty; give one entry per kernel parameter, "
                        "e.g. --signature='*fp32:16, i32, 128'")
    return [parse_entry(item, f"--signature entry {i + 1} ({item!r})")
            for i, item in enumerate(_split(text, "signature"))]


def parse_hints(text: str) -> dict[str, int]:
    """`x_ptr:16 n:16, stride:1` -> {"x_ptr": 16, ...}; types are checked when binding."""
    hints: dict[str, int] = {}
    for item in re.split(r"[\s,]+", text.strip()) if text and text.strip() else []:
        name, sep, hint_text = item.partition(":")
        if not sep or not _IDENT.match(name) or not _DIGITS.match(hint_text):
            raise UserError(f"--hints: cannot parse {item!r}; write NAME:16 or NAME:1, "
                            "separated by spaces or commas")
        hint = int(hint_text)
        if hint not in VALID_HINTS:
            raise UserError(f"--hints: {item!r} is not a hint: only :16 and :1 hints exist; write "
                            "NAME:16 (divisible by 16 / 16-byte aligned) or NAME:1 (equal to one)")
        if name in hints and hints[name] != hint:
            raise UserError(f"--hints: {name!r} is given twice with different hints "
                            f"(:{hints[name]} and :{hint}); give each parameter one hint")
        hints[name] = hint
    return hints


def parse_constexprs(text: str) -> dict[str, ConstValue]:
    """`BLOCK=128,DTYPE=tl.float16` -> ordered {name: value}."""
    result: dict[str, ConstValue] = {}
    if not text or not text.strip():
        return result
    for item in _split(text, "constexprs"):
        name, sep, value_text = item.partition("=")
        name = name.strip()
        if not sep or not _IDENT.match(name):
            raise UserError(f"--constexprs: cannot parse {item!r}; write NAME=VALUE, "
                            "comma separated")
        try:
            value = parse_value(value_text)
        except UserError as e:
            raise UserError(f"--constexprs: {name}: {e}") from None
        if value is None:
            raise UserError(f"--constexprs: {name}={value_text.strip()!r} is not a value; use an "
                            "integer, float, True/False, None, tl.<dtype> or a quoted string")
        if name in result:
            raise UserError(f"--constexprs: {name!r} is given twice")
        result[name] = value
    return result
