"""The expression language of a launcher's op record, in C.

A captured launcher's record (`OP` of NAME.launcher.bzl, what `triton_torch_op` takes) writes its
bindings, output shapes, checks and algo conditions in Python syntax over the op's arguments:
`x.size(0)`, `x.stride(-1)`, `x.numel()`, `x.dim()`, scalar arguments, integer and float literals,
`+ - * // / % ( )`, `cdiv(a, b)`, `min(a, b)`, `max(a, b)`, comparisons, `and`, `or`, `not`.
The torch op evaluates them over torch tensors; this module writes the same expressions as C
over the DLPack views of the launcher's C entry (triton_aot.c_entry.entry): sizes and strides
are int64_t, `/`, `//` and `%` are integer division and remainder, a zero divisor gives 0 (as
the torch op's helpers), and a number used as a condition means `!= 0`.

Only what the parser accepted reaches the C text: names are looked up in the tables the caller
gives (tensor and scalar arguments, each with its C variable), literals are re-printed from
their parsed values, so the result is `CCode`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from triton_aot.core.c_syntax import CCode
from triton_aot.core.op_expression import const_int
from triton_aot.core.errors import UserError


@dataclass
class Names:
    """What an expression may name: tensors (name -> C variable of its `trt_view`, and its rank
    when it is known: outputs and intermediates), scalars (name -> C variable)."""

    tensors: dict[str, str]
    ranks: dict[str, int]
    scalars: dict[str, str]
    # filled in while translating: tensor -> the rank its indices need
    needs: dict[str, int] = field(default_factory=dict)


_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def to_c(text: str, names: Names, what: str, boolean: bool = False) -> CCode:
    """`text` as a C expression (int64_t, or int when `boolean`); UserError naming `what`."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise UserError(f"{what}: cannot parse {text!r}: {e.msg}") from None
    return CCode(_Translator(text, names, what).cond(tree) if boolean
                 else _Translator(text, names, what).num(tree))


class _Translator:
    def __init__(self, text: str, names: Names, what: str) -> None:
        self.text, self.names, self.what = text, names, what

    def err(self, problem: str) -> UserError:
        return UserError(f"{self.what}: {self.text!r}: {problem}")

    def cond(self, node: ast.AST) -> str:
        if isinstance(node, ast.BoolOp):
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + joiner.join(self.cond(v) for v in node.values) + ")"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"(!{self.cond(node.operand)})"
        if isinstance(node, ast.Compare):
            parts, left = [], node.left
            for op, right in zip(node.ops, node.comparators):
                if type(op) not in _CMP:
                    raise self.err("only == != < <= > >= comparisons are allowed")
                parts.append(f"({self.num(left)} {_CMP[type(op)]} {self.num(right)})")
                left = right
            return "(" + " && ".join(parts) + ")"
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return "1" if node.value else "0"
        return f"({self.num(node)} != 0)"

    def num(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                return "INT64_C(1)" if value else "INT64_C(0)"
            if isinstance(value, int):
                if not -(1 << 63) <= value < (1 << 63):
                    raise self.err(f"literal {value} does not fit an int64")
                return f"INT64_C({value})" if value >= 0 else f"(-INT64_C({-value}))"
            if isinstance(value, float):
                return repr(value) if value == value and abs(value) != float("inf") else \
                    self._bad(f"literal {value!r} is not finite")
            raise self.err(f"literal {value!r} is not a number")
        if isinstance(node, ast.Name):
            if node.id in self.names.scalars:
                return self.names.scalars[node.id]
            if node.id in self.names.tensors:
                raise self.err(f"tensor {node.id!r} used as a number (use {node.id}.size(0), ...)")
            raise self.err(f"{node.id!r} is not an argument of the launcher")
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{self.num(node.operand)})"
            if isinstance(node.op, ast.UAdd):
                return self.num(node.operand)
            if isinstance(node.op, ast.Not):
                return f"((int64_t){self.cond(node)})"
        if isinstance(node, ast.BinOp):
            if type(node.op) in _ARITH:
                return f"({self.num(node.left)} {_ARITH[type(node.op)]} {self.num(node.right)})"
            if isinstance(node.op, (ast.FloorDiv, ast.Div)):
                return f"trt_entry_div({self.num(node.left)}, {self.num(node.right)})"
            if isinstance(node.op, ast.Mod):
                return f"trt_entry_mod({self.num(node.left)}, {self.num(node.right)})"
            raise self.err(f"the operator {type(node.op).__name__} is not part of the expression "
                           "language (+ - * // / % and cdiv, min, max)")
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return f"((int64_t){self.cond(node)})"
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.err(f"{type(node).__name__} is not part of the expression language")

    def _bad(self, problem: str) -> str:
        raise self.err(problem)

    def call(self, node: ast.Call) -> str:
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("cdiv", "min", "max"):
            if len(node.args) != 2 or node.keywords:
                raise self.err(f"{f.id} takes two arguments")
            return f"trt_entry_{f.id}({self.num(node.args[0])}, {self.num(node.args[1])})"
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
            raise self.err("only cdiv/min/max calls and TENSOR.size(i), .stride(i), .numel(), "
                           ".dim() are allowed")
        tensor, method = f.value.id, f.attr
        if tensor not in self.names.tensors:
            raise self.err(f"{tensor!r} is not a tensor of the launcher")
        var = self.names.tensors[tensor]
        if method in ("numel", "dim"):
            if node.args or node.keywords:
                raise self.err(f"{tensor}.{method}() takes no argument")
            return f"trt_entry_numel(&{var})" if method == "numel" else f"((int64_t){var}.ndim)"
        if method not in ("size", "stride"):
            raise self.err(f"unknown tensor method {method!r} (size, stride, numel, dim)")
        index = const_int(node.args[0]) if len(node.args) == 1 and not node.keywords else None
        if index is None:
            raise self.err(f"{tensor}.{method}() takes one integer literal, e.g. {tensor}.{method}(0)")
        need = index + 1 if index >= 0 else -index
        rank = self.names.ranks.get(tensor)
        if rank is not None and need > rank:
            raise self.err(f"{tensor} has {rank} dimension(s)")
        self.names.needs[tensor] = max(self.names.needs.get(tensor, 0), need)
        field_name = "shape" if method == "size" else "strides"
        position = str(index) if index >= 0 else f"{var}.ndim - {-index}"
        return f"{var}.{field_name}[{position}]"



