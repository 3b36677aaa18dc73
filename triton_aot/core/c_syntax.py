"""C syntax: the only functions that turn record values into C text.

Each returns a `CCode`, a str that is known to be safe to splice into generated C. The renderer
(triton_aot.emit_c.c_render) accepts nothing else (and ints), so a value from a variant record or a
flag reaches the generated C only through one of these checks or escapes: metadata cannot
inject C.
"""

from __future__ import annotations

import re
from typing import Iterable

from triton_aot.core import abi
from triton_aot.core.errors import UserError

# Bytes of cubin per line of the embedded string literal; see tests/link/measure_compile_time.py.
BYTES_PER_LINE = 64


class CCode(str):
    """C text that came out of this module (or a template): safe to splice."""


def join(parts: Iterable[str], sep: str = "") -> CCode:
    """Concatenates C text that is already safe (CCode pieces and literal separators)."""
    items = list(parts)
    for item in items:
        if not isinstance(item, CCode):
            raise TypeError(f"join() got unchecked text {item!r}")
    return CCode(sep.join(items))


def ident(name: object, what: str) -> CCode:
    """A checked C identifier (abi.check_c_identifier)."""
    return CCode(abi.check_c_identifier(name, what))


def param(name: object) -> CCode:
    """The C name of kernel parameter or launch argument `name` (abi.c_param_name): the name, or
    its trt_ spelling when C cannot use it as it is."""
    return CCode(abi.c_param_name(name))


def comment(value: object) -> CCode:
    """Text safe inside a /* */ comment: one ASCII line that cannot close the comment."""
    text = str(value).encode("ascii", "backslashreplace").decode("ascii")
    text = re.sub(r"[\r\n\t\f\v]+", " ", text)
    return CCode(text.replace("*/", "* /").replace("/*", "/ *"))


_PRINTABLE = {c: chr(c) for c in range(0x20, 0x7F)}
# Escape the quote and backslash; escape '?' to rule out trigraphs (??=) under -std=c99/-trigraphs.
for _c in b'"\\?':
    del _PRINTABLE[_c]
# Always three octal digits: an octal escape stops after three, so a following digit is safe
# (a \x escape would swallow it).
_ESCAPE = [_PRINTABLE.get(c, "\\%03o" % c) for c in range(256)]


def string_literal(data: bytes, indent: str = "    ",
                   bytes_per_line: int = BYTES_PER_LINE) -> CCode:
    """Bytes as adjacent C string literals, one line per `bytes_per_line` input bytes."""
    if not data:
        return CCode(indent + '""')
    esc = _ESCAPE
    lines = []
    for start in range(0, len(data), bytes_per_line):
        chunk = data[start:start + bytes_per_line]
        lines.append(indent + '"' + "".join([esc[b] for b in chunk]) + '"')
    return CCode("\n".join(lines))


def string_body(text: str) -> CCode:
    """A short text as the inside of a C string literal (ASCII, escaped)."""
    return CCode("".join(_ESCAPE[b] for b in text.encode("utf-8")))


_GRID_EXPR = re.compile(r"^[A-Za-z0-9_ +\-*/%()<>=!&|^~?:,.]+$")
# Assignments and ++/-- would change an argument before it is passed to the kernel.
_SIDE_EFFECT = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)|[-+*/%&|^]=|<<=|>>=")


def grid_expression(expr: object, what: str) -> CCode:
    """A grid C expression from a record (written by triton_aot.core.grid.to_c): refuses anything that
    could end the expression, open a comment or preprocessor line, or assign."""
    if (not isinstance(expr, str) or not _GRID_EXPR.match(expr) or "/*" in expr or "//" in expr
            or "*/" in expr or _SIDE_EFFECT.search(expr)):
        raise UserError(f"{what} {expr!r} is not a plain C expression")
    return CCode(expr)
