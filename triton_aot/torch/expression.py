"""The expression language of an op's bindings, output shapes and checks, in C++ and Python.

Python syntax over the op's arguments: `a.size(0)`, `a.stride(-1)`, `a.numel()`, `a.dim()`,
scalar arguments, integer and float literals, `+ - * // % ( )`, `cdiv(x, y)`, `min(x, y)`,
`max(x, y)`, and in checks comparisons with `and`, `or`, `not`. Each expression is translated
once to C++ (the op) and once to Python (its fake, over symbolic sizes).
"""

from __future__ import annotations

import ast
from typing import Optional

from triton_aot.core.op_expression import const_int
from triton_aot.torch.schema import Arg, fail

class Expr:
    """Translates one expression of the op's language to C++ and to Python."""

    def __init__(self, op: str, what: str, text: str, args: dict[str, Arg], tensors: set[str],
                 boolean: bool = False) -> None:
        self.op, self.what, self.text = op, what, text
        self.args, self.tensors = args, tensors
        self.dims: dict[str, int] = {}  # tensor -> minimum rank the expression needs
        self.strided: set[str] = set()  # tensors whose strides it reads
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as e:
            raise fail(op, f"{what}: cannot parse {text!r}: {e.msg}") from None
        self.cc = self._cc(tree, boolean)
        self.py = self._py(tree, boolean)

    def _err(self, problem: str) -> UserError:
        return fail(self.op, f"{self.what}: {self.text!r}: {problem}")

    def _tensor_call(self, node: ast.Call) -> tuple[str, str, Optional[int]]:
        f = node.func
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
            raise self._err("only cdiv/min/max calls and TENSOR.size(i), .stride(i), .numel(), "
                            ".dim() are allowed")
        tensor, method = f.value.id, f.attr
        if tensor not in self.tensors:
            raise self._err(f"{tensor!r} is not a tensor argument of the op")
        if method in ("numel", "dim"):
            if node.args:
                raise self._err(f"{tensor}.{method}() takes no argument")
            return tensor, method, None
        if method not in ("size", "stride"):
            raise self._err(f"unknown tensor method {method!r} (size, stride, numel, dim)")
        if len(node.args) != 1 or not isinstance(const_int(node.args[0]), int):
            raise self._err(f"{tensor}.{method}() takes one integer literal, e.g. {tensor}.{method}(0)")
        index = const_int(node.args[0])
        need = index + 1 if index >= 0 else -index
        self.dims[tensor] = max(self.dims.get(tensor, 0), need)
        if method == "stride":
            self.strided.add(tensor)
        return tensor, method, index

    def _cc(self, node: ast.AST, boolean: bool) -> str:
        c = lambda n: self._cc(n, False)  # noqa: E731
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return "true" if node.value else "false"
            if isinstance(node.value, int):
                return f"INT64_C({node.value})"
            if isinstance(node.value, float):
                return repr(node.value)
            raise self._err(f"literal {node.value!r} is not a number")
        if isinstance(node, ast.Name):
            if node.id not in self.args:
                raise self._err(f"{node.id!r} is not an argument of the op")
            if self.args[node.id].kind == "Tensor":
                raise self._err(f"tensor {node.id!r} used as a number (use {node.id}.size(0), ...)")
            return f"v_{node.id}"
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in ("cdiv", "min", "max"):
                if len(node.args) != 2:
                    raise self._err(f"{node.func.id} takes two arguments")
                a, b = c(node.args[0]), c(node.args[1])
                if node.func.id == "cdiv":
                    return f"trt_cdiv({a}, {b})"
                return f"std::{node.func.id}<int64_t>({a}, {b})"
            tensor, method, index = self._tensor_call(node)
            if method in ("numel", "dim"):
                return f"t_{tensor}.{method}()"
            return f"t_{tensor}.{method}({index})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{c(node.operand)})"
            if isinstance(node.op, ast.Not):
                return f"(!{self._cc(node.operand, True)})"
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Div: "/",
                   ast.Mod: "%"}
            if type(node.op) in ops:
                if isinstance(node.op, (ast.FloorDiv, ast.Div, ast.Mod)):
                    return f"trt_{'mod' if isinstance(node.op, ast.Mod) else 'div'}({c(node.left)}, {c(node.right)})"
                return f"({c(node.left)} {ops[type(node.op)]} {c(node.right)})"
        if isinstance(node, ast.BoolOp):
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + joiner.join(self._cc(v, True) for v in node.values) + ")"
        if isinstance(node, ast.Compare):
            cmp = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
                   ast.GtE: ">="}
            parts, left = [], node.left
            for o, right in zip(node.ops, node.comparators):
                if type(o) not in cmp:
                    raise self._err("only == != < <= > >= comparisons are allowed")
                parts.append(f"({c(left)} {cmp[type(o)]} {c(right)})")
                left = right
            return "(" + " && ".join(parts) + ")"
        raise self._err(f"{type(node).__name__} is not part of the expression language")

    def _py(self, node: ast.AST, boolean: bool) -> str:
        # Python evaluates the same syntax over fake tensors, whose sizes may be symbolic, with
        # no guard on them: `/` on sizes means integer division, as in C++; cdiv, min, max,
        # `and`, `or`, `not` and chained comparisons are the generated module's helpers (the
        # builtins would turn a symbolic size into a constant); a number used as a condition
        # means `!= 0`, as in C++.
        def cond(n: ast.AST) -> ast.AST:
            if isinstance(n, ast.Compare) or \
                    (isinstance(n, ast.Call) and getattr(n.func, "id", "") in PY_LOGIC) or \
                    (isinstance(n, ast.Constant) and isinstance(n.value, bool)):
                return n
            return ast.Compare(n, [ast.NotEq()], [ast.Constant(0)])

        def helper(name: str, operands: list[ast.AST]) -> ast.Call:
            return ast.Call(ast.Name(name, ast.Load()), operands, [])

        class ToPython(ast.NodeTransformer):
            def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
                self.generic_visit(n)
                if isinstance(n.op, ast.Div):
                    n.op = ast.FloorDiv()
                return n

            def visit_Call(self, n: ast.Call) -> ast.AST:
                self.generic_visit(n)
                if isinstance(n.func, ast.Name) and n.func.id in PY_FUNCTIONS:
                    n.func = ast.Name(PY_FUNCTIONS[n.func.id], ast.Load())
                return n

            def visit_BoolOp(self, n: ast.BoolOp) -> ast.AST:
                self.generic_visit(n)
                return helper("_and" if isinstance(n.op, ast.And) else "_or",
                              [cond(v) for v in n.values])

            def visit_UnaryOp(self, n: ast.UnaryOp) -> ast.AST:
                self.generic_visit(n)
                return helper("_not", [cond(n.operand)]) if isinstance(n.op, ast.Not) else n

            def visit_Compare(self, n: ast.Compare) -> ast.AST:
                self.generic_visit(n)
                if len(n.ops) == 1:
                    return n
                lefts = [n.left] + n.comparators[:-1]
                return helper("_and", [ast.Compare(a, [o], [b]) for a, o, b in
                                       zip(lefts, n.ops, n.comparators)])

        tree = ToPython().visit(ast.parse(ast.unparse(node), mode="eval")).body
        return ast.unparse(cond(tree) if boolean else tree)


# The expression language's functions -> the generated module's helpers (PY_TEMPLATE).
PY_FUNCTIONS = {"cdiv": "_cdiv", "min": "_min", "max": "_max"}
PY_LOGIC = ("_and", "_or", "_not")  # `and`, `or`, `not`







