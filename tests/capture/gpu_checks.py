"""The GPU checks' bookkeeping, shared by the captured ops' and the C entries' GPU runners
(run_gpu.py, run_c_entry_gpu.py): one line per check, bit-identity of two tensors, and the
results file the run leaves in $OUT."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

RESULTS: list[dict] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append({"check": name, "pass": bool(ok), "detail": detail})
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def same(a, b) -> tuple[bool, str]:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, f"shape/dtype {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} {b.dtype}"
    diff = (a.float() - b.float()).abs().max().item() if a.numel() else 0.0
    return torch.equal(a, b), f"max abs diff {diff:g}"


def finish(results_name: str, default_out: Path) -> int:
    """Prints the count, writes $OUT/results_name (else default_out/...); the exit code."""
    passed = sum(r["pass"] for r in RESULTS)
    print(f"\n{passed}/{len(RESULTS)} checks passed")
    out = Path(os.environ.get("OUT") or default_out)
    out.mkdir(parents=True, exist_ok=True)
    (out / results_name).write_text(json.dumps({
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "checks": RESULTS}, indent=1) + "\n")
    return 0 if passed == len(RESULTS) else 1
