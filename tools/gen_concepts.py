"""Writes the generated copies of rules_triton's concept tables.

    python3 tools/gen_concepts.py           # rewrites every generated file in the checkout
    python3 tools/gen_concepts.py --check   # exit 1 naming each stale file (what the test does)

Each concept is defined once, in the Python module named after it; the rule's Starlark, the C
runtime and the docs cannot import Python, so they get generated copies:

  triton_aot/core/targets.py        -> rules/private/generated/targets.bzl, docs/gpu_targets.md's targets table,
                                  runtime/trt_targets.h (which cubin serves a GPU, for the runtime)
  triton_aot/core/launch_options.py -> rules/private/generated/launch_options.bzl
  triton_aot/core/reset_to_zero.py  -> rules/private/generated/reset_to_zero.bzl

//tools:concepts_current_test fails when a committed copy differs from what this renders, so an
edit of a table reaches the rule, the tool and the docs together. Needs no triton: the modules
are pure Python.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import textwrap
from pathlib import Path

# Run from a checkout (`python3 tools/gen_concepts.py`) or from Bazel runfiles, where
# triton_aot sits next to tools/ too.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from triton_aot.core import launch_options, reset_to_zero, targets  # noqa: E402

_GENERATED = "Generated from {src} by tools/gen_concepts.py: do not edit.\n" \
             "//tools:concepts_current_test fails when this file is stale."


def _header(doc: str, src: str) -> str:
    return f'"""{doc}\n\n{_GENERATED.format(src=src)}\n"""\n'


def _star(value) -> str:
    """A Starlark literal of a str / int / bool / None / list / dict (Python's spelling is
    Starlark's for these, but for the constants)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    if isinstance(value, str):
        assert '"' not in value and "\\" not in value, value
        return f'"{value}"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_star(v) for v in value) + "]"
    raise TypeError(value)


def _assign(name: str, doc: str, value) -> str:
    """`# doc\nNAME = value`, lists and dicts one element a line (buildifier's layout)."""
    if isinstance(value, (list, tuple)):
        body = "".join(f"    {_star(v)},\n" for v in value)
        text = f"[\n{body}]" if value else "[]"
    elif isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (list, tuple)):
                lines.append(f"    {_star(k)}: [{', '.join(_star(x) for x in v)}],\n")
            elif isinstance(v, dict):
                inner = "".join(f"        {_star(a)}: {_star(b)},\n" for a, b in v.items())
                lines.append(f"    {_star(k)}: {{\n{inner}    }},\n")
            else:
                lines.append(f"    {_star(k)}: {_star(v)},\n")
        text = f"{{\n{''.join(lines)}}}" if value else "{}"
    else:
        text = _star(value)
    comment = "".join(f"# {line}\n" for line in textwrap.wrap(doc, 98))
    return f"{comment}{name} = {text}\n"


# ----------------------------------------------------------------------------- targets

def targets_bzl() -> str:
    by_version = {f"{k[0]}.{k[1]}": list(v) for k, v in sorted(targets.CUDA_ARCHS_BY_TRITON.items())}
    return "\n".join([
        _header("GPU targets each supported triton compiles for, for what analysis needs of them "
                "(validate.bzl, python_env.bzl).", "triton_aot/core/targets.py"),
        _assign("CUDA_ARCHS_BY_TRITON", "SMs each triton release (\"3.6\") compiles for.",
                by_version),
        _assign("CUDA_ARCHS", "Every SM some supported triton compiles for, ascending.",
                list(targets.CUDA_ARCHS)),
        _assign("ARCH_SPECIFIC_FROM", "Triton compiles this SM and newer arch-specific "
                "(sm_90a): those cubins and PTX serve their own SM only.",
                targets.ARCH_SPECIFIC_FROM),
        _assign("BACKENDS", "What the variants of each backend can have (targets.BACKENDS): the "
                "rule asks this table where CUDA and HIP differ.",
                {name: {k: v for k, v in dataclasses.asdict(b).items() if k != "name"}
                 for name, b in targets.BACKENDS.items()}),
        _assign("PTX_FALLBACK_ARCHS", "SMs whose PTX the driver JIT-compiles for every later "
                "GPU (targets.ptx_fallback_arch): the target an embed_ptx library embeds the PTX "
                "of is the lowest of these.",
                [a for a in targets.CUDA_ARCHS if targets.ptx_fallback_arch([a]) == a]),
    ])


# The runtime's copy: which cubin (or PTX) of a library serves the current GPU. Its two
# functions are targets.cubin_runs_on and targets.ptx_runs_on in C, over the table's
# ARCH_SPECIFIC_FROM; concepts_test compiles this header and compares them on every pair of SMs.
TARGETS_HEADER = "runtime/trt_targets.h"


def targets_c_header() -> str:
    return f"""/* GPU targets' binary compatibility, for the runtime's choice of a library's cubin or PTX
 * (trt_runtime.c: trt_pick_target).
 *
 * Generated from triton_aot/core/targets.py by tools/gen_concepts.py: do not edit.
 * //tools:concepts_current_test fails when this file is stale, and checks that these functions
 * answer as targets.cubin_runs_on and targets.ptx_runs_on do for every pair of SMs. */
#ifndef TRT_TARGETS_H_
#define TRT_TARGETS_H_

/* Triton compiles this SM and newer arch-specific (sm_90a): those cubins and that PTX run on
 * exactly their own SM. */
#define TRT_ARCH_SPECIFIC_FROM {targets.ARCH_SPECIFIC_FROM}

/* Whether an sm_`arch` cubin runs on an sm_`sm` GPU: its own SM, or a later minor of the same
 * major for portable cubins (sm_80 on sm_86 and sm_89). */
static inline int trt_cubin_runs_on(int arch, int sm) {{
  return arch == sm || (arch < TRT_ARCH_SPECIFIC_FROM && arch / 10 == sm / 10 && arch < sm);
}}

/* Whether the driver can JIT-compile sm_`arch` PTX for an sm_`sm` GPU: its own SM, or any later
 * one for portable PTX. */
static inline int trt_ptx_runs_on(int arch, int sm) {{
  return arch == sm || (arch < TRT_ARCH_SPECIFIC_FROM && arch < sm);
}}

#endif /* TRT_TARGETS_H_ */
"""


# The page that documents GPU targets; its generated table sits between these lines.
TARGETS_PAGE = "docs/gpu_targets.md"
TABLE_BEGIN = "<!-- GPU targets table: generated from triton_aot/core/targets.py by tools/gen_concepts.py -->"
TABLE_END = "<!-- end of the generated GPU targets table -->"
# The GPU the table's run columns describe: the one tests/gpu_ptx and tests/gpu ran on.
_RUN_SM = 90


def _run_columns(arch: int) -> tuple[str, str]:
    cubin = "yes" if targets.cubin_runs_on(arch, _RUN_SM) else "no"
    if arch == _RUN_SM:
        ptx = "not needed (the cubin runs)"
    elif targets.ptx_runs_on(arch, _RUN_SM):
        ptx = "yes: the driver JIT-compiles it"
    else:
        ptx = "no (arch-specific PTX)"
    return cubin, ptx


def targets_table_markdown() -> str:
    versions = sorted(targets.CUDA_ARCHS_BY_TRITON)
    rows: dict[tuple, list[int]] = {}
    for arch in targets.CUDA_ARCHS:
        cells = tuple("yes" if arch in targets.CUDA_ARCHS_BY_TRITON[v] else "no" for v in versions)
        portable = "portable" if arch < targets.ARCH_SPECIFIC_FROM else "arch-specific"
        key = (cells, portable) + _run_columns(arch) + (targets.NOTES.get(arch, ""),)
        rows.setdefault(key, []).append(arch)
    head = (["target", *(f"{v[0]}.{v[1]}" for v in versions), "cubin and PTX",
             f"cubin runs on an H100 (sm_{_RUN_SM})",
             f"its PTX (`embed_ptx`) runs on an H100 (sm_{_RUN_SM})", "note"])
    lines = [TABLE_BEGIN, "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, archs in sorted(rows.items(), key=lambda kv: kv[1][0]):
        cells, portable, cubin, ptx, note = key
        names = "cuda:" + ", ".join(str(a) for a in archs)
        spelled = ", ".join(f"`{targets.ptx_arch_name(a)}`" for a in archs[:2])
        spelled += ", ..." if len(archs) > 2 else ""
        lines.append("| " + " | ".join([names, *cells, f"{spelled} ({portable})", cubin, ptx,
                                        note or "-"]) + " |")
    lines.append(TABLE_END)
    return "\n".join(lines) + "\n"


def page_with_table(page: str) -> str:
    start, end = page.index(TABLE_BEGIN), page.index(TABLE_END) + len(TABLE_END) + 1
    return page[:start] + targets_table_markdown() + page[end:]


# ----------------------------------------------------------------------------- launch options

def launch_options_bzl() -> str:
    options = {}
    for o in launch_options.OPTIONS:
        options[o.name] = {
            "default": o.default,
            "bool": o.is_bool,
            "values": list(o.values),
            "low": o.low,
            "high": o.high,
            "spelled": o.spelled,
            "min_cuda_arch": o.min_cuda_arch,
            "cuda_only": o.cuda_only,
        }
    return "\n".join([
        _header("An algo's launch options (triton_algo(num_warps = 8, ...)), for validate.bzl.",
                "triton_aot/core/launch_options.py"),
        _assign("LAUNCH_OPTIONS", "Option -> its default (None: the library's attribute of that "
                "name, or unset), whether it is a bool, its allowed values or range (and those in "
                "words), the CUDA arch it needs and whether it is CUDA only when set.", options),
    ])


# ----------------------------------------------------------------------------- reset_to_zero

def reset_to_zero_bzl() -> str:
    return "\n".join([
        _header("The forms of an algo's reset_to_zero regions, for triton_algo and validate.bzl.",
                "triton_aot/core/reset_to_zero.py"),
        _assign("EXTENT_COUNTS", "How many extents a region may have.",
                list(reset_to_zero.EXTENT_COUNTS)),
        _assign("FORMS_TEXT", "The forms, as messages name them.", reset_to_zero.FORMS_TEXT),
        _assign("EXAMPLE_NAME", "A region as messages show one: its pointer argument ...",
                reset_to_zero.EXAMPLE[0]),
        _assign("EXAMPLE_EXTENTS", "... and its extents.", reset_to_zero.EXAMPLE[1]),
    ])


# ----------------------------------------------------------------------------- files

def outputs(repo: Path) -> dict[str, str]:
    """Each generated file's path (relative to the repository) -> the text it must have."""
    page = (repo / TARGETS_PAGE).read_text()
    return {
        "rules/private/generated/targets.bzl": targets_bzl(),
        "rules/private/generated/launch_options.bzl": launch_options_bzl(),
        "rules/private/generated/reset_to_zero.bzl": reset_to_zero_bzl(),
        TARGETS_HEADER: targets_c_header(),
        TARGETS_PAGE: page_with_table(page),
    }


def stale(repo: Path) -> list[str]:
    result = []
    for rel, text in outputs(repo).items():
        path = repo / rel
        if not path.exists() or path.read_text() != text:
            result.append(rel)
    return result


def main(argv: list[str]) -> int:
    repo = Path(os.path.abspath(__file__)).parents[1]
    if "--check" in argv:
        names = stale(repo)
        for rel in names:
            print(f"error: {rel} is stale: run python3 tools/gen_concepts.py")
        return 1 if names else 0
    for rel, text in outputs(repo).items():
        path = repo / rel
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
