"""The persistent worker's memory and per-specialization cost (no Bazel).

    python3 worker_bench.py --repo DIR --out RESULTS_DIR [--requests 2000] [--baseline_requests 300] [--rounds 2]

Runs under the interpreter the TritonCompile actions use (tools/run_worker_bench starts it in
the rootfs, like the build benchmark's floor). It talks to `python -m triton_aot.compile.compile
--persistent_worker` over the JSON worker protocol, as Bazel does, and measures:

- memory: --requests compiles of a small kernel (`out = x + C * y`, C and BLOCK varied so every
  request is a different specialization; 2 targets) sent one after the other to one worker;
  the resident memory (VmRSS) of the worker process and of it plus its children is read from
  /proc every 25 requests. Once with
  the worker as shipped (a zygote: requests compile in forked children) and, for comparison,
  --baseline_requests with RULES_TRITON_WORKER_ONE_SHOT=1 (each request a one-shot process
  started by the worker; before the keyed children this baseline compiled in the worker
  process itself, which a worker may no longer do: it would import the user's modules twice).
  Target: growth over 2,000 compiles <= 100 MiB (worker plus children, the largest growth seen);
- per-specialization cost: the examples' matmul (4 algos x 3 specializations x 2 targets = 24),
  --rounds times, interleaved: triton.compile in this warm process (the floor, fresh Triton
  cache per compile, as bench/build/floor.py), then the same specialization as a request to
  the zygote worker and to the one-shot baseline (request sent to response read). Ratio: the
  mean over specializations of the median times, worker / floor. Target: <= 1.25x. The
  requests are shaped as Bazel's: the workers run in an execroot (a scratch folder holding the
  tool and the kernel file, PYTHONPATH=".") with execroot-relative paths; one more zygote
  worker gets each request with its declared `inputs` (the tool's files, the templates and the
  kernel file, as Bazel lists them), so it compiles in a private tree of those files (worker.py,
  _PrivateTree): the cost of that against the same worker's requests without inputs. Target:
  <= 1.10x. Bazel's own
  per-action cost (sandbox set-up, execution log) is not in this figure; the build benchmark's
  serial build (tools/run_build_bench) measures the action's totalTime.

Writes RESULTS_DIR/worker.json and RESULTS_DIR/worker.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TINY_KERNEL = '''\
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, C: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + C * y, mask=mask)
'''

MATMUL_ALGOS = [  # examples/kernels/BUILD.bazel: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages)
    (128, 128, 32, 8, 4, 3), (64, 64, 32, 8, 4, 4), (128, 64, 64, 8, 4, 3), (32, 32, 32, 4, 2, 2)]
MATMUL_PARAMS = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                 "stride_bn", "stride_cm", "stride_cn"]
MATMUL_TYPES = ["*fp16"] * 3 + ["i32"] * 9
MATMUL_SPECS = [  # the examples' three specializations: name -> hint
    {"a_ptr": 16, "b_ptr": 16, "c_ptr": 16, "stride_ak": 1, "stride_bn": 1, "stride_cn": 1,
     "stride_am": 16, "stride_bk": 16, "stride_cm": 16, "M": 16, "N": 16, "K": 16},
    {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1},
    {},
]
TARGETS = ["cuda:80", "cuda:90"]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


class Worker:
    def __init__(self, repo: Path, in_process: bool, execroot: Path | None = None,
                 inputs: list | None = None):
        """`execroot`: where it runs (PYTHONPATH=".", as the rules set it), else in `repo`;
        `inputs`: the WorkRequest inputs every request declares (None: none listed)."""
        env = {k: v for k, v in os.environ.items() if k != "RULES_TRITON_WORKER_ONE_SHOT"}
        env["PYTHONPATH"] = "." if execroot else str(repo)
        if in_process:
            env["RULES_TRITON_WORKER_ONE_SHOT"] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "triton_aot.compile.compile", "--persistent_worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=execroot or repo)
        self.stderr: list[bytes] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.next_id = 1
        self.inputs = inputs

    def request(self, arguments: list[str]) -> float:
        start = time.perf_counter()
        request = {"arguments": arguments, "requestId": self.next_id}
        if self.inputs is not None:
            request["inputs"] = self.inputs
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        elapsed = time.perf_counter() - start
        if not line:
            raise RuntimeError("worker died: " + b"".join(self.stderr).decode()[-2000:])
        response = json.loads(line)
        if response["exitCode"] != 0 or response["requestId"] != self.next_id:
            raise RuntimeError(f"request failed: {response}")
        self.next_id += 1
        return elapsed

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def descendants(pid: int) -> list[int]:
    """Every live process below pid (read from /proc: the rootfs has no ps)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if stat[0] != "Z":
                children.setdefault(int(stat[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def tiny_request(kernel: Path, out: Path, i: int) -> list[str]:
    c, block = i % 50, (128, 256)[(i // 50) % 2]
    target = TARGETS[(i // 100) % 2]
    return [f"--kernel_path={kernel}", "--kernel_name=axpy_kernel",
            f"--signature=*fp32:16, *fp32:16, *fp32:16, i32, {c}, {block}",
            f"--grid=cdiv(n, {block})", "--num_warps=4", "--num_stages=1", f"--target={target}",
            f"--symbol=axpy_{i}", f"--out_json={out}/axpy.json", f"--out_cubin={out}/axpy.cubin"]


def memory_run(repo: Path, kernel: Path, scratch: Path, requests: int, in_process: bool) -> dict:
    w = Worker(repo, in_process)
    samples, times = [], []
    try:
        for i in range(requests):
            times.append(w.request(tiny_request(kernel, scratch, i)))
            if i == 0 or (i + 1) % 25 == 0 or i + 1 == requests:
                tree = [w.proc.pid] + descendants(w.proc.pid)
                total = 0
                for pid in tree:
                    try:
                        total += rss_kib(pid)
                    except (OSError, RuntimeError):
                        pass  # a retired child that just exited
                samples.append((i + 1, rss_kib(w.proc.pid), total, len(tree) - 1))
        left = descendants(w.proc.pid)
    finally:
        w.close()
    first, last = samples[0], samples[-1]
    half = [s for s in samples if s[0] > requests // 2]
    slope = ((half[-1][1] - half[0][1]) / (half[-1][0] - half[0][0])) if len(half) > 1 else 0.0
    return {"mode": "in-process (before)" if in_process else "zygote", "requests": requests,
            "rss_after_first_kib": first[1], "rss_after_last_kib": last[1],
            "growth_mib": (last[1] - first[1]) / 1024, "growth_per_request_kib_second_half": slope,
            "tree_rss_after_first_kib": first[2],
            "tree_growth_max_mib": (max(s[2] for s in samples) - first[2]) / 1024,
            "tree_growth_last_mib": (last[2] - first[2]) / 1024,
            "median_request_s": statistics.median(times), "samples": samples,
            "descendants_between_requests": len(left)}


def floor_compile(kernel_fn, types, spec, constexprs, warps, stages, target) -> float:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature, consts, attrs = {}, {}, {}
    for index, (name, ty) in enumerate(zip(MATMUL_PARAMS, types)):
        hint = spec.get(name)
        if hint == 1:
            signature[name], consts[name] = "constexpr", 1
        else:
            signature[name] = ty
            if hint == 16:
                attrs[(index,)] = [["tt.divisibility", 16]]
    for name, value in constexprs.items():
        signature[name], consts[name] = "constexpr", value
    cache = tempfile.mkdtemp(prefix="floor_cache_")
    os.environ["TRITON_CACHE_DIR"] = cache
    arch = int(target.split(":")[1])
    start = time.perf_counter()
    compiled = triton.compile(ASTSource(kernel_fn, signature, consts, attrs),
                              target=GPUTarget("cuda", arch, 32),
                              options={"num_warps": warps, "num_stages": stages})
    elapsed = time.perf_counter() - start
    assert compiled.asm["cubin"]
    shutil.rmtree(cache, ignore_errors=True)
    return elapsed


def matmul_request(kernel: Path, out: Path, algo, spec, target, symbol) -> list[str]:
    bm, bn, bk, g, warps, stages = algo
    sig = ", ".join(f"{ty}:{spec[n]}" if n in spec else ty
                    for n, ty in zip(MATMUL_PARAMS, MATMUL_TYPES))
    return [f"--kernel_path={kernel}", "--kernel_name=matmul_kernel",
            f"--signature={sig}, {bm}, {bn}, {bk}, {g}", f"--grid=cdiv(M, {bm}) * cdiv(N, {bn}), 1, 1",
            f"--num_warps={warps}", f"--num_stages={stages}", f"--target={target}",
            f"--symbol={symbol}", f"--out_json={out}/{symbol}.json", f"--out_cubin={out}/{symbol}.cubin",
            f"--out_ptx={out}/{symbol}.ptx"]


def bench_execroot(repo: Path, scratch: Path) -> tuple[Path, list]:
    """An execroot as Bazel lays it out (the tool, its templates and the kernel file, by
    symlink) and the inputs a TritonCompile request lists: every file of those, with digests."""
    import hashlib
    execroot = scratch / "execroot" / "_main"
    files = sorted(str(p.relative_to(repo)) for p in (repo / "triton_aot").rglob("*.py"))
    files += sorted(str(p.relative_to(repo)) for p in (repo / "templates").glob("*.tmpl"))
    files.append("examples/kernels/matmul.py")
    for rel in files:
        (execroot / rel).parent.mkdir(parents=True, exist_ok=True)
        (execroot / rel).symlink_to(repo / rel)
    (execroot / "bazel-out" / "bench").mkdir(parents=True)
    inputs = [{"path": rel, "digest": hashlib.sha256((repo / rel).read_bytes()).hexdigest()}
              for rel in files]
    return execroot, inputs


def per_spec_run(repo: Path, scratch: Path, rounds: int) -> dict:
    import importlib.util
    kernel = repo / "examples" / "kernels" / "matmul.py"
    spec_obj = importlib.util.spec_from_file_location("rules_triton_bench_matmul", kernel)
    module = importlib.util.module_from_spec(spec_obj)
    spec_obj.loader.exec_module(module)
    cases = [(a, s, t) for a in MATMUL_ALGOS for s in MATMUL_SPECS for t in TARGETS]
    execroot, inputs = bench_execroot(repo, scratch)
    # execroot-relative, as Bazel's requests
    kernel, out = Path("examples/kernels/matmul.py"), Path("bazel-out/bench")
    zygote, inproc = Worker(repo, False, execroot), Worker(repo, True, execroot)
    declared = Worker(repo, False, execroot, inputs)
    times = {"floor": {}, "zygote": {}, "zygote_declared": {}, "in_process": {}}
    try:
        # untimed warm-ups: the floor's first compile, each worker's first request
        floor_compile(module.matmul_kernel, MATMUL_TYPES, {}, dict(zip(
            ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"), MATMUL_ALGOS[0][:4])), 4, 3, "cuda:80")
        for w in (zygote, declared, inproc):
            w.request(matmul_request(kernel, out, MATMUL_ALGOS[0], {}, "cuda:80", "warm"))
        for r in range(rounds):
            for i, (algo, spec, target) in enumerate(cases):
                key = f"a{MATMUL_ALGOS.index(algo)}_s{MATMUL_SPECS.index(spec)}_{target[5:]}"
                constexprs = dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"), algo[:4]))
                runs = [("floor", lambda: floor_compile(module.matmul_kernel, MATMUL_TYPES, spec,
                                                        constexprs, algo[4], algo[5], target)),
                        ("zygote", lambda: zygote.request(matmul_request(kernel, out, algo, spec, target, key))),
                        ("zygote_declared", lambda: declared.request(matmul_request(kernel, out, algo, spec, target, key))),
                        ("in_process", lambda: inproc.request(matmul_request(kernel, out, algo, spec, target, key)))]
                shift = (i + r) % len(runs)  # rotate the order so no side always runs first
                for name, run in runs[shift:] + runs[:shift]:
                    times[name].setdefault(key, []).append(run())
    finally:
        zygote.close()
        declared.close()
        inproc.close()
    medians = {name: {k: statistics.median(v) for k, v in d.items()} for name, d in times.items()}
    mean = {name: sum(d.values()) / len(d) for name, d in medians.items()}
    return {"specializations": len(cases), "rounds": rounds, "mean_per_spec_s": mean,
            "inputs": [i["path"] for i in inputs],
            "ratio_zygote": mean["zygote"] / mean["floor"],
            "ratio_zygote_declared": mean["zygote_declared"] / mean["floor"],
            "ratio_declared_to_zygote": mean["zygote_declared"] / mean["zygote"],
            "per_spec_ratio_declared_to_zygote": {
                k: medians["zygote_declared"][k] / medians["zygote"][k] for k in medians["zygote"]},
            "ratio_in_process": mean["in_process"] / mean["floor"],
            "per_spec_ratio_zygote": {k: medians["zygote"][k] / medians["floor"][k] for k in medians["floor"]},
            "times_s": times}


def markdown(res: dict) -> str:
    m = {r["mode"]: r for r in res["memory"]}
    z = m["zygote"]
    p = res["per_spec"]
    lines = [
        "# Persistent worker: memory and per-specialization cost",
        "",
        f"Machine: {res['machine']}; Python {res['python']}, triton {res['triton']}; commit "
        f"{res['commit']}; {res['date']}. Command: `tools/run_worker_bench`. Method: "
        "[bench/build/worker_bench.py](../build/worker_bench.py).",
        "",
        "## Memory of the worker process over many compiles",
        "",
        "One worker, requests sent one after the other over the JSON worker protocol (as Bazel "
        "does): a small kernel (`out = x + C * y`), a different specialization each time, cuda:80 "
        "and cuda:90. Resident memory (VmRSS) of the worker process, read from /proc every 25 "
        "requests, alone and with its children. Target: the largest growth over 2,000 compiles <= 100 MiB.",
        "",
        "| worker | compiles | worker process RSS, after the 1st / the last MiB | its growth MiB | worker + children RSS after the 1st MiB | their largest growth MiB | their growth at the end MiB | growth per compile, 2nd half KiB | median request s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["memory"]:
        lines.append(f"| {r['mode']} | {r['requests']} | {r['rss_after_first_kib'] / 1024:.0f} / "
                     f"{r['rss_after_last_kib'] / 1024:.0f} | {r['growth_mib']:.1f} | "
                     f"{r['tree_rss_after_first_kib'] / 1024:.0f} | **{r['tree_growth_max_mib']:.1f}** | "
                     f"{r['tree_growth_last_mib']:.1f} | "
                     f"{r['growth_per_request_kib_second_half']:.0f} | {r['median_request_s']:.3f} |")
    met = "met" if z["tree_growth_max_mib"] <= 100 and z["requests"] >= 2000 else "NOT met"
    lines += [
        "",
        f"Target {met}: over {z['requests']} compiles the zygote's worker process grew "
        f"{z['growth_mib']:.1f} MiB, and the worker with its compiling child at most "
        f"{z['tree_growth_max_mib']:.1f} MiB. `zygote`: the worker as shipped: it never compiles "
        "after its warm-up; requests compile in a child forked from it, which retires (exits) once "
        "it has grown by 64 MiB, a fresh child taking over. `in-process (before)`: "
        "RULES_TRITON_WORKER_ONE_SHOT=1, every request compiles in the worker process itself, "
        "as the worker did before (fewer requests: its growth per compile is steady). RSS of the "
        "children counts the pages they share with the worker once more, so the sum overstates "
        "the memory in use: since the worker process imports torch once for its children (about "
        "250 MiB of it resident), every live child (up to 3 keyed ones and a spare) counts "
        "those shared pages again, so the sum's growth says how many children are alive more "
        "than what they leak; a measure of proportional memory (Pss) would not count them.",
        "",
        "## Per-specialization cost against the in-process floor",
        "",
        f"The examples' matmul, {p['specializations']} specializations (4 algos x 3 specializations "
        f"x 2 targets), {p['rounds']} rounds, interleaved: `triton.compile` in a warm process (the "
        "floor; fresh Triton cache each time), and the same specialization as a request to each "
        "worker, from sending the request to reading the response. Mean over specializations of "
        "the median time. Target: zygote <= 1.25x.",
        "",
        "| | s per specialization | ratio to the floor |",
        "|---|---|---|",
        f"| floor: `triton.compile` in a warm process | {p['mean_per_spec_s']['floor']:.3f} | 1.00x |",
        f"| zygote worker request | {p['mean_per_spec_s']['zygote']:.3f} | **{p['ratio_zygote']:.2f}x** |",
        f"| zygote worker request with its declared inputs (private tree) | {p['mean_per_spec_s']['zygote_declared']:.3f} | **{p['ratio_zygote_declared']:.2f}x** |",
        f"| in-process worker request (before) | {p['mean_per_spec_s']['in_process']:.3f} | {p['ratio_in_process']:.2f}x |",
        "",
        "Per specialization, zygote / floor: min "
        f"{min(p['per_spec_ratio_zygote'].values()):.2f}x, median "
        f"{statistics.median(p['per_spec_ratio_zygote'].values()):.2f}x, max "
        f"{max(p['per_spec_ratio_zygote'].values()):.2f}x. A request's time includes the "
        "compile tool's own work (kernel import, hermetic environment, IR outputs) and the "
        "protocol; Bazel's per-action cost is not in it (see build.md for Bazel actions).",
        "",
        "## Declared inputs only: the private tree's cost",
        "",
        "The workers run in an execroot as Bazel's do (the tool, its templates and the kernel "
        "file; PYTHONPATH=\".\"; execroot-relative paths). A request that lists its `inputs`, as "
        "Bazel's do, runs in a private tree of symlinks to exactly those files (the working "
        "directory and the sys.path entries inside the execroot point there, outputs are moved "
        "to the execroot), so a kernel's import finds no module that no target declares, as in "
        "Bazel's sandbox. `zygote` above gets the same requests without `inputs` (the worker "
        f"before: it compiles in the execroot). {len(p.get('inputs', [])) or 'The'} declared "
        "inputs per request. Target: <= 1.10x.",
        "",
        "| | s per specialization | ratio |",
        "|---|---|---|",
        f"| zygote worker, requests without inputs (before) | {p['mean_per_spec_s']['zygote']:.3f} | 1.00x |",
        f"| zygote worker, requests with their declared inputs | {p['mean_per_spec_s']['zygote_declared']:.3f} | **{p['ratio_declared_to_zygote']:.3f}x** |",
        "",
        "Per specialization, declared / without: min "
        f"{min(p['per_spec_ratio_declared_to_zygote'].values()):.2f}x, median "
        f"{statistics.median(p['per_spec_ratio_declared_to_zygote'].values()):.2f}x, max "
        f"{max(p['per_spec_ratio_declared_to_zygote'].values()):.2f}x. Bazel's own worker "
        "sandboxing (`--worker_sandboxing`) would also hide undeclared files, but only a "
        "command-line flag turns it on, not an action; Bazel builds with it and with the tree: "
        "[worker_sandboxing.md](worker_sandboxing.md).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--baseline_requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--commit", default="?")
    parser.add_argument("--render", action="store_true", help="only rewrite worker.md from worker.json")
    args = parser.parse_args()
    if args.render:
        res = json.loads((args.out / "worker.json").read_text())
        (args.out / "worker.md").write_text(markdown(res))
        return 0
    sys.dont_write_bytecode = True
    import triton
    scratch = Path(tempfile.mkdtemp(prefix="rules_triton_worker_bench_"))
    os.environ["TRITON_HOME"] = str(scratch)
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"  # as the compile tool
    kernel = scratch / "axpy.py"
    kernel.write_text(TINY_KERNEL)
    started = time.time()
    res = {"machine": f"{os.cpu_count()} CPUs, {platform.machine()}",
           "python": sys.version.split()[0], "triton": triton.__version__, "commit": args.commit,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    res["per_spec"] = per_spec_run(args.repo, scratch, args.rounds)
    print(f"per spec: zygote {res['per_spec']['ratio_zygote']:.2f}x, in-process "
          f"{res['per_spec']['ratio_in_process']:.2f}x the floor; declared inputs "
          f"{res['per_spec']['ratio_declared_to_zygote']:.3f}x the zygote", file=sys.stderr)
    res["memory"] = [memory_run(args.repo, kernel, scratch, args.requests, False),
                     memory_run(args.repo, kernel, scratch, args.baseline_requests, True)]
    for r in res["memory"]:
        print(f"memory {r['mode']}: {r['growth_mib']:.1f} MiB over {r['requests']}", file=sys.stderr)
    res["wall_s"] = time.time() - started
    shutil.rmtree(scratch, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "worker.json").write_text(json.dumps(res, indent=1) + "\n")
    (args.out / "worker.md").write_text(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
