"""Committed results stay a small part of the repository: the text lines in every `results/`
folder are at most half the product's lines, and the raw per-shape data of the runs that
bench/results_store.py lists is committed gzipped (deterministically), not as text.

The product is the code of triton_aot/, rules/, runtime/, templates/, toolchains/ and tools/
(lock files of pinned packages excluded: they are data, not code). A results line is a line of a
text file under a folder named `results` anywhere in the checkout (charts and .gz files are not
text). Summary tables and the small JSON they render from stay text: that is what a reviewer
reads.

Reads the source tree the test's runfiles resolve to (tagged `external`, like doc_links_test).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(os.path.realpath(__file__)).parents[1]
sys.dont_write_bytecode = True  # the import below is from the source tree: leave it clean
sys.path.insert(0, str(ROOT / "bench"))
import results_store  # noqa: E402

PRODUCT = ("triton_aot", "rules", "runtime", "templates", "toolchains", "tools")
NOT_CODE_SUFFIXES = (".lock",)
SKIPPED_DIRS = {".git", "__pycache__", "node_modules"}
MAX_RESULTS_SHARE = 0.5


def _files(top: Path):
    for dirpath, dirnames, filenames in os.walk(top):
        # bazel-* convenience links and hidden folders (.gpu, .git) are no part of the checkout
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS
                             and not d.startswith((".", "bazel-")))
        for name in sorted(filenames):
            yield Path(dirpath) / name


def text_lines(path: Path) -> int | None:
    """Lines of a text file; None for a binary one (a NUL byte, or gzip)."""
    data = path.read_bytes()
    if b"\0" in data[:8192] or data[:2] == b"\x1f\x8b":
        return None
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def product_lines(root: Path = ROOT) -> int:
    total = 0
    for top in PRODUCT:
        for path in _files(root / top):
            rel = path.relative_to(root)
            if path.suffix in NOT_CODE_SUFFIXES or "locks" in rel.parts or path.suffix == ".pyc":
                continue
            total += text_lines(path) or 0
    return total


def results_lines(root: Path = ROOT) -> dict[str, int]:
    """Lines of each text file under a `results` folder, by path."""
    out = {}
    for path in _files(root):
        rel = path.relative_to(root)
        if "results" in rel.parts[:-1]:
            lines = text_lines(path)
            if lines is not None:
                out[str(rel)] = lines
    return out


def test_results_are_at_most_half_the_product():
    product, results = product_lines(), results_lines()
    total = sum(results.values())
    biggest = sorted(results.items(), key=lambda kv: -kv[1])[:5]
    assert product > 10000, product  # the product is where this test thinks it is
    assert total <= MAX_RESULTS_SHARE * product, (
        f"committed results hold {total} text lines, more than half the product's {product}; "
        f"the largest: {biggest}. Store raw per-shape data gzipped: add it to RAW in "
        "bench/results_store.py and run python3 bench/results_store.py")


def test_raw_results_are_stored_gzipped():
    assert results_store.problems() == []


def test_stored_results_are_deterministic(tmp_path):
    data = b'{"rows": [1, 2, 3]}\n'
    assert results_store.compress(data) == results_store.compress(data)
    (tmp_path / "x.json.gz").write_bytes(results_store.compress(data))
    assert results_store.load(tmp_path / "x.json") == {"rows": [1, 2, 3]}


def test_text_lines_counts_text_only(tmp_path):
    (tmp_path / "a.md").write_text("one\ntwo\n")
    (tmp_path / "b.gz").write_bytes(results_store.compress(b"x\n" * 100))
    assert text_lines(tmp_path / "a.md") == 2 and text_lines(tmp_path / "b.gz") is None
