"""The text of an op record's expressions (`x.size(0)`, `cdiv(n, 16)`, `a.shape`): the pieces
both of its renderers need, the torch op's (Python) and the launcher C entry's (C), so that the
two read the same text the same way.
"""

from __future__ import annotations

import ast
from typing import Optional


def split_top(text: str) -> list[str]:
    """'a.size(0), min(x, y)' -> ['a.size(0)', 'min(x, y)'] (commas outside parentheses)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def const_int(node: ast.AST) -> Optional[int]:
    """The integer a literal (`3`, `-3`) spells; None for anything else (a bool included)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and \
            not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = const_int(node.operand)
        return None if inner is None else -inner
    return None
