#!/usr/bin/env python3
"""Copies the latest results tables (bench/results/build.md, gpu.md) into bench/README.md.

    python3 bench/update_readme.py

Replaces what lies between the `<!-- BEGIN x results -->` and `<!-- END x results -->` markers
(x = build, gpu) with the matching results file, its title dropped and headings demoted.
tools/run_build_bench runs it after writing bench/results/; after copying a GPU run's files
into bench/results/, run it by hand.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def section(name: str) -> str | None:
    path = BENCH / "results" / f"{name}.md"
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    out = []
    for line in lines:
        if line.startswith("## "):
            line = "##" + line  # under the README's "### Build side" heading
        out.append(line)
    charts = {"build": "results/build.png", "gpu": "results/gpu.png"}
    if (BENCH / charts[name]).exists():
        out += ["", f"![{name} benchmark chart]({charts[name]})"]
    return "\n".join(out).strip() + "\n"


def main() -> int:
    readme = BENCH / "README.md"
    text = readme.read_text()
    for name in ("build", "gpu"):
        body = section(name)
        if body is None:
            continue
        pattern = re.compile(rf"(<!-- BEGIN {name} results -->\n).*?(<!-- END {name} results -->)",
                             re.S)
        if not pattern.search(text):
            print(f"update_readme: no {name} markers in {readme}", file=sys.stderr)
            continue
        text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
    readme.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
