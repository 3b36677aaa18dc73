"""A variant's hint pattern: which arguments the JIT specialised (pointer alignment 16, an
integer that is 16-divisible or 1), as the variant records carry it (`hint_conditions`), as a
call has it, and as `specializations` entries spell it ("a_ptr:16 M:1"). The link step orders
variants by it, the tuner classes tuned points by it."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from triton_aot.core.errors import UserError
from triton_aot.core.triton_types import INT_TYPES

Hints = tuple[tuple[str, int], ...]  # (argument, 16 or 1) of the arguments that have a hint


def can_hint(arg, launch_args=()) -> bool:
    """Whether the JIT specialises this runtime argument (a pointer or an integer)."""
    return (not arg.is_constexpr and arg not in launch_args
            and (arg.is_pointer or arg.type in INT_TYPES))


def address(value: Any) -> int:
    """A tensor's address (meta tensors: the storage offset in bytes), or the int itself."""
    if hasattr(value, "data_ptr"):
        if getattr(getattr(value, "device", None), "type", None) == "meta":
            return value.storage_offset() * value.element_size()
        return value.data_ptr()
    return int(value)


def int_hint(value: int) -> int:
    """Triton's JIT specialisation of an integer argument: 1 when it is one, 16 when 16 divides
    it, else none (0)."""
    return 1 if value == 1 else 16 if value % 16 == 0 else 0


def of_call(record, values: Sequence) -> Hints:
    """The JIT's pattern of a call to a library (`record`: one of its variant records): `values`
    are the C API's arguments after the stream (tensors or ints). Launch
    arguments (only the grid reads them) are never hinted: no variant differs by them."""
    args = record.c_args
    width = sum(len(a.c_params) for a in args)  # a tensor descriptor is several C values
    if len(values) != width:
        raise UserError(f"the call has {len(values)} arguments; the C API takes {width} after "
                        "the stream")
    out, at = [], 0
    for arg in args:
        value, at = values[at], at + len(arg.c_params)
        if not can_hint(arg, record.launch_args):
            continue
        v = address(value)
        if arg.is_pointer:
            if v % 16 == 0:
                out.append((arg.name, 16))
        elif int_hint(v):
            out.append((arg.name, int_hint(v)))
    return tuple(out)


def of_record(record) -> Hints:
    """A variant's hints in the same form."""
    return tuple(record.hint_conditions)


def spelling(hints: Hints) -> str:
    """The `specializations` entry of a pattern: "a_ptr:16 M:1" ("" for no hints)."""
    return " ".join(f"{name}:{hint}" for name, hint in hints)


def parse_spelling(text: str) -> Hints:
    out = []
    for token in text.split():
        name, _, hint = token.partition(":")
        out.append((name, int(hint)))
    return tuple(out)


def dispatch_order(patterns: Iterable[Hints], args: Sequence) -> list[Hints]:
    """The order in which the library tries its variants (triton_aot.emit_c.link): most hints first,
    then the larger hint on the earlier argument; the generic pattern last."""
    def key(p: Hints):
        given = dict(p)
        return (-len(p), tuple(-given.get(a.name, 0) for a in args if not a.is_constexpr))
    return sorted(set(patterns), key=key)
