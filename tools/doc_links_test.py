"""Every relative link of README.md and docs/**/*.md reaches a file or folder of the repository, and
every #fragment into a markdown file names one of its headings, so moving text between pages
cannot leave a dead link behind.

The pages are the test's data; the files they link to are anything in the repository (results,
sources, other packages' files), so they are looked up in the source tree the pages' runfiles
resolve to. The test is tagged `external` for that reason: its result is never taken from a cache.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

RUNFILES = Path(os.path.abspath(__file__)).parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(RUNFILES)) for p in (RUNFILES / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def _prose(text: str) -> str:
    """The page without fenced code blocks and code spans (a `[a](b)` in code is no link)."""
    return _CODE_SPAN.sub("code", _FENCE.sub("", text))


def links(text: str) -> list[str]:
    """The relative link targets of a markdown text, fragments included."""
    prose = _prose(text)
    found = _INLINE_LINK.findall(prose) + _REFERENCE.findall(prose)
    return [t for t in found if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t)]


def anchors(text: str) -> set[str]:
    """The fragments GitHub gives a markdown page's headings."""
    seen: dict[str, int] = {}
    result = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        plain = re.sub(r"`([^`]*)`", r"\1", heading)
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
        slug = re.sub(r"[^\w\- ]", "", plain.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def dead_links(page: Path, root: Path) -> list[str]:
    """Each link of `page` that names no file under `root`, or no heading of the page it names."""
    text = page.read_text()
    dead = []
    for target in links(text):
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page.resolve()
        if not path and not fragment:
            continue
        if root.resolve() not in [resolved, *resolved.parents]:
            dead.append(f"{target} (outside the repository)")
        elif not resolved.exists():
            dead.append(f"{target} (no such file)")
        elif fragment and resolved.suffix == ".md" and resolved.is_file():
            if fragment not in anchors(resolved.read_text()):
                dead.append(f"{target} (no heading #{fragment} in {resolved.name})")
    return dead


def _source_tree() -> Path:
    # the runfile README.md is a link into the checkout; the linked files are looked up there
    root = Path(os.path.realpath(RUNFILES / "README.md")).parent
    assert (root / "MODULE.bazel").is_file(), f"no source tree at {root}"
    return root


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_reaches_a_file(page):
    root = _source_tree()
    assert not dead_links(root / page, root), (
        f"{page} has dead links: {', '.join(dead_links(root / page, root))}")


def test_the_pages_are_the_docs():
    assert {"README.md", "docs/design.md", "docs/rules.md", "docs/gpu_targets.md",
            "docs/design/stages.md"} <= set(PAGES)


def test_a_dead_link_is_found(tmp_path):
    (tmp_path / "MODULE.bazel").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Two words\n")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#two-words) [ok](docs/) [ok](#top) [web](https://x.y/z)\n"
        "# Top\n"
        "[gone](docs/b.md) [bad anchor](docs/a.md#three-words) [out](../elsewhere.md)\n"
        "`[in code](docs/c.md)`\n\n```\n[in a block](docs/d.md)\n```\n"
        "[ref]: docs/e.md\n")
    assert dead_links(page, tmp_path) == [
        "docs/b.md (no such file)",
        "docs/a.md#three-words (no heading #three-words in a.md)",
        "../elsewhere.md (outside the repository)",
        "docs/e.md (no such file)",
    ]


def test_anchors_follow_github():
    text = "# Tuned kernels (`bench/tune/tune_bench.py`)\n## Two words\n## Two words\n"
    assert anchors(text) == {"tuned-kernels-benchtunetune_benchpy", "two-words", "two-words-1"}
