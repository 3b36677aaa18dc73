#!/usr/bin/env python3
"""Runs the GPU tests of the rules_triton examples and prints a pass/fail summary per kernel.

    python3 run_all.py [--gpu-dir DIR] [--no-pytest] [--require-gpu] [--json FILE] [-k SUBSTRING]

Runs the test_*.py files next to this script (the kernels through ctypes, then the app and the
C/C++ test programs, in that order) with pytest when it is installed, else with a small
built-in runner that understands the few pytest features these tests use (parametrize, skip,
skipif, fail). Needs python3 with torch and a CUDA GPU; no Bazel, no network.

Writes a JSON summary to --json FILE, or to $OUT/gpu_test_summary.json when $OUT is set.
Exit code: 0 when nothing failed and something passed (with --require-gpu: and every kernel
and the app passed at least one test), 1 otherwise.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import itertools
import json
import os
import platform
import subprocess
import sys
import time
import traceback
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["test_api.py", "test_add.py", "test_scale.py", "test_softmax.py", "test_matmul.py",
         "test_scalars.py", "test_big_smem.py", "test_binaries.py"]
KERNELS = ["add", "big_smem", "matmul", "scalars", "scale", "softmax"]


def group_of(nodeid: str) -> str:
    """The kernel (or program) a test is about, for the per-kernel counts."""
    path, _, rest = nodeid.partition("::")
    stem = Path(path).stem.replace("test_", "", 1)
    if stem in KERNELS:
        return stem
    if stem == "binaries":
        return "app" if rest.startswith("test_app") else "c/c++ programs"
    # test_api.py: parametrised by kernel name.
    params = rest.partition("[")[2].rstrip("]")
    for token in params.replace("-", " ").replace("=", " ").split():
        if token in KERNELS:
            return token
    return stem


def record(results, nodeid, outcome, duration=0.0, message="", stdout=""):
    results.append({"nodeid": nodeid, "group": group_of(nodeid), "outcome": outcome,
                    "duration_s": round(duration, 4), "message": message[-4000:],
                    "stdout": stdout[-4000:]})


# ----------------------------------------------------------------------------- with pytest


class _Collector:
    def __init__(self, results):
        self.results = results

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when != "call" and not report.passed):
            if report.when == "teardown" and report.passed:
                return
            outcome = report.outcome
            if report.when != "call" and report.failed:
                outcome = "error"
            message = ""
            if report.failed:
                message = str(report.longrepr)
            elif report.skipped and isinstance(report.longrepr, tuple):
                message = str(report.longrepr[2])
            record(self.results, report.nodeid, outcome, report.duration, message,
                   getattr(report, "capstdout", ""))

    def pytest_collectreport(self, report):
        if report.failed:
            record(self.results, report.nodeid, "error", 0.0, str(report.longrepr))
        elif report.skipped:
            message = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
            record(self.results, report.nodeid, "skipped", 0.0, message)


def run_pytest(files, keyword, results) -> None:
    import pytest

    args = ["-q", "-rfEs", "-p", "no:cacheprovider", "--import-mode=prepend"]
    if keyword:
        args += ["-k", keyword]
    pytest.main(args + [str(f) for f in files], plugins=[_Collector(results)])


# ----------------------------------------------------------------------------- without pytest


class _Skipped(Exception):
    pass


class _Mark:
    def parametrize(self, argnames, argvalues, ids=None):
        names = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
        values = list(argvalues)

        def deco(fn):
            fn.__dict__.setdefault("_params", []).append((names, values, ids))
            return fn
        return deco

    def skipif(self, condition, reason=""):
        def deco(fn):
            fn.__dict__.setdefault("_skipif", []).append((condition, reason))
            return fn
        return deco


def _skip(msg="", allow_module_level=False, **_):
    raise _Skipped(msg)


def _fail(msg="", pytrace=True):
    raise AssertionError(msg)


def _make_shim():
    shim = types.ModuleType("pytest")
    shim.mark = _Mark()
    shim.skip = _skip
    shim.fail = _fail
    shim.__rules_triton_shim__ = True
    return shim


def _param_id(value, ids, index):
    if callable(ids):
        return str(ids(value))
    if ids is not None:
        return str(ids[index])
    if isinstance(value, (int, float, str, bool)) or value is None:
        return str(value)
    return f"v{index}"


def _expand(fn):
    """(id, kwargs) for every combination of the function's parametrize decorators."""
    axes = []
    for names, values, ids in reversed(fn.__dict__.get("_params", [])):  # top decorator first
        axis = []
        for i, value in enumerate(values):
            vals = value if len(names) > 1 else (value,)
            axis.append((_param_id(value, ids, i), dict(zip(names, vals))))
        axes.append(axis)
    for combo in itertools.product(*axes):
        ident = "-".join(c[0] for c in combo)
        kwargs = {}
        for _, kw in combo:
            kwargs.update(kw)
        yield ident, kwargs


def run_builtin(files, keyword, results) -> None:
    sys.modules.setdefault("pytest", _make_shim())
    sys.path.insert(0, str(HERE))
    for path in files:
        t0 = time.time()
        try:
            module = importlib.import_module(path.stem)
        except _Skipped as e:
            record(results, path.name, "skipped", time.time() - t0, str(e))
            print(f"{path.name}: skipped ({e})")
            continue
        except Exception:
            record(results, path.name, "error", time.time() - t0, traceback.format_exc())
            print(f"{path.name}: ERROR during import\n{traceback.format_exc()}")
            continue
        for name, fn in list(vars(module).items()):
            if not name.startswith("test_") or not callable(fn):
                continue
            for ident, kwargs in _expand(fn):
                nodeid = f"{path.name}::{name}" + (f"[{ident}]" if ident else "")
                if keyword and keyword not in nodeid:
                    continue
                skip = [reason for cond, reason in fn.__dict__.get("_skipif", []) if cond]
                t0 = time.time()
                if skip:
                    record(results, nodeid, "skipped", 0.0, skip[0])
                    continue
                captured = io.StringIO()
                try:
                    with contextlib.redirect_stdout(captured):
                        fn(**kwargs)
                    outcome, message = "passed", ""
                except _Skipped as e:
                    outcome, message = "skipped", str(e)
                except Exception:
                    outcome, message = "failed", traceback.format_exc()
                record(results, nodeid, outcome, time.time() - t0, message, captured.getvalue())
                mark = {"passed": ".", "skipped": "s", "failed": "F"}[outcome]
                print(mark, end="", flush=True)
                if outcome == "failed":
                    print(f"\nFAILED {nodeid}\n{message}")
        print(f"  {path.name}")


# ----------------------------------------------------------------------------- summary


def environment() -> dict:
    env = {"python": platform.python_version(), "host": platform.node()}
    try:
        import torch

        env["torch"] = torch.__version__
        env["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
            env["sm"] = "sm_%d%d" % torch.cuda.get_device_capability(0)
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        env["torch"] = f"unavailable: {e}"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0:
            env["driver"] = out.stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001
        pass
    return env


def summarize(results, env, runner, elapsed, require_gpu=False) -> dict:
    groups = {}
    for r in results:
        g = groups.setdefault(r["group"], {"passed": 0, "failed": 0, "error": 0, "skipped": 0})
        g[r["outcome"] if r["outcome"] in g else "failed"] += 1
    totals = {k: sum(g[k] for g in groups.values()) for k in ("passed", "failed", "error", "skipped")}
    ok = totals["failed"] == 0 and totals["error"] == 0 and totals["passed"] > 0
    # On the GPU machine every kernel and the app must really have run, not just been skipped.
    not_run = [name for name in KERNELS + ["app", "c/c++ programs"]
               if groups.get(name, {}).get("passed", 0) == 0]
    if require_gpu and not_run:
        ok = False
    return {
        "format": "rules_triton.gpu_tests.v1",
        "ok": ok,
        "not_run": not_run,
        "require_gpu": require_gpu,
        "runner": runner,
        "elapsed_s": round(elapsed, 1),
        "environment": env,
        "groups": groups,
        "totals": totals,
        "failures": [r for r in results if r["outcome"] in ("failed", "error")],
        "skips": [{"nodeid": r["nodeid"], "reason": r["message"]} for r in results
                  if r["outcome"] == "skipped"],
        "programs": {r["nodeid"]: r["stdout"] for r in results
                     if r["group"] in ("app", "c/c++ programs")},
    }


def print_summary(summary) -> None:
    env = summary["environment"]
    print("\n" + "=" * 72)
    print("rules_triton examples: GPU test summary")
    print("  " + ", ".join(f"{k}={v}" for k, v in env.items()))
    print(f"  runner: {summary['runner']}, {summary['elapsed_s']} s")
    print(f"  {'kernel / program':<18}{'passed':>8}{'failed':>8}{'error':>8}{'skipped':>9}")
    for name in sorted(summary["groups"]):
        g = summary["groups"][name]
        print(f"  {name:<18}{g['passed']:>8}{g['failed']:>8}{g['error']:>8}{g['skipped']:>9}")
    t = summary["totals"]
    print(f"  {'TOTAL':<18}{t['passed']:>8}{t['failed']:>8}{t['error']:>8}{t['skipped']:>9}")
    for nodeid, out in summary["programs"].items():
        lines = [l for l in out.strip().splitlines() if l.strip()]
        if lines:
            print(f"  {nodeid}: {lines[-1]}")
    for f in summary["failures"][:20]:
        first = f["message"].strip().splitlines()[-1:] or [""]
        print(f"  FAILED {f['nodeid']}: {first[0][:200]}")
    reasons = sorted({s["reason"] for s in summary["skips"]})
    for reason in reasons[:10]:
        print(f"  skipped: {reason[:200]}")
    if summary["not_run"]:
        print("  no test passed for: " + ", ".join(summary["not_run"])
              + (" (required: --require-gpu)" if summary["require_gpu"] else ""))
    print("RESULT: " + ("PASS" if summary["ok"] else "FAIL"))
    print("=" * 72)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu-dir", help="folder `tools/gpu pack examples` filled (default: found from here)")
    parser.add_argument("--no-pytest", action="store_true", help="use the built-in runner")
    parser.add_argument("--json", help="write the JSON summary here (default: $OUT/gpu_test_summary.json)")
    parser.add_argument("-k", dest="keyword", help="only tests whose id contains this substring")
    parser.add_argument("--require-gpu", action="store_true",
                        help="fail unless every kernel, the app and the C/C++ programs passed at least one test")
    args = parser.parse_args()
    if args.gpu_dir:
        os.environ["RULES_TRITON_GPU_DIR"] = str(Path(args.gpu_dir).resolve())

    files = [HERE / f for f in ORDER if (HERE / f).exists()]
    files += sorted(p for p in HERE.glob("test_*.py") if p.name not in ORDER)
    results: list = []
    t0 = time.time()
    runner = "builtin"
    if not args.no_pytest:
        try:
            import pytest  # noqa: F401

            runner = "pytest " + pytest.__version__
        except ImportError:
            print("run_all: pytest is not installed; using the built-in runner")
    print(f"run_all: {len(files)} test files, runner: {runner}", flush=True)
    if runner == "builtin":
        run_builtin(files, args.keyword, results)
    else:
        run_pytest(files, args.keyword, results)
    summary = summarize(results, environment(), runner, time.time() - t0, args.require_gpu)
    print_summary(summary)

    out = args.json
    if not out and os.environ.get("OUT"):
        out = os.path.join(os.environ["OUT"], "gpu_test_summary.json")
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(summary, indent=2) + "\n")
        print(f"run_all: JSON summary written to {out}")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
