"""Size expressions (the ShapeEnv's sympy) rendered in the grid language of the rules.

The grid language (triton_aot.core.grid, docs/kernels.md) has integer names, literals, + - * / %,
cdiv, min and max; `/` truncates as in C, which equals Python's floor division for the
non-negative sizes a grid is made of. `(x + 15) // 16`, which `triton.cdiv` leaves, is written
back as `cdiv(x, 16)`.
"""

from __future__ import annotations

from typing import Any, Callable

from triton_aot.core.errors import UserError


def render(expr: Any, name_of: Callable[[Any], str]) -> str:
    """`expr` (sympy) in the grid language; `name_of(symbol)` names a size."""
    import sympy
    from torch.utils._sympy.functions import CeilDiv, FloorDiv, Max, Min, Mod, PythonMod

    def r(e: Any) -> str:
        if isinstance(e, sympy.Integer):
            return str(int(e)) if int(e) >= 0 else f"(0 - {-int(e)})"
        if isinstance(e, sympy.Symbol):
            return name_of(e)
        if isinstance(e, sympy.Add):
            pos = [t for t in e.args if not t.could_extract_minus_sign()]
            neg = [-t for t in e.args if t.could_extract_minus_sign()]
            text = " + ".join(r(t) for t in pos) or "0"
            for t in neg:
                text += f" - {r(t)}"
            return f"({text})"
        if isinstance(e, sympy.Mul):
            return "(" + " * ".join(r(t) for t in e.args) + ")"
        if isinstance(e, sympy.Pow) and isinstance(e.exp, sympy.Integer) and int(e.exp) > 0:
            return "(" + " * ".join([r(e.base)] * int(e.exp)) + ")"
        if isinstance(e, FloorDiv):
            num, den = e.args
            if isinstance(den, sympy.Integer) and int(den) > 1 and isinstance(num, sympy.Add):
                constant = sum((t for t in num.args if t.is_Integer), sympy.Integer(0))
                if int(constant) == int(den) - 1:  # (x + d - 1) // d, as triton.cdiv writes it
                    return f"cdiv({r(num - constant)}, {r(den)})"
            return f"({r(num)} / {r(den)})"
        if isinstance(e, CeilDiv):
            return f"cdiv({r(e.args[0])}, {r(e.args[1])})"
        if isinstance(e, (Mod, PythonMod)):
            return f"({r(e.args[0])} % {r(e.args[1])})"
        if isinstance(e, (Max, Min, sympy.Max, sympy.Min)):
            fn = "max" if isinstance(e, (Max, sympy.Max)) else "min"
            args = [r(a) for a in e.args]
            text = args[0]
            for a in args[1:]:
                text = f"{fn}({text}, {a})"
            return text
        relations = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Gt: ">", sympy.Ge: ">=",
                     sympy.Lt: "<", sympy.Le: "<="}
        for kind, op in relations.items():
            if isinstance(e, kind):  # a guard: a condition on sizes
                return f"({r(e.lhs)} {op} {r(e.rhs)})"
        if isinstance(e, (sympy.And, sympy.Or)):
            op = " && " if isinstance(e, sympy.And) else " || "
            return "(" + op.join(r(a) for a in e.args) + ")"
        raise UserError(f"the size expression {e} ({type(e).__name__}) has no form in the grid "
                        "language (names, literals, + - * / %, cdiv, min, max)")

    text = r(expr)
    if text.startswith("(") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return False
    return depth == 0
