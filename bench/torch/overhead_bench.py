#!/usr/bin/env python3
"""Per-call host overhead of one tiny kernel for PyTorch callers, every way of calling it side by
side in one process.

    python3 bench/torch/overhead_bench.py [--pack-dir .gpu/torchbench] [--out DIR]
        [--torch-op-module PATH] [--calls N] [--rounds N] [--no-compile]
    python3 bench/torch/overhead_bench.py --render torch_overhead.json   # no GPU needed

The kernel is bench/gpu/tiny.py (`out = x + y`, n = 1000 fp32, one CTA): its GPU time is about
2 us, below any Python caller's host cost, so a back-to-back loop measures the caller. Methods:

  Triton JIT launch     the @triton.jit kernel through Triton's launcher, warm (compiled, cached
                        in this process): what a Triton user pays per call today
  ours: ctypes, raw     libtiny1.so's dispatcher through ctypes with the pointers and stream
                        computed once: the least a Python caller of our library can pay
  ours: ctypes from tensors  the same, reading data_ptr() and the current stream each call, as a
                        Python wrapper over the library would
  ours: torch op        from eager Python, the ops that the module triton_torch_library
                        generates registers (--torch-op-module; without it the rows say "not
                        available"): torch.ops.NS.tiny1_out(x, y, out), which writes `out` as
                        every row above does, and torch.ops.NS.tiny1(x, y), which allocates its
                        output (the usual form of an op); each is called as its schema says
  ours: torch op, torch.compile   the op (tiny1, else tiny1_out) inside a torch.compile'd
                        function (fullgraph)
  context               Triton JIT inside torch.compile, torch.add(out=) (an eager aten op of the
                        same size), and an empty Python call (the loop's own floor)

Every round times a block of --calls back-to-back calls of every method, in an order that
rotates every round, each block ending with torch.cuda.synchronize() (inside the timed span:
wall-clock per call, the queue drained). Ratios are paired within a round (method / JIT,
method / ctypes raw), and the median over rounds is reported with a 95% confidence interval:
pairing cancels the machine's drift between rounds, which is larger than some of the effects.

Writes torch_overhead.json, torch_overhead.md and (with matplotlib) torch_overhead.png into
--out (default $OUT, else bench/results/).
"""
from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torchbench_common import (REPO, bind_op_args, default_out, environment, fail,  # noqa: E402
                               import_op_module, import_torch_with_gpu, log, med, median_ci95,
                               op_schema, pick_op, pin_to_one_cpu, load_module)

TOOL = "overhead_bench"
N = 1000  # elements: one CTA of BLOCK = 1024, as in the launch benchmark (bench/gpu)
BLOCK = 1024

JIT = "Triton JIT launch (warm)"
CTYPES = "ours: ctypes, raw pointers"
CTYPES_T = "ours: ctypes from tensors"
OP_OUT = "ours: torch op, out= (eager)"
OP = "ours: torch op, allocating (eager)"
OP_COMPILED = "ours: torch op in torch.compile"
JIT_COMPILED = "context: Triton JIT in torch.compile"
TORCH_ADD = "context: torch.add(out=) eager"
EMPTY = "context: empty Python call"
ORDER = [JIT, CTYPES, CTYPES_T, OP_OUT, OP, OP_COMPILED, JIT_COMPILED, TORCH_ADD, EMPTY]
# The torch ops the generated module is expected to register: the same work as the other
# rows (writing into a given tensor), and the usual op form that allocates its output.
OP_NAMES = {OP_OUT: ["tiny1_out"], OP: ["tiny1", "tiny_kernel", "tiny"]}


def say(msg: str) -> None:
    log(TOOL, msg)


def setup_methods(args, torch, res: dict) -> dict:
    """The zero-argument callables to time, each checked once against torch's x + y first. A
    method that cannot be set up is recorded in res['unavailable'] with the reason."""
    pack = args.pack_dir
    unavailable = res.setdefault("unavailable", {})
    setup = res.setdefault("setup_s", {})
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    want = x + y
    methods = {}

    def check(name, fn):
        out.zero_()
        r = fn()
        torch.cuda.synchronize()
        got = r if isinstance(r, torch.Tensor) else out
        if not torch.equal(got, want):
            raise RuntimeError(f"{name} computed something else than x + y")

    def add(name, build):
        t0 = time.perf_counter()
        try:
            fn = build()
            check(name, fn)  # the first call: compiles or loads what it needs
            methods[name] = fn
        except Exception as e:  # noqa: BLE001 - one method's failure must not cost the others
            unavailable[name] = f"{type(e).__name__}: {e}".splitlines()[0][:400]
            res.setdefault("tracebacks", {})[name] = traceback.format_exc()[-3000:]
            say(f"{name}: not available: {unavailable[name]}")
        setup[name] = round(time.perf_counter() - t0, 3)

    def jit():
        tiny = load_module(pack / "tiny.py", "rules_triton_torchbench_tiny")
        kern = tiny.tiny_kernel
        return lambda: kern[(1, )](x, y, out, N, BLOCK=BLOCK, num_warps=4, num_stages=1)
    add(JIT, jit)

    lib = ctypes.CDLL(str(pack / "libtiny1.so"))
    tiny1 = lib.tiny1
    tiny1.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                      ctypes.c_int32, ctypes.c_int]
    tiny1.restype = ctypes.c_int

    def raw():
        stream = torch.cuda.current_stream().cuda_stream
        px, py, po = x.data_ptr(), y.data_ptr(), out.data_ptr()
        return lambda: tiny1(stream, px, py, po, N, 0)
    add(CTYPES, raw)

    def from_tensors():
        current = torch.cuda.current_stream
        return lambda: tiny1(current().cuda_stream, x.data_ptr(), y.data_ptr(), out.data_ptr(),
                             x.numel(), 0)
    add(CTYPES_T, from_tensors)

    op_box = {}
    if args.torch_op_module:
        try:
            _, new_ops = import_op_module(torch, Path(args.torch_op_module))
            res["torch_op_module"] = str(args.torch_op_module)
            res["torch_ops_registered"] = new_ops
        except Exception as e:  # noqa: BLE001 - the other rows still run
            new_ops = None
            for name in OP_NAMES:
                unavailable[name] = f"the module did not import: {type(e).__name__}: {e}"[:400]
        for name, wanted in OP_NAMES.items() if new_ops is not None else ():
            def op(name=name, wanted=wanted):
                qualified = args.torch_op if name == OP else None
                packet = pick_op(torch, new_ops, wanted, qualified)
                res.setdefault("torch_ops", {})[name] = str(op_schema(packet))
                named = {"x_ptr": x, "y_ptr": y, "out_ptr": out, "n": N}
                a, kw = bind_op_args(packet, named, [x, y, out, N])
                op_box[name] = (packet, a, kw)
                return lambda: packet(*a, **kw)
            add(name, op)
    else:
        for name in OP_NAMES:
            unavailable[name] = ("not available: no --torch-op-module (the Python module "
                                 "triton_torch_library generates for libtiny1)")

    if args.no_compile:
        unavailable[OP_COMPILED] = unavailable[JIT_COMPILED] = "not run (--no-compile)"
    else:
        compiled_from = OP if OP in methods else OP_OUT if OP_OUT in methods else None
        if compiled_from:
            def op_compiled():
                packet, a, kw = op_box[compiled_from]
                res["torch_compile_op"] = compiled_from
                # the compiled function takes the tensors as inputs (not closure constants), as a
                # model's forward would; every other argument stays what the schema binding gave
                slots = [next((k for k, t in enumerate((x, y, out)) if v is t), None) for v in a]
                consts = [None if k is not None else v for k, v in zip(slots, a)]

                def call(x_, y_, o_):
                    ts = (x_, y_, o_)
                    return packet(*[ts[k] if k is not None else c for k, c in zip(slots, consts)],
                                  **kw)
                fn = torch.compile(call, fullgraph=True, dynamic=False)
                return lambda: fn(x, y, out)
            add(OP_COMPILED, op_compiled)
        else:
            unavailable[OP_COMPILED] = "not available: needs the torch op"
        if JIT in methods:
            def jit_compiled():
                kern = sys.modules["rules_triton_torchbench_tiny"].tiny_kernel

                def call(x_, y_, o_):
                    kern[(1, )](x_, y_, o_, N, BLOCK=BLOCK, num_warps=4, num_stages=1)
                fn = torch.compile(call, fullgraph=True, dynamic=False)
                return lambda: fn(x, y, out)
            add(JIT_COMPILED, jit_compiled)
        else:
            unavailable[JIT_COMPILED] = "not available: needs the Triton JIT"

    add(TORCH_ADD, lambda: (lambda: torch.add(x, y, out=out)))
    methods[EMPTY] = lambda: None
    return methods


def gpu_pace(torch, fn, launches: int = 500) -> float:
    """The GPU's own time per launch (us) of the tiny kernel, launches queued behind a long
    sleep so that the host never starves the GPU: if every method's time per call is above
    this, the loops measure the caller, not the GPU."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(100_000_000)  # ~50 ms: longer than queuing the launches takes
    start.record()
    for _ in range(launches):
        fn()
    end.record()
    torch.cuda.synchronize()
    return 1e3 * start.elapsed_time(end) / launches


def measure(torch, methods: dict, calls: int, rounds: int) -> dict:
    names = [n for n in ORDER if n in methods]
    per = {n: [] for n in names}
    enq = {n: [] for n in names}
    sync = torch.cuda.synchronize
    perf = time.perf_counter
    for rnd in range(rounds):
        k = rnd % len(names)
        for name in names[k:] + names[:k]:
            fn = methods[name]
            sync()
            t0 = perf()
            for _ in itertools.repeat(None, calls):
                fn()
            t1 = perf()
            sync()
            t2 = perf()
            per[name].append(1e6 * (t2 - t0) / calls)
            enq[name].append(1e6 * (t1 - t0) / calls)
        say(f"round {rnd + 1}/{rounds}: " + ", ".join(
            f"{n.split(':')[-1].strip()[:22]} {per[n][-1]:.2f}" for n in names))
    summary = {}
    for name in names:
        us = per[name]
        q = sorted(us)
        row = {"us_per_call": med(us), "p10_us": q[len(q) // 10], "p90_us": q[(9 * len(q)) // 10],
               "min_us": q[0], "max_us": q[-1], "enqueue_us_per_call": med(enq[name])}
        for base, key in ((JIT, "vs_jit"), (CTYPES, "vs_ctypes")):
            if base in per:
                ratios = [a / b for a, b in zip(us, per[base])]
                row[key] = med(ratios)
                row[key + "_ci95"] = median_ci95(ratios)
        summary[name] = row
    return {"calls_per_block": calls, "rounds": rounds, "per_round_us": per,
            "per_round_enqueue_us": enq, "summary": summary}


# ----------------------------------------------------------------------------- report


def fmt_ratio(row: dict, key: str) -> str:
    if key not in row:
        return "n/a"
    lo, hi = row[key + "_ci95"]
    return f"**{row[key]:.2f}x** [{lo:.2f}-{hi:.2f}]"


def markdown(res: dict) -> str:
    env = res.get("environment", {})
    lines = ["# Per-call overhead for PyTorch callers", ""]
    if env:
        lines += [f"GPU: {env.get('gpu', '?')} (sm_{env.get('sm', '?')}), driver "
                  f"{env.get('driver', '?')}; CPU: {env.get('cpu', '?')}; torch {env.get('torch')}, "
                  f"triton {env.get('triton')}, Python {env.get('python')}; {res.get('started')}. "
                  f"Command: `{res.get('command', '')}`.", ""]
    m = res.get("measurement")
    if m:
        lines += [f"Kernel: bench/gpu/tiny.py, `out = x + y` on {N} fp32 (one CTA). "
                  f"{m['rounds']} rounds; each round times {m['calls_per_block']} back-to-back "
                  "calls of every method (order rotating every round), ending with "
                  "`torch.cuda.synchronize()` inside the timed span. Medians over rounds; ratios "
                  "are paired within a round, with a distribution-free 95% CI of the median. "
                  f"The calling thread is pinned to CPU {res.get('pinned_cpu')}.", ""]
        if res.get("gpu_pace_us") is not None:
            lines += [f"The GPU's own time per launch of this kernel (launches queued behind a "
                      f"sleep) is {res['gpu_pace_us']:.2f} us: "
                      + ("every method is slower than that, so each row is the caller's host cost."
                         if res.get("host_bound") else
                         "**some method is not slower than that: its row is bounded by the GPU.**"),
                      ""]
        lines += ["| method | us/call, median (p10-p90) | vs Triton JIT [95% CI] | "
                  "vs ctypes raw [95% CI] | enqueue only us/call |",
                  "|---|---|---|---|---|"]
        una = res.get("unavailable", {})
        for name in ORDER:
            row = m["summary"].get(name)
            if row is None:
                if name in una:
                    lines.append(f"| {name} | {'not run' if 'not run' in una[name] else 'not available'}"
                                 " (below) | | | |")
                continue
            lines.append(f"| {name} | {row['us_per_call']:.2f} ({row['p10_us']:.2f}-"
                         f"{row['p90_us']:.2f}) | {fmt_ratio(row, 'vs_jit')} | "
                         f"{fmt_ratio(row, 'vs_ctypes')} | {row['enqueue_us_per_call']:.2f} |")
        lines.append("")
    una = res.get("unavailable", {})
    if una:
        lines += ["Not measured:", ""] + [f"- {k}: {v}" for k, v in una.items()] + [""]
    if res.get("torch_ops"):
        lines += [f"Torch ops (from `{res.get('torch_op_module')}`): " + "; ".join(
            f"{k}: `{v}`" for k, v in res["torch_ops"].items())
            + (f"; torch.compile calls the {res['torch_compile_op']} op"
               if res.get("torch_compile_op") else "") + ".", ""]
    setup = res.get("setup_s", {})
    if setup:
        lines += ["Set-up and first call, seconds (JIT: compile with an empty cache; torch.compile: "
                  "tracing and code generation): " + ", ".join(
                      f"{k} {v:.2f}" for k, v in setup.items()) + ".", ""]
    if res.get("errors"):
        lines += ["Errors:", ""] + [f"- {k}: `{v.splitlines()[0][:300]}`"
                                    for k, v in res["errors"].items()] + [""]
    return "\n".join(lines)


def chart(res: dict, path: Path) -> str | None:
    m = res.get("measurement")
    if not m:
        return "no chart: nothing was measured"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - the chart is optional, the JSON and Markdown are not
        return f"no chart: {e}"
    s = m["summary"]
    names = list(s)
    vals = [s[n]["us_per_call"] for n in names]
    colors = ["#d62728" if n == JIT else "#1f77b4" if n.startswith("ours") else "#7f7f7f"
              for n in names]
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(names) + 1.6))
    ax.barh(range(len(names)), vals, color=colors)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    for i, n in enumerate(names):
        extra = f" ({s[n]['vs_jit']:.2f}x JIT)" if "vs_jit" in s[n] else ""
        ax.text(vals[i], i, f" {vals[i]:.2f} us{extra}", va="center", fontsize=8)
    if res.get("gpu_pace_us"):
        ax.axvline(res["gpu_pace_us"], color="k", ls=":", lw=1,
                   label=f"GPU time per launch {res['gpu_pace_us']:.2f} us")
        ax.legend(fontsize=7, loc="lower right")
    ax.set_xlim(0, max(vals) * 1.45)
    ax.set_xlabel("us per call (median over rounds; wall-clock, queue drained)")
    env = res.get("environment", {})
    ax.set_title(f"Per-call overhead, tiny kernel, PyTorch callers: {env.get('gpu', '?')}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def write_outputs(res: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "torch_overhead.json").write_text(json.dumps(res, indent=1) + "\n")
    (out_dir / "torch_overhead.md").write_text(markdown(res))
    err = chart(res, out_dir / "torch_overhead.png")
    say(err or f"wrote {out_dir}/torch_overhead.json, .md, .png")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pack-dir", type=Path, default=REPO / ".gpu" / "torchbench" / "overhead",
                   help="libtiny1.so and tiny.py (`tools/gpu pack torchbench`)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--torch-op-module", default=None,
                   help="the Python module triton_torch_library generated for libtiny1; "
                        "without it the torch op rows say 'not available'")
    p.add_argument("--torch-op", default=None,
                   help="the allocating op's qualified name NS::NAME (default: the op named "
                        "tiny1 that the module registered)")
    p.add_argument("--calls", type=int, default=20000, help="back-to-back calls per block")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile rows")
    p.add_argument("--render", type=Path, default=None, metavar="JSON",
                   help="measure nothing: rewrite the Markdown and chart from a torch_overhead.json")
    args = p.parse_args()
    if args.render is not None:
        res = json.loads(args.render.read_text())
        write_outputs(res, args.out or args.render.parent)
        return 0
    for f in ("libtiny1.so", "tiny.py"):
        if not (args.pack_dir / f).is_file():
            fail(TOOL, f"{args.pack_dir / f} is missing: run tools/gpu pack torchbench on the build "
                       "machine and carry .gpu/torchbench")
    if args.torch_op_module and not Path(args.torch_op_module).is_file():
        fail(TOOL, f"--torch-op-module {args.torch_op_module} is not a file")
    # JIT compiles and inductor's code go to fresh folders: the JIT row is warm in this process
    # only, and nothing of an earlier run is reused.
    scratch = tempfile.mkdtemp(prefix="rules_triton_torch_overhead_")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(scratch, "inductor")
    torch = import_torch_with_gpu(TOOL)
    torch.zeros(1, device="cuda")  # the primary context, current in this thread
    res = {"format": "rules_triton.bench.torch_overhead.v1",
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "python3 bench/torch/overhead_bench.py " + " ".join(sys.argv[1:]),
           "environment": environment(torch)}
    manifest = args.pack_dir.parent / "MANIFEST.json"
    if manifest.is_file():
        m = json.loads(manifest.read_text())
        res["pack"] = {k: m.get(k) for k in ("commit", "uncommitted_changes", "packed_at")}
    t0 = time.time()
    try:
        methods = setup_methods(args, torch, res)
        if CTYPES not in methods:
            raise RuntimeError(f"the library itself does not run: {res['unavailable'].get(CTYPES)}")
        res["gpu_pace_us"] = med([gpu_pace(torch, methods[CTYPES]) for _ in range(5)])
        for fn in methods.values():  # warm-up: caches, branch predictors, the allocator
            for _ in range(500):
                fn()
        torch.cuda.synchronize()
        res["pinned_cpu"] = pin_to_one_cpu()
        res["measurement"] = measure(torch, methods, args.calls, args.rounds)
        timed = [r for n, r in res["measurement"]["summary"].items() if n != EMPTY]
        res["host_bound"] = all(r["us_per_call"] > 1.1 * res["gpu_pace_us"] for r in timed)
    except Exception as e:  # noqa: BLE001 - whatever was measured is still written
        res.setdefault("errors", {})["run"] = f"{type(e).__name__}: {e}\n" + traceback.format_exc()[-3000:]
        say(f"error: {type(e).__name__}: {e}")
    res["total_seconds"] = round(time.time() - t0, 1)
    write_outputs(res, args.out or default_out())
    print(markdown(res))
    return 1 if res.get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
