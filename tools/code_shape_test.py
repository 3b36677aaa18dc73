"""The shape rules of the product's code, measured on the checkout:

- no import cycle between the modules of triton_aot/ (every import counts, those inside
  functions too: a cycle broken only by a late import is still two modules that need each other);
- no function of triton_aot/ over MAX_FUNCTION_LINES lines;
- each concept is read from its typed value, not re-parsed from its text: a target ("cuda:90",
  "hip:gfx942") is core/target.py's Target, an argument type ("*fp16", "tensordesc<...>") is
  core/arg_type.py's ArgType. No module of triton_aot/ or rules/ outside core/ and the generated
  tables compares backends by name or takes a type or target string apart (CONCEPT_PATTERNS).

The files are read from the source tree that this test's runfiles resolve to (like
doc_links_test), so the test is tagged `external`: its result is never taken from a cache.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

ROOT = Path(os.path.realpath(__file__)).parents[1]

MAX_FUNCTION_LINES = 80

# Text that re-reads a concept which core/ parses once.
CONCEPT_PATTERNS = {
    "a target's backend read from its text": r"""startswith\(\s*["'](hip|cuda):["']\s*\)""",
    "a backend compared by name": r"""backend\s*[!=]=\s*["'](hip|cuda)["']""",
    "a pointer type read from its text": r"""startswith\(\s*["']\*["']\s*\)""",
    "a tensor descriptor re-parsed": r"""(?<!def )\b(parse_tensordesc|is_tensordesc)\(""",
}

# Where the concepts are defined, and tables generated from them.
CONCEPT_HOMES = ("triton_aot/core/", "rules/private/generated/")


def python_files():
    return sorted((ROOT / "triton_aot").rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the triton_aot modules it imports (a package's import of its own submodules
    included)."""
    modules = {module_name(p): p for p in python_files()}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            deps |= {m for m in found if m in modules and m != name}
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def long_functions() -> dict[str, int]:
    """"path:name" -> lines, for every function (methods and nested ones too) over the limit."""
    out = {}
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    out[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    return out


def concept_sites() -> dict[tuple[str, str], int]:
    """(file, what) -> how many times, over triton_aot/ and rules/ outside CONCEPT_HOMES."""
    counts = {}
    files = [*python_files(), *sorted((ROOT / "rules").rglob("*.bzl"))]
    for path in files:
        rel = str(path.relative_to(ROOT))
        if rel.startswith(CONCEPT_HOMES) or rel.endswith("_test.py"):
            continue
        text = path.read_text(encoding="utf-8")
        for what, pattern in CONCEPT_PATTERNS.items():
            n = len(re.findall(pattern, text))
            if n:
                counts[(rel, what)] = n
    return counts


def test_patterns_find_what_they_forbid():
    samples = ['t.startswith("hip:")', "target.backend == 'cuda'", 'x.backend != "hip"',
               'ty.startswith("*")', "signature.parse_tensordesc(ty, w)", "is_tensordesc(t)"]
    for sample in samples:
        assert any(re.search(p, sample) for p in CONCEPT_PATTERNS.values()), sample
    for sample in ("arg.type.is_tensordesc", "def is_tensordesc(self) -> bool:"):
        assert not any(re.search(p, sample) for p in CONCEPT_PATTERNS.values()), sample


def test_no_import_cycle():
    assert cycles(import_graph()) == [], (
        "these triton_aot modules import each other: move what both need into a third module")


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [("a", "b", "c")]


def test_no_long_function():
    assert long_functions() == {}, f"functions over {MAX_FUNCTION_LINES} lines: split them by step"


def test_concepts_are_read_from_their_typed_values():
    assert concept_sites() == {}, (
        "read the target from core/target.py's Target and the argument type from "
        "core/arg_type.py's ArgType (or a table generated from them)")
