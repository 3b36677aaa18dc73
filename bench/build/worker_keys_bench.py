"""The persistent worker's keyed children against fork-per-request and one-shot processes.

    python3 worker_keys_bench.py --repo DIR --out RESULTS_DIR --scratch DIR --host_scratch DIR
        [--import_s 3] [--skip_cold_build] -- PREFIX...

Run by `tools/run_worker_bench --keys` (host Python; the compiles run in the interpreter the
TritonCompile actions use, through PREFIX, as the rule's actions do). Two measurements, each
mode side by side in the same run, on the same machine, timed the same way:

1. A kernel file whose dep takes seconds to import (`slow_dep`: --import_s seconds of real CPU
   work at import, as vLLM's or SGLang's packages take 10 to 20 s), compiled in 24 variants
   (4 algos x 3 specializations x 2 targets), requests sent one after the other (as --jobs=1)
   over the JSON worker protocol, as Bazel sends them:
   - `keyed worker`: the worker as shipped: a child per key (kernel file, import roots,
     target) keeps its modules, so the dep is imported once per target;
   - `fork per request`: the same worker with RULES_TRITON_WORKER_CHILD_GROWTH_MIB=0, a fresh
     child forked from the warm parent for every request (the other design that never imports a
     module twice in one process): the dep is imported by every request;
   - `one-shot`: a process of its own per request (--@rules_triton//:persistent_worker=false):
     Python, Triton and the dep imported by every request.
   Wall time from starting the worker (or the first process) to the last answer; the outputs of
   all three must be the same bytes.
2. The examples' cold build (`//kernels/...`, `//app:example_kernels`) after `bazel clean`, in a
   private copy of the working tree with its own Bazel server (bench/build/run_build_bench.py's
   Checkout), with --@rules_triton//:persistent_worker=false and with the worker (default):
   wall time of `bazel build`, no disk cache.

Writes RESULTS_DIR/worker_keys.json and RESULTS_DIR/worker_keys.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_build_bench as build_bench  # noqa: E402

SLOW_DEP = '''\
"""A dep that takes {seconds} s of real work to import (a serving stack's package does more)."""
import hashlib
import time

_start = time.process_time()
_digest = b""
while time.process_time() - _start < {seconds}:
    _digest = hashlib.sha256(_digest + b"x" * 4096).digest()
SCALE = 2.0
'''

KERNEL = '''\
import triton
import triton.language as tl

from slow_dep import SCALE

_SCALE = tl.constexpr(SCALE)


@triton.jit
def slow_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * _SCALE, mask=mask)
'''

BLOCKS = (128, 256, 512, 1024)
SPECS = ("*fp32:16, *fp32:16, i32:16", "*fp32:16, *fp32:16, i32", "*fp32, *fp32, i32")
TARGETS = ("cuda:80", "cuda:90")


def requests(corpus: Path, out: Path) -> list[list[str]]:
    """24 variants, in the order Bazel's scheduler may well send them: targets interleaved."""
    reqs = []
    for block in BLOCKS:
        for s, spec in enumerate(SPECS):
            for target in TARGETS:
                symbol = f"slow_scale_b{block}_s{s}_{target[5:]}"
                reqs.append([f"--kernel_path={corpus}/kernels/slow_scale.py",
                             "--kernel_name=slow_scale_kernel", f"--signature={spec}, {block}",
                             f"--grid=cdiv(n, {block})", "--num_warps=4", "--num_stages=2",
                             f"--target={target}", f"--symbol={symbol}",
                             f"--import_path={corpus}/deps", "--bazel_target=//bench:slow_scale",
                             f"--out_json={out}/{symbol}.json",
                             f"--out_cubin={out}/{symbol}.cubin"])
    return reqs


class Tool:
    """The compile tool in the actions' interpreter: `prefix` runs a command there."""

    def __init__(self, prefix: list[str], repo: Path):
        self.prefix = prefix
        self.repo = repo

    def command(self, args: list[str], env: dict) -> list[str]:
        return [*self.prefix, f"PYTHONPATH={self.repo}", *[f"{k}={v}" for k, v in env.items()],
                "/opt/rules_triton/venv/bin/python3", "-B", "-s", "-m",
                "triton_aot.compile.compile", *args]


def run_worker(tool: Tool, reqs: list[list[str]], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(tool.command(["--persistent_worker"], env), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr: list[bytes] = []
    threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True).start()
    try:
        for i, args in enumerate(reqs, 1):
            proc.stdin.write((json.dumps({"arguments": args, "requestId": i}) + "\n").encode())
            proc.stdin.flush()
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("worker died: " + b"".join(stderr).decode()[-2000:])
            response = json.loads(line)
            if response["exitCode"] != 0:
                raise RuntimeError(f"request failed: {response['output']}")
    finally:
        proc.stdin.close()
        proc.wait(timeout=300)
    return time.perf_counter() - start


def run_one_shot(tool: Tool, reqs: list[list[str]]) -> float:
    start = time.perf_counter()
    for args in reqs:
        proc = subprocess.run(tool.command(args, {}), capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"one-shot compile failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - start


def outputs(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def slow_dep_run(tool: Tool, scratch: Path, host_scratch: Path, import_s: float) -> dict:
    """`scratch`: the folder as the compiles see it; `host_scratch`: the same folder here."""
    (host_scratch / "deps" / "slow_dep").mkdir(parents=True)
    (host_scratch / "deps" / "slow_dep" / "__init__.py").write_text(
        SLOW_DEP.format(seconds=import_s))
    (host_scratch / "kernels").mkdir()
    (host_scratch / "kernels" / "slow_scale.py").write_text(KERNEL)
    modes = {
        "keyed worker": lambda out: run_worker(tool, requests(scratch, out), {}),
        "fork per request": lambda out: run_worker(
            tool, requests(scratch, out), {"RULES_TRITON_WORKER_CHILD_GROWTH_MIB": "0"}),
        "one-shot": lambda out: run_one_shot(tool, requests(scratch, out)),
    }
    result = {"variants": len(BLOCKS) * len(SPECS) * len(TARGETS), "import_s": import_s,
              "modes": {}}
    produced = {}
    for mode, run in modes.items():
        name = mode.replace(" ", "_").replace("-", "_")
        (host_scratch / name).mkdir()
        build_bench.log(f"[slow dep] {mode}: {result['variants']} variants")
        busy = build_bench.foreign_busy()
        wall = run(scratch / name)
        produced[mode] = outputs(host_scratch / name)
        result["modes"][mode] = {"wall_s": wall, "busy_before": busy}
        build_bench.log(f"[slow dep] {mode}: {wall:.1f} s")
    first = next(iter(produced.values()))
    result["identical_outputs"] = all(p == first for p in produced.values())
    result["files_compared"] = len(first)
    return result


def cold_build_run(keep: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="rules_triton_worker_keys_"))
    snapshot = tmp / "snapshot"
    build_bench.copy_tree(build_bench.REPO, snapshot)
    co = build_bench.Checkout(tmp / "examples_cold", snapshot)
    result = {"targets": build_bench.TARGETS, "modes": {}}
    try:
        build_bench.log("[cold build] warming the Bazel server (analysis only)")
        co.run(["build", "--nobuild"] + build_bench.TARGETS)
        for mode, flags in (("one-shot", [build_bench.ONE_SHOT_FLAG]),
                            ("worker", [build_bench.WORKER_FLAG])):
            co.run(["clean"])
            busy = build_bench.foreign_busy()
            r = co.build(build_bench.TARGETS, flags)
            result["modes"][mode] = {
                "wall_s": r["wall_s"], "busy_before": busy,
                "triton_compile_executed": r["triton_compile_executed"],
                "runners": r["spawns"].get("TritonCompile", {}).get("runners")}
            build_bench.log(f"[cold build] {mode}: {r['wall_s']:.1f} s, "
                            f"{r['triton_compile_executed']} TritonCompile")
    finally:
        co.close()
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _busy(r: dict) -> str:
    return "not recorded" if r.get("busy_before") is None else f"{r['busy_before']:.0%}"


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = [
        "# Persistent worker: keyed children against fork-per-request and one-shot",
        "",
        f"Machine: {m['cpus']} CPUs ({m['cpu_model']}), {m['mem_mib'] // 1024} GiB; commit "
        f"{res['commit']}; {res['started']}. Command: `tools/run_worker_bench --keys`. Method: "
        "[bench/build/worker_keys_bench.py](../build/worker_keys_bench.py). The machine was "
        "shared with other jobs (CPU busy from others before each run, sampled from /proc, in "
        "the last column): absolute times are inflated, the ratios less so.",
        "",
    ]
    s = res.get("slow_dep")
    if s:
        base = s["modes"]["one-shot"]["wall_s"]
        lines += [
            f"## A kernel file whose dep takes {s['import_s']:g} s to import, {s['variants']} "
            "variants",
            "",
            "4 algos x 3 specializations x 2 targets, requests one after the other over the "
            "worker protocol (one-shot: a process per variant). Wall time from start to the "
            "last answer.",
            "",
            "| mode | wall s | s per variant | ratio to one-shot | others' CPU use before |",
            "|---|---|---|---|---|",
        ]
        for mode, r in s["modes"].items():
            lines.append(f"| {mode} | {r['wall_s']:.1f} | {r['wall_s'] / s['variants']:.2f} | "
                         f"**{r['wall_s'] / base:.2f}x** | {_busy(r)} |")
        same = {True: "yes", False: "NO", None: "not compared in this run"}[
            s.get("identical_outputs")]
        lines += ["", f"Outputs of the three modes byte-identical: {same} "
                  f"({s.get('files_compared') or 0} files).", ""]
        if s.get("note"):
            lines += [s["note"], ""]
    c = res.get("cold_build")
    if c:
        base = c["modes"]["one-shot"]["wall_s"]
        lines += [
            "## The examples' cold build",
            "",
            f"`bazel build {' '.join(c['targets'])}` after `bazel clean` (warm Bazel server, no "
            "disk cache), in a private copy of the working tree.",
            "",
            "| mode | wall s | TritonCompile executed | ratio to one-shot | others' CPU use before |",
            "|---|---|---|---|---|",
        ]
        for mode, r in c["modes"].items():
            lines.append(f"| {mode} | {r['wall_s']:.1f} | {r['triton_compile_executed']} | "
                         f"**{r['wall_s'] / base:.2f}x** | {_busy(r)} |")
        lines.append("")
    for key, err in res.get("errors", {}).items():
        lines.append(f"- {key} failed: {err}")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repo", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--commit", default="?")
    p.add_argument("--scratch", type=Path, required=True,
                   help="a folder the compiles see, as they see it")
    p.add_argument("--host_scratch", type=Path, required=True,
                   help="the same folder as this process sees it")
    p.add_argument("--import_s", type=float, default=3.0)
    p.add_argument("--skip_cold_build", action="store_true")
    p.add_argument("--keep", action="store_true")
    # after `--`: the command prefix that runs a program in the actions' environment, ending
    # before the interpreter (environment settings may follow it)
    argv = sys.argv[1:]
    if "--" not in argv:
        p.error("give the actions' command prefix after --")
    cut = argv.index("--")
    args = p.parse_args(argv[:cut])
    args.python = argv[cut + 1:]
    res = {"format": "rules_triton.bench.worker_keys.v1",
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": build_bench.machine_info(), "commit": args.commit, "errors": {}}
    tool = Tool(args.python, args.repo)
    run_id = f"worker_keys_{os.getpid()}"
    try:
        res["slow_dep"] = slow_dep_run(tool, args.scratch / run_id, args.host_scratch / run_id,
                                       args.import_s)
    except Exception as e:
        res["errors"]["slow_dep"] = repr(e)[-2000:]
    finally:
        shutil.rmtree(args.host_scratch / run_id, ignore_errors=True)
    write(res, args.out)  # kept even if the cold build is stopped
    if not args.skip_cold_build:
        try:
            res["cold_build"] = cold_build_run(args.keep)
        except Exception as e:
            res["errors"]["cold_build"] = repr(e)[-2000:]
    print(write(res, args.out))
    return 0 if not res["errors"] else 1


def write(res: dict, out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    (out / "worker_keys.json").write_text(json.dumps(res, indent=1) + "\n")
    text = markdown(res)
    (out / "worker_keys.md").write_text(text)
    return text


if __name__ == "__main__":
    sys.exit(main())
