"""Writes rules/private/generated/triton_types.bzl from triton_aot/core/triton_types.py's tables.

    python3 tools/gen_triton_types.py > rules/private/generated/triton_types.bzl

The analysis-time signature split (rules/private/validate.bzl) must know which identifier
entries of a signature are types or literals and which are constexpr names (the grammar of the
entries themselves is the compile tool's check); a hand copy of the
tables drifted, so the .bzl is generated and //tools:triton_types_current_test fails when it is
stale. Needs no triton: triton_types.py and signature.py are pure Python.
"""

from __future__ import annotations

import keyword
import os
import sys

# Run from a checkout (`python3 tools/gen_triton_types.py`) or as a Bazel py_binary, whose
# runfiles put triton_aot on sys.path.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from triton_aot.core import signature, triton_types  # noqa: E402

HEADER = '''"""Triton's signature type names, for the analysis-time checks in validate.bzl.

Generated from triton_aot/core/triton_types.py by tools/gen_triton_types.py: do not edit.
//tools:triton_types_current_test fails when this file is stale.
"""
'''


def _star(text: str) -> str:
    # Starlark and Python share the syntax of simple double-quoted strings.
    assert '"' not in text and "\\" not in text, text
    return f'"{text}"'


def _list(name: str, doc: str, items) -> str:
    body = "".join(f"    {_star(item)},\n" for item in items)
    return f"# {doc}\n{name} = [\n{body}]\n"


def _dict(name: str, doc: str, items: dict) -> str:
    body = "".join(f"    {_star(k)}: {_star(v)},\n" for k, v in items.items())
    return f"# {doc}\n{name} = {{\n{body}}}\n"


def literal_names() -> list[str]:
    """Identifiers that signature.parse_value takes for a constexpr value (True, None, ...).

    Only Python keywords can be such identifiers; asking parse_value keeps this list the
    parser's own answer rather than another copy.
    """
    return sorted(k for k in keyword.kwlist if signature.parse_value(k) is not None)


def render() -> str:
    parts = [
        HEADER,
        _list("SCALAR_TYPES", "Scalar types a kernel argument may have.", triton_types.SCALAR_TYPES),
        _list("INT_TYPES", "Integer types: of launch arguments, and the scalars that take hints.",
              triton_types.INT_TYPES),
        _list("FP8_TYPES", "Element types that only exist behind a pointer (*fp8e5, ...).",
              triton_types.FP8_TYPES),
        _dict("TYPE_ALIASES", "Other spellings of those types (Triton's aliases) -> canonical.",
              triton_types.TYPE_ALIASES),
        _list("LITERAL_NAMES", "Identifiers that are constexpr values, not constexpr names.",
              literal_names()),
    ]
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render())
