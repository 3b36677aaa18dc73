#!/usr/bin/env python3
"""How raw benchmark data is committed: one deterministic gzip file per benchmark run.

A benchmark writes its raw per-shape data as NAME.json and renders its summary tables (NAME.md,
a chart) from it. The tables and the small JSON are what a reviewer reads, so they stay as text;
the raw data of the runs listed in RAW is committed as NAME.json.gz instead, out of diffs and
`git grep` (//tools:results_size_test keeps committed results under half the product's lines).
The gzip carries no file name and mtime 0, so the same data always gives the same bytes.

    python3 bench/results_store.py          # after copying a run's NAME.json into its results/
    python3 bench/results_store.py --check  # every RAW file stored, and stored deterministically

Every render command reads either form (`load`), e.g.
    python3 bench/tune/tune_bench.py --render bench/results/tune.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# The raw data of these runs is committed gzipped (paths from the repository's root, as NAME.json).
RAW = (
    "bench/results/build.json",
    "bench/results/gpu.json",
    "bench/results/headroom.json",
    "bench/results/launch_auto.json",
    "bench/results/model_tune.json",
    "bench/results/torch_cold_start.json",
    "bench/results/tune.json",
    "bench/results/tune_fresh.json",
    "bench/results/tune_heldout.json",
    "bench/results/tune_rmsnorm.json",
    "bench/results/tune_run1.json",
    "bench/results/worker_bazel/child_per_request.json",
    "bench/results/worker_bazel/in_process.json",
    "bench/results/worker_bazel/zygote.json",
    "tests/gpu_tune/results/every_algo.json",
)


def gz_path(path: Path) -> Path:
    return path.with_name(path.name + ".gz")


def compress(data: bytes) -> bytes:
    """`data` gzipped with no file name and mtime 0: the same data, the same bytes."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as f:
        f.write(data)
    return out.getvalue()


def load(path: str | Path):
    """The JSON at `path`: NAME.json, NAME.json.gz, or NAME.json given when NAME.json.gz is what
    the checkout has."""
    path = Path(path)
    if not path.exists() and gz_path(path).exists():
        path = gz_path(path)
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def store(root: Path = REPO) -> list[Path]:
    """Gzips every RAW file that is there as plain JSON (and removes the plain copy)."""
    stored = []
    for rel in RAW:
        plain = root / rel
        if plain.exists():
            gz_path(plain).write_bytes(compress(plain.read_bytes()))
            plain.unlink()
            stored.append(gz_path(plain))
    return stored


def problems(root: Path = REPO) -> list[str]:
    """What `--check` reports: a RAW file committed plain, missing, or not stored as `store`
    stores it."""
    out = []
    for rel in RAW:
        plain, gz = root / rel, gz_path(root / rel)
        if plain.exists():
            out.append(f"{rel} is plain JSON: run python3 bench/results_store.py")
        elif not gz.exists():
            out.append(f"{rel}.gz is missing")
        elif compress(gzip.decompress(gz.read_bytes())) != gz.read_bytes():
            out.append(f"{rel}.gz is not stored deterministically: gunzip it, then run "
                       "python3 bench/results_store.py")
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="report, change nothing")
    args = p.parse_args(argv)
    if args.check:
        found = problems()
        for line in found:
            print(f"error: {line}", file=sys.stderr)
        return 1 if found else 0
    for path in store():
        print(f"stored {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
