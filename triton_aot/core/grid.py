"""--grid: validated launch-grid expressions, turned into safe C.

The grid text becomes C source inside the generated launcher, so it is parsed by a small
tokenizer + recursive-descent parser (never Python eval/ast) and re-emitted from the parse
tree. Only these are accepted:
    the kernel's non-constexpr integer arguments (i8..i64, u8..u64), the shape of a tensor
    descriptor argument `d` (d_shape0, d_shape1, ...: its int64 C parameters), launch-only arguments
    (--launch_args: integers the grid uses that the kernel never receives), integer literals,
    + - * / % ( ), cdiv(a, b), min(a, b), max(a, b), and device attributes of the current
    device (DEVICE_ATTRS: NUM_SMS, the multiprocessor count, read once per context and cached
    by the runtime).
Everything else (unknown or constexpr names, float/bool/pointer arguments, other calls, `;`,
strings, braces, ...) is rejected with an error naming the offending token.

Entries: 1 to 3 comma-separated expressions; missing trailing dimensions are padded with 1
(`--grid="cdiv(n, 128)"` == `--grid="cdiv(n, 128), 1, 1"`).

C semantics: every value is converted to int64_t and all arithmetic is int64_t; `/` and `%`
truncate as in C (the upstream form `(M + 63) / 64` keeps its meaning); cdiv(a, b) is
((a)+(b)-1)/(b). A zero divisor (in /, % or cdiv) yields -1 instead of undefined behaviour,
so the launcher rejects the launch (any negative dimension is invalid) rather than crashing.
A `:1`-specialised argument is the literal 1 (it is not a launcher parameter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, Union

from triton_aot.core import abi
from triton_aot.core.binding import BoundSignature
from triton_aot.core.errors import UserError
from triton_aot.core.reset_to_zero import EXTENT_COUNTS, FORMS_TEXT, Region
from triton_aot.core.signature import is_tensordesc, parse_tensordesc, tensordesc_c_names
from triton_aot.core.triton_types import INT_TYPES

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_DEPTH = 32  # nesting limit: keeps the recursive parser far from Python's stack limit
_INT64_MAX = 2**63 - 1

_ALLOWED = ("integer arguments, launch arguments, integer literals, + - * / % ( ), cdiv(a, b), "
            "min(a, b), max(a, b) and NUM_SMS")

# Device attributes a grid may name: grid name -> (C variable of the launcher, the runtime's
# trt_attr enum value (trt_runtime.h), what it is). The launcher reads each one it uses through the runtime (trt_device_attribute),
# which caches it per context; the C variable is reserved (trt_ prefix), so no argument clashes.
DEVICE_ATTRS = {
    "NUM_SMS": ("trt_attr_num_sms", "TRT_ATTR_NUM_SMS",  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
                "the current device's multiprocessor count"),
}
_FUNCTIONS = ("cdiv", "min", "max")


# ----------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class Token:
    kind: str  # "int" | "name" | "op" | "end"
    text: str
    pos: int  # 0-based offset in the --grid text


_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|"
                    r"(?P<op>[-+*/%(),]))")


def tokenize(text: str, what: str = "--grid") -> list[Token]:
    tokens = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise _error(text, pos, text[pos], f"character {text[pos]!r} is not allowed", what)
        kind = match.lastgroup
        start = match.start(kind)
        tokens.append(Token(kind, match.group(kind), start))
        pos = match.end()
        if kind == "op" and match.group(kind) == "/" and text.startswith("/", pos):
            raise _error(text, start, "//", "'//' is not allowed; use / (C integer division)",
                         what)
    tokens.append(Token("end", "", len(text)))
    return tokens


def _error(text: str, pos: int, token: str, problem: str, what: str = "--grid") -> UserError:
    """`what`: the expression's owner as the message names it (`--grid`, or
    `--reset_to_zero: c_ptr` for a reset_to_zero extent, which uses the same language)."""
    kind = ("grid entries" if what == "--grid" else
            f"reset_to_zero extents (the grid's language without {', '.join(DEVICE_ATTRS)})")
    allowed = _ALLOWED if what == "--grid" else _ALLOWED.replace(" and NUM_SMS", "")
    return UserError(f"{what}: {problem} (token {token!r} at column {pos + 1} of {text!r}); "
                     f"{kind} may only use {allowed}")


# ----------------------------------------------------------------------------- tree


@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Arg:
    name: str
    one: bool  # specialised `:1`: the constant 1 in C


@dataclass(frozen=True)
class Neg:
    operand: "Expr"


@dataclass(frozen=True)
class Bin:
    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class CDiv:
    num: "Expr"
    den: "Expr"


@dataclass(frozen=True)
class MinMax:
    fn: str  # "min" | "max"
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class DevAttr:
    name: str  # a key of DEVICE_ATTRS


Expr = Union[Num, Arg, Neg, Bin, CDiv, MinMax, DevAttr]


# ----------------------------------------------------------------------------- parser


@dataclass(frozen=True)
class _Symbol:
    kind: str  # "int" | "one" | "attr" | "reject"
    why: str  # for "reject": what the name is and what to write instead


def _symbols(sig: BoundSignature, launch_args: Sequence["LaunchArg"] = ()
             ) -> dict[str, _Symbol]:
    symbols = {name: _Symbol("attr", "") for name in DEVICE_ATTRS}
    for a in sig.args:
        if a.is_constexpr:
            value = a.value.repr if a.value else "?"
            fix = (f"write its value {value} instead" if a.value and a.value.kind == "int" else
                   "grids can only use integer arguments")
            symbols[a.name] = _Symbol("reject", f"{a.name!r} is a tl.constexpr (= {value}); {fix}")
        elif a.type in INT_TYPES:
            symbols[a.name] = _Symbol("one" if a.is_one else "int", "")
        elif is_tensordesc(a.type):
            # the descriptor's shape is int64 C parameters (NAME_shape0, ...): grids may use it
            rank = parse_tensordesc(a.type, a.name).rank
            names = tensordesc_c_names(a.name, rank)
            for shape in names[1:1 + rank]:
                symbols[shape] = _Symbol("int", "")
            symbols[a.name] = _Symbol("reject", f"{a.name!r} is a tensor descriptor ({a.type}); "
                                      f"grids can use its shape: {', '.join(names[1:1 + rank])}")
        else:
            kind = ("a pointer" if a.type.startswith("*") else
                    "a boolean" if a.type in ("i1", "u1") else "a floating-point")
            symbols[a.name] = _Symbol("reject", f"{a.name!r} is {kind} argument ({a.type}); "
                                      "grids can only use integer arguments")
        if a.name in DEVICE_ATTRS:
            symbols[a.name] = _Symbol("reject", f"{a.name!r} names both a kernel parameter and "
                                      f"the device attribute {a.name} ({DEVICE_ATTRS[a.name][2]}); "
                                      "rename the parameter to use the attribute")
    for la in launch_args:
        symbols[la.name] = _Symbol("int", "")
    return symbols


class _Parser:

    def __init__(self, text: str, symbols: dict[str, _Symbol],
                 launch_names: Sequence[str] = (), what: str = "--grid") -> None:
        self.launch_names = list(launch_names)
        self.text = text
        self.what = what
        self.tokens = tokenize(text, what)
        self.i = 0
        self.depth = 0
        self.symbols = symbols

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def fail(self, tok: Token, problem: str) -> UserError:
        return _error(self.text, tok.pos, tok.text or "<end>", problem, self.what)

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok.text != text:
            raise self.fail(tok, f"expected {text!r}")

    def nest(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(tok, f"expression nested deeper than {MAX_DEPTH} levels")

    def entries(self) -> list[Expr]:
        if self.peek().kind == "end":
            raise self.fail(self.peek(), "the grid is empty" if self.what == "--grid" else
                            "the extent is empty")
        result = [self.expr()]
        while self.peek().text == ",":
            self.take()
            result.append(self.expr())
        tok = self.peek()
        if tok.kind != "end":
            raise self.fail(tok, "unexpected token")
        return result

    def expr(self) -> Expr:
        node = self.term()
        while self.peek().text in ("+", "-"):
            op = self.take().text
            node = Bin(op, node, self.term())
        return node

    def term(self) -> Expr:
        node = self.unary()
        while self.peek().text in ("*", "/", "%"):
            op = self.take().text
            node = Bin(op, node, self.unary())
        return node

    def unary(self) -> Expr:
        tok = self.peek()
        if tok.text in ("-", "+"):
            self.take()
            self.nest(tok)
            operand = self.unary()
            self.depth -= 1
            return Neg(operand) if tok.text == "-" else operand
        return self.primary()

    def primary(self) -> Expr:
        tok = self.take()
        if tok.kind == "int":
            if len(tok.text) > 19:
                raise self.fail(tok, "integer literal does not fit in int64_t")
            value = int(tok.text)
            if len(tok.text) > 1 and tok.text[0] == "0":
                raise self.fail(tok, "integer literals must not have leading zeros (C would "
                                "read them as octal)")
            if value > _INT64_MAX:
                raise self.fail(tok, "integer literal does not fit in int64_t")
            return Num(value)
        if tok.kind == "name":
            if self.peek().text == "(":
                if tok.text not in _FUNCTIONS:
                    raise self.fail(tok, f"function {tok.text!r} is not allowed; the functions "
                                    "are cdiv(a, b), min(a, b) and max(a, b)")
                self.take()
                self.nest(tok)
                num = self.expr()
                self.expect(",")
                den = self.expr()
                self.expect(")")
                self.depth -= 1
                return CDiv(num, den) if tok.text == "cdiv" else MinMax(tok.text, num, den)
            symbol = self.symbols.get(tok.text)
            if symbol is None:
                known = [n for n, s in self.symbols.items() if s.kind in ("int", "one")
                         and n not in self.launch_names]
                hint = (f"the kernel's integer arguments are {', '.join(known)}" if known else
                        "the kernel has no integer arguments")
                if self.launch_names:
                    hint += f"; launch arguments: {', '.join(self.launch_names)}"
                raise self.fail(tok, f"unknown name {tok.text!r} ({hint}); a grid value the "
                                "kernel does not take must be declared as a launch argument "
                                "(launch_args / --launch_args)")
            if symbol.kind == "reject":
                raise self.fail(tok, symbol.why)
            if symbol.kind == "attr":
                return DevAttr(tok.text)
            return Arg(tok.text, symbol.kind == "one")
        if tok.text == "(":
            self.nest(tok)
            node = self.expr()
            self.expect(")")
            self.depth -= 1
            return node
        raise self.fail(tok, "expected a number, an argument name, cdiv(, min(, max( or (")


# ----------------------------------------------------------------------------- output

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


def to_source(node: Expr, parent: int = 0) -> str:
    """Canonical source form (minimal parentheses), stored in the metadata's "grid"."""
    if isinstance(node, Num):
        return str(node.value)
    if isinstance(node, (Arg, DevAttr)):
        return node.name
    if isinstance(node, CDiv):
        return f"cdiv({to_source(node.num)}, {to_source(node.den)})"
    if isinstance(node, MinMax):
        return f"{node.fn}({to_source(node.left)}, {to_source(node.right)})"
    if isinstance(node, Neg):
        inner = to_source(node.operand, 3)
        return f"-({inner})" if isinstance(node.operand, Neg) else f"-{inner}"
    prec = _PREC[node.op]
    text = f"{to_source(node.left, prec)} {node.op} {to_source(node.right, prec + 1)}"
    return f"({text})" if prec < parent else text


_C_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}


def to_c(node: Expr) -> str:
    """A side-effect-free int64_t C expression over the trt_grid_* helpers of runtime.inc: each
    operand appears once (the C is linear in the grid's size), and overflow, INT64_MIN / -1 and
    zero divisors give INT64_MIN, which every later operation keeps and the launcher rejects."""
    if isinstance(node, Num):
        return f"(int64_t){node.value}"
    if isinstance(node, Arg):
        # `:1` arguments are not launcher parameters: the grid sees the constant.
        return "(int64_t)1" if node.one else f"(int64_t){abi.c_param_name(node.name)}"
    if isinstance(node, Neg):
        return f"trt_grid_neg({to_c(node.operand)})"
    if isinstance(node, DevAttr):
        # set by the launcher before the grid (the runtime's per-context cached attribute)
        return DEVICE_ATTRS[node.name][0]
    if isinstance(node, CDiv):
        return f"trt_grid_cdiv({to_c(node.num)}, {to_c(node.den)})"
    if isinstance(node, MinMax):
        return f"trt_grid_{node.fn}({to_c(node.left)}, {to_c(node.right)})"
    return f"trt_grid_{_C_OPS[node.op]}({to_c(node.left)}, {to_c(node.right)})"


@dataclass(frozen=True)
class Grid:
    source: tuple[str, str, str]  # canonical source of each dimension
    c: tuple[str, str, str]  # C expression of each dimension (int64_t)

    @property
    def device_attrs(self) -> tuple[str, ...]:
        return device_attrs_of(self.c)


def parse_grid(text: str, sig: BoundSignature,
               launch_args: Sequence["LaunchArg"] = ()) -> Grid:
    if text is None or not text.strip():
        raise UserError("--grid is empty; give 1 to 3 comma-separated expressions, "
                        "e.g. --grid='cdiv(n, 128), 1, 1'")
    exprs = _Parser(text, _symbols(sig, launch_args), [a.name for a in launch_args]).entries()
    if len(exprs) > 3:
        raise UserError(f"--grid has {len(exprs)} entries in {text!r}; give 1 to 3 "
                        "(missing ones are 1)")
    exprs += [Num(1)] * (3 - len(exprs))
    return Grid(tuple(to_source(e) for e in exprs), tuple(to_c(e) for e in exprs))


def device_attrs_of(grid_c: Sequence[str]) -> tuple[str, ...]:
    """The device attributes (DEVICE_ATTRS keys) that grid C expressions read, in table order."""
    return tuple(name for name, (var, _, _) in DEVICE_ATTRS.items()
                 if any(re.search(rf"\b{var}\b", e) for e in grid_c))


def sm_bound_tiles(grid_source: Sequence[str], rows: str, columns: str) -> tuple[int, int] | None:
    """(tile rows, tile columns) when the grid is a persistent GEMM's: min(NUM_SMS,
    cdiv(rows, TM) * cdiv(columns, TN)) programs (either order in min and in the product), 1, 1,
    with `rows` and `columns` the argument names of the output's extents. Its programs then walk
    the tiles NUM_SMS apart, so the time goes by whole waves of tiles over the SMs. None for any
    other grid."""
    symbols = {name: _Symbol("attr", "") for name in DEVICE_ATTRS}
    symbols.update({rows: _Symbol("int", ""), columns: _Symbol("int", "")})
    try:
        exprs = [_Parser(text, symbols).entries() for text in grid_source]
    except UserError:  # reads another argument: not this form
        return None
    if len(exprs) != 3 or any(len(e) != 1 for e in exprs) or exprs[1:] != [[Num(1)], [Num(1)]]:
        return None
    x = exprs[0][0]
    if not isinstance(x, MinMax) or x.fn != "min":
        return None
    sms, tiles = ((x.left, x.right) if x.left == DevAttr("NUM_SMS") else (x.right, x.left))
    if sms != DevAttr("NUM_SMS") or not isinstance(tiles, Bin) or tiles.op != "*":
        return None
    extents = {}
    for factor in (tiles.left, tiles.right):
        if not (isinstance(factor, CDiv) and isinstance(factor.num, Arg)
                and isinstance(factor.den, Num) and factor.den.value > 0):
            return None
        extents[factor.num.name] = factor.den.value
    if set(extents) != {rows, columns}:
        return None
    return extents[rows], extents[columns]


# ----------------------------------------------------------------------------- launch arguments


@dataclass(frozen=True)
class LaunchArg:
    """An integer the grid may use that is not a kernel argument: a parameter of the C API (after
    the kernel's arguments), never passed to the kernel."""

    name: str
    type: str  # one of INT_TYPES


_LAUNCH_ARG = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([a-z0-9]+)\s*\Z")


def parse_launch_args(text: str, sig: BoundSignature) -> tuple[LaunchArg, ...]:
    """`n_rows: i32, n_cols: i64`: comma-separated `name: type` entries, in C API order."""
    if not text or not text.strip():
        return ()
    kernel = sig.by_name()
    out: list[LaunchArg] = []
    for entry in text.split(","):
        m = _LAUNCH_ARG.match(entry)
        if not m:
            raise UserError(f"--launch_args: entry {entry.strip()!r} is not 'name: type'; write "
                            "e.g. --launch_args='n_rows: i32, n_cols: i64'")
        name, ty = m.group(1), m.group(2)
        if ty not in INT_TYPES:
            raise UserError(f"--launch_args: {name!r} has type {ty!r}; launch arguments are "
                            f"integers: use one of {', '.join(INT_TYPES)}")
        if name in ("stream", "algo_id"):
            raise UserError(f"--launch_args: {name!r} is a parameter of the C API itself; "
                            "rename the launch argument")
        descriptor = next((a.name for a in sig.args if is_tensordesc(a.type) and name in
                           tensordesc_c_names(a.name, parse_tensordesc(a.type, a.name).rank)),
                          None)
        if descriptor is not None:
            raise UserError(f"--launch_args: {name!r} is already a C parameter of the tensor "
                            f"descriptor {descriptor!r}; rename the launch argument")
        if name in kernel:
            raise UserError(f"--launch_args: {name!r} is already a parameter of the kernel; a "
                            "launch argument is a grid value the kernel does not take: use the "
                            "kernel's argument in the grid, or rename the launch argument")
        if name in DEVICE_ATTRS:
            raise UserError(f"--launch_args: {name!r} is a device attribute "
                            f"({DEVICE_ATTRS[name][2]}); rename the launch argument")
        if any(a.name == name for a in out):
            raise UserError(f"--launch_args: {name!r} is given twice; give each launch argument "
                            "once")
        out.append(LaunchArg(name, ty))
    return tuple(out)


# ----------------------------------------------------------------------------- reset_to_zero
# (the regions and their forms: triton_aot/core/reset_to_zero.py)

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def parse_reset_to_zero(entries: Sequence[str], sig: BoundSignature,
                        launch_args: Sequence[LaunchArg] = (),
                        algo_index: int | None = None) -> tuple[Region, ...]:
    """`--reset_to_zero=NAME=EXTENTS` entries -> regions, in the kernel's parameter order.

    NAME is a pointer argument of the kernel; EXTENTS is `count` or `rows, cols, row_stride` in
    the grid's language without device attributes (a tensor's size is the caller's, not the
    device's). `{CONSTEXPR}` placeholders take the variant's integer constexpr values (the rule
    fills them per algo before; on the command line they read --constexprs)."""
    where = "" if algo_index is None else f" (algo {algo_index})"
    args = sig.by_name()
    constexprs = {a.name: a.value for a in sig.args if a.is_constexpr}
    regions: dict[str, Region] = {}
    for entry in entries:
        name, eq, text = entry.partition("=")
        name = name.strip()
        if not eq or not _IDENT.match(name):
            raise UserError(f"--reset_to_zero{where}: entry {entry!r} is not NAME=EXTENTS; write "
                            "e.g. --reset_to_zero='c_ptr=M, N, stride_cm' (2-D) or "
                            "--reset_to_zero='out_ptr=n' (1-D)")
        what = f"--reset_to_zero{where}: {name}"
        a = args.get(name)
        if a is None:
            pointers = [p.name for p in sig.args if p.type.startswith("*")]
            raise UserError(f"{what}: {name!r} is not an argument of the kernel; reset_to_zero "
                            "names the pointer argument to zero (the kernel's pointer arguments: "
                            f"{', '.join(pointers) or 'none'})")
        if a.is_constexpr or not a.type.startswith("*"):
            kind = ("a constexpr (None: not an argument of the compiled kernel)"
                    if a.is_constexpr and a.value is not None and a.value.kind == "none" else
                    "a tl.constexpr" if a.is_constexpr else
                    f"a tensor descriptor ({a.type})" if is_tensordesc(a.type) else
                    f"a scalar argument ({a.type})")
            raise UserError(f"{what}: {name!r} is {kind}, not a pointer; reset_to_zero zeroes "
                            "the memory a pointer argument (*fp32, *fp16, ...) points to")
        if name in regions:
            raise UserError(f"{what}: {name!r} is given twice; give each pointer one region")

        def fill(m: "re.Match[str]") -> str:
            key = m.group(1)
            value = constexprs.get(key)
            if value is None or value.kind != "int":
                ints = [k for k, v in constexprs.items() if v is not None and v.kind == "int"]
                raise UserError(f"{what}: {{{key}}} in {text.strip()!r} is not an integer "
                                "constexpr of this algo (its integer constexprs: "
                                f"{', '.join(ints) or 'none'}); name one of them, or write the "
                                "value")
            return value.repr

        filled = _PLACEHOLDER.sub(fill, text)
        symbols = _symbols(sig, launch_args)
        for attr, (_, _, meaning) in DEVICE_ATTRS.items():
            if symbols.get(attr) and symbols[attr].kind == "attr":
                symbols[attr] = _Symbol("reject", f"{attr} ({meaning}) cannot size a "
                                        "reset_to_zero region: the region is the tensor the "
                                        "arguments describe, not the device's")
        if not filled.strip():
            raise UserError(f"{what}: the extent is empty; give {FORMS_TEXT}")
        exprs = _Parser(filled, symbols, [la.name for la in launch_args], what).entries()
        if len(exprs) not in EXTENT_COUNTS:
            raise UserError(f"{what}: {text.strip()!r} has {len(exprs)} expressions; give "
                            f"{FORMS_TEXT}")
        regions[name] = Region(name, tuple(to_source(e) for e in exprs),
                                   tuple(to_c(e) for e in exprs))
    order = [a.name for a in sig.args]
    return tuple(sorted(regions.values(), key=lambda r: order.index(r.name)))
