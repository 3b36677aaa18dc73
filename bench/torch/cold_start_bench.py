#!/usr/bin/env python3
"""Cold start over the Liger-Kernel corpus: the first call of each kernel in a fresh process.

    python3 bench/torch/cold_start_bench.py [--corpus-dir .gpu/corpus] [--out DIR]
        [--torch-op-module PATH] [-k SUBSTRING] [--budget-s S] [--no-server]
    python3 bench/torch/cold_start_bench.py --render torch_cold_start.json   # no GPU needed

For every kernel of tests/corpus (corpus_manifest.json, called as tests/corpus/corpus_calls.py
says), one fresh Python process per mode:

  jit_cold   the Triton JIT with an empty TRITON_CACHE_DIR (a fresh folder): import triton, import
             the kernel's module (the locked liger-kernel source), compile, launch
  jit_warm   the same again in a new process with that now-filled cache folder
  ctypes     our library: dlopen libcorpus_kernels.so (ctypes), launch
  torch_op   our torch op: import the module triton_torch_library generated (it loads the
             library and registers the ops), call torch.ops.NS.KERNEL (--torch-op-module;
             without it the column says "not available")

The time measured runs from before the first import or load to after torch.cuda.synchronize()
of the first call. Not in it, reported separately because every mode pays them alike: the
interpreter's start, `import torch`, the CUDA context, and making the arguments (the same tensors
the corpus GPU check uses). The sum over kernels is what a server pays at start-up when every
kernel lives in its own process; the "server" rows load every kernel in ONE fresh process per
mode, which shares the one-time costs (import triton, Triton's own helper modules that it builds
with the C compiler into an empty cache, dlopen).

Before the timed processes one untimed process imports torch and triton and reads every file the
modes read, so that the first timed process does not pay for reading them from disk. The order of
the modes rotates from kernel to kernel (jit_cold always before its jit_warm).

Writes torch_cold_start.json, torch_cold_start.md and (with matplotlib) torch_cold_start.png into
--out (default $OUT, else bench/results/).
"""
import time

T_FIRST = time.time()  # the child's first statement: the interpreter's start ends here

import argparse  # noqa: E402 - after the timestamp on purpose
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "corpus"))

TOOL = "cold_start_bench"
MODES = ["jit_cold", "jit_warm", "ctypes", "torch_op"]
LABELS = {"jit_cold": "Triton JIT, empty cache", "jit_warm": "Triton JIT, warm disk cache",
          "ctypes": "ours: dlopen + ctypes", "torch_op": "ours: torch op"}
CHILD_TIMEOUT_S = 300


# ----------------------------------------------------------------------------- child


def child(a) -> dict:
    """One fresh process: the first call of every kernel in a.kernels, in one mode."""
    perf = time.perf_counter
    rec = {"mode": a.child, "kernels": a.kernels.split(","),
           "interpreter_start_s": T_FIRST - a.spawned_at}
    t = perf()
    import torch
    rec["torch_import_s"] = perf() - t
    rec["triton_imported_by_torch"] = "triton" in sys.modules
    t = perf()
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    rec["cuda_context_s"] = perf() - t

    from corpus_calls import (c_function, c_launcher, jit_launcher, make_args, launch_arg_names,
                              runtime_names_from_source, runtime_types)
    corpus = Path(a.corpus_dir)
    site = corpus / "site"
    manifest = {e["name"]: e for e in json.loads((corpus / "corpus_manifest.json").read_text())}
    entries = [manifest[k] for k in rec["kernels"]]
    t = perf()
    values = {}
    for e in entries:
        values[e["name"]], _ = make_args(torch, e, runtime_types(e["signature"]), seed=1234)
    names = {e["name"]: runtime_names_from_source(site, e) for e in entries}
    torch.cuda.synchronize()
    rec["args_s"] = perf() - t

    steps, per_kernel = {}, {}
    t_begin = perf()
    if a.child in ("jit_cold", "jit_warm"):
        sys.path.insert(0, str(site))
        # The kernel files import from liger_kernel.ops; the package __init__s (its functional
        # API and backends: ~8 s of imports) are not the JIT's cost, and a server pays them once:
        # the parent packages are made empty, so only the kernel's own module and what it
        # imports run, as our build's kernel_module import does.
        import types
        for pkg in ("liger_kernel", "liger_kernel.ops"):
            mod = types.ModuleType(pkg)
            mod.__path__ = [str(site.joinpath(*pkg.split(".")))]
            sys.modules[pkg] = mod
        t = perf()
        import triton
        import triton.language as tl
        steps["import triton"] = perf() - t
        from corpus_calls import jit_function
        for e in entries:
            t = perf()
            fn = jit_function(e["module"], e["kernel"])
            t_mod = perf()
            jit_launcher(fn, tl, e, values[e["name"]])()
            torch.cuda.synchronize()
            t_end = perf()
            per_kernel[e["name"]] = {"s": t_end - t, "import_module_s": t_mod - t,
                                     "compile_and_launch_s": t_end - t_mod}
        rec["triton_version"] = triton.__version__
    elif a.child == "ctypes":
        import ctypes
        t = perf()
        lib = ctypes.CDLL(str(corpus / "libcorpus_kernels.so"))
        steps["dlopen"] = perf() - t
        stream = torch.cuda.current_stream().cuda_stream
        for e in entries:
            t = perf()
            c_launcher(c_function(lib, e), e, values[e["name"]], stream)()
            torch.cuda.synchronize()
            per_kernel[e["name"]] = {"s": perf() - t}
    elif a.child == "torch_op":
        from torchbench_common import bind_op_args, load_module
        qualified = json.loads(a.torch_ops)  # kernel -> 'ns::name', found by the warm-up process
        t = perf()
        load_module(Path(a.torch_op_module), "rules_triton_torch_ops")
        steps["import the generated module"] = perf() - t
        calls = {}
        for e in entries:
            t = perf()
            ns, _, op_name = qualified[e["name"]].partition("::")
            packet = getattr(getattr(torch.ops, ns), op_name)
            vals, launch = values[e["name"]], list(e["launch"])
            named = dict(zip(names[e["name"]] or [], vals))
            named.update(zip(launch_arg_names(e), launch))
            args, kwargs = bind_op_args(packet, named if names[e["name"]] else {}, vals + launch)
            result = packet(*args, **kwargs)
            torch.cuda.synchronize()
            per_kernel[e["name"]] = {"s": perf() - t}
            calls[e["name"]] = (result, vals)
    else:
        raise SystemExit(f"{TOOL}: error: unknown mode {a.child}")
    rec["first_call_s"] = perf() - t_begin
    rec["steps_s"] = steps
    rec["per_kernel"] = per_kernel
    rec["triton_imported"] = "triton" in sys.modules
    if a.child == "torch_op":
        rec["check"] = check_op_outputs(torch, corpus, entries, calls)
    return rec


def check_op_outputs(torch, corpus: Path, entries: list, calls: dict) -> dict:
    """After the timed span: each op's tensors against the library's own launch on equal inputs,
    bit for bit (the op must run the same kernel, not merely something that returns)."""
    import ctypes
    from corpus_calls import c_function, c_launcher, make_args, runtime_types
    lib = ctypes.CDLL(str(corpus / "libcorpus_kernels.so"))
    stream = torch.cuda.current_stream().cuda_stream
    out = {}
    for e in entries:
        result, vals = calls[e["name"]]
        ref, _ = make_args(torch, e, runtime_types(e["signature"]), seed=1234)
        c_launcher(c_function(lib, e), e, ref, stream)()
        torch.cuda.synchronize()
        if result is not None:
            out[e["name"]] = "returns tensors: not compared"
            continue
        same = all(torch.equal(v.view(torch.uint8) if v.is_floating_point() else v,
                               r.view(torch.uint8) if r.is_floating_point() else r)
                   for v, r in zip(vals, ref) if hasattr(v, "data_ptr"))
        out[e["name"]] = "bit-identical to the library" if same else "DIFFERS from the library"
    return out


# ----------------------------------------------------------------------------- parent


def say(msg: str) -> None:
    print(f"[{TOOL} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def spawn(a, mode: str, kernels: list, cache_dir: str) -> dict:
    env = dict(os.environ)
    # Every mode gets a cache folder of its own: the JIT modes the one they share (empty for
    # jit_cold), the others an empty one, so that anything compiling behind our back shows.
    env["TRITON_CACHE_DIR"] = cache_dir
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode,
           "--kernels", ",".join(kernels), "--corpus-dir", str(a.corpus_dir),
           "--spawned-at", repr(time.time())]
    if mode == "torch_op":
        cmd += ["--torch-op-module", str(a.torch_op_module), "--torch-ops", json.dumps(a.torch_ops)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"mode": mode, "kernels": kernels, "error": f"timed out after {CHILD_TIMEOUT_S} s"}
    wall = time.perf_counter() - t0
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"mode": mode, "kernels": kernels, "error": f"exit {p.returncode}: {tail[:400]}",
                "stderr_tail": p.stderr[-3000:]}
    rec = json.loads(lines[-1])
    rec["process_wall_s"] = wall
    return rec


WARM_UP = r"""
import json, sys
from pathlib import Path
import torch, triton, triton.language
torch.zeros(1, device="cuda")
corpus, module = sys.argv[1], sys.argv[2]
for root in [corpus] + ([str(Path(module).parent)] if module else []):
    for f in Path(root).rglob("*"):
        if f.is_file():
            f.read_bytes()
new_ops, op_error = [], None
if module:
    sys.path.insert(0, sys.argv[3])
    from torchbench_common import import_op_module
    try:
        _, new_ops = import_op_module(torch, Path(module))
    except Exception as e:  # the other modes still run; the torch op column says why not
        op_error = f"{type(e).__name__}: {e}".splitlines()[0][:400]
print(json.dumps({"new_ops": new_ops, "op_error": op_error}))
"""


def warm_up(a) -> dict:
    """An untimed process that imports torch and triton, opens a CUDA context and reads every
    file the timed modes read, so that no timed process pays for the disk. It also imports the
    generated torch op module once and lists the ops it registers: the timed processes then
    look their op up by name, as a user would, instead of scanning the dispatcher."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", WARM_UP, str(a.corpus_dir),
                        str(a.torch_op_module or ""), str(HERE)],
                       capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    rec = {"s": round(time.perf_counter() - t0, 2), "rc": p.returncode}
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode != 0 or not lines:
        rec["stderr_tail"] = p.stderr[-1500:]
    else:
        rec.update(json.loads(lines[-1]))
    return rec


def run_all(a, res: dict, entries: list) -> None:
    modes = res["modes"]
    scratch = Path(tempfile.mkdtemp(prefix="rules_triton_cold_start_"))
    t_start = time.time()
    runs = res.setdefault("runs", [])

    def out_of_time() -> bool:
        return time.time() - t_start > a.budget_s

    def one(mode, kernels, tag, cache):
        if out_of_time():
            runs.append({"mode": mode, "kernels": kernels, "tag": tag,
                         "skipped": f"over the {a.budget_s} s budget"})
            return
        rec = spawn(a, mode, kernels, str(cache))
        rec["tag"] = tag
        runs.append(rec)
        if "error" in rec:
            say(f"{tag} {mode}: error: {rec['error']}")
        else:
            say(f"{tag} {mode}: {1e3 * rec['first_call_s']:.1f} ms (process {rec['process_wall_s']:.2f} s)")

    # per kernel: one process per mode; the order of the modes rotates (cold before warm)
    orders = [["ctypes", "torch_op", "jit_cold", "jit_warm"],
              ["jit_cold", "jit_warm", "torch_op", "ctypes"],
              ["torch_op", "jit_cold", "jit_warm", "ctypes"],
              ["jit_cold", "jit_warm", "ctypes", "torch_op"]]
    for i, e in enumerate(entries):
        cache = scratch / f"jit_{e['name']}"
        cache.mkdir()
        for mode in orders[i % len(orders)]:
            if mode in modes:
                other = scratch / f"empty_{e['name']}_{mode}"
                other.mkdir(exist_ok=True)
                one(mode, [e["name"]], "per_kernel",
                    cache if mode.startswith("jit") else other)
    # server: every kernel in one process per mode
    if not a.no_server:
        names = [e["name"] for e in entries]
        cache = scratch / "jit_server"
        cache.mkdir()
        for mode in modes:
            other = scratch / f"empty_server_{mode}"
            other.mkdir()
            one(mode, names, "server", cache if mode.startswith("jit") else other)


def summarize(res: dict) -> dict:
    """Per kernel and mode the measured first call; the sums; the fixed costs."""
    per = {}
    fixed = {k: [] for k in ("interpreter_start_s", "torch_import_s", "cuda_context_s", "args_s")}
    server = {}
    for r in res.get("runs", []):
        if "first_call_s" not in r:
            continue
        for k in fixed:
            fixed[k].append(r[k])
        if r["tag"] == "per_kernel":
            per.setdefault(r["kernels"][0], {})[r["mode"]] = r["first_call_s"]
        else:
            server[r["mode"]] = {"first_call_s": r["first_call_s"], "steps_s": r["steps_s"],
                                 "process_wall_s": r["process_wall_s"]}
    kernels = [k for k in res.get("kernels", []) if k in per]
    complete = [k for k in kernels if all(m in per[k] for m in res["modes"])]
    sums = {m: sum(per[k][m] for k in complete) for m in res["modes"]}
    ratios = {}
    for base in ("ctypes", "torch_op"):
        if base in res["modes"] and sums.get(base):
            for m in ("jit_cold", "jit_warm"):
                if m in res["modes"]:
                    ratios[f"{m} / {base}"] = sums[m] / sums[base]
    import statistics
    return {"per_kernel_s": per, "kernels_in_sum": complete, "sum_s": sums,
            "sum_ratios": ratios, "server": server,
            "fixed_median_s": {k: statistics.median(v) for k, v in fixed.items() if v},
            "fixed_max_s": {k: max(v) for k, v in fixed.items() if v}}


def ms(v) -> str:
    return "n/a" if v is None else f"{1e3 * v:.1f}" if v < 10 else f"{1e3 * v:.0f}"


def markdown(res: dict) -> str:
    env = res.get("environment", {})
    s = res.get("summary") or {}
    modes = res.get("modes", [])
    lines = ["# Cold start over the Liger-Kernel corpus", ""]
    if env:
        lines += [f"GPU: {env.get('gpu', '?')} (sm_{env.get('sm', '?')}), driver "
                  f"{env.get('driver', '?')}; CPU: {env.get('cpu', '?')} ({env.get('cpus')} "
                  f"CPUs); torch {env.get('torch')}, triton {env.get('triton')}, Python "
                  f"{env.get('python')}; {res.get('started')}. Command: `{res.get('command')}`.",
                  ""]
    lines += ["The first call of each kernel in a fresh process, per mode: from before the first "
              "import or load to after `torch.cuda.synchronize()` of the first call, in ms. Not "
              "included (every mode pays them alike): the interpreter's start, `import torch`, "
              "the CUDA context and making the arguments (below).", ""]
    una = res.get("unavailable", {})
    head = "| kernel | " + " | ".join(LABELS[m] for m in MODES) + " | JIT empty / ours | " \
        "JIT warm / ours |"
    lines += [head, "|---" * (len(MODES) + 3) + "|"]
    per = s.get("per_kernel_s", {})

    def ratio(num, den):
        return f"{num / den:.0f}x" if num is not None and den else "n/a"
    for k in res.get("kernels", []):
        row = per.get(k, {})
        cells = [ms(row.get(m)) if m in modes else "not available" for m in MODES]
        lines.append(f"| {k} | " + " | ".join(cells) + f" | {ratio(row.get('jit_cold'), row.get('ctypes'))}"
                     f" | {ratio(row.get('jit_warm'), row.get('ctypes'))} |")
    sums = s.get("sum_s", {})
    if sums:
        cells = [f"**{ms(sums.get(m))}**" if m in modes else "not available" for m in MODES]
        lines.append(f"| **sum, {len(s['kernels_in_sum'])} kernels** | " + " | ".join(cells)
                     + f" | **{ratio(sums.get('jit_cold'), sums.get('ctypes'))}** | "
                     f"**{ratio(sums.get('jit_warm'), sums.get('ctypes'))}** |")
    lines.append("")
    if s.get("sum_ratios"):
        lines += ["Ratios of the sums: " + ", ".join(f"{k} {v:.1f}x" for k, v in s["sum_ratios"].items())
                  + ". `ours` in the table's ratio columns is the ctypes column.", ""]
    server = s.get("server", {})
    if server:
        lines += ["**Server start-up**: every kernel's first call in ONE fresh process per mode "
                  "(the one-time costs paid once):", "",
                  "| mode | all first calls, ms | of which | whole process, s |", "|---|---|---|---|"]
        for m in MODES:
            if m in server:
                r = server[m]
                steps = ", ".join(f"{k} {ms(v)}" for k, v in r["steps_s"].items())
                lines.append(f"| {LABELS[m]} | {ms(r['first_call_s'])} | {steps} | "
                             f"{r['process_wall_s']:.2f} |")
        if "ctypes" in server:
            base = server["ctypes"]["first_call_s"]
            lines += ["", "Server start-up against ours (ctypes): " + ", ".join(
                f"{LABELS[m]} {server[m]['first_call_s'] / base:.0f}x" for m in MODES
                if m in server and m != "ctypes") + "."]
        lines.append("")
    fixed = s.get("fixed_median_s", {})
    if fixed:
        names = {"interpreter_start_s": "interpreter start", "torch_import_s": "`import torch`",
                 "cuda_context_s": "CUDA context", "args_s": "making the arguments"}
        lines += ["Paid by every process before the measured span (median over all processes, "
                  "max in brackets): " + ", ".join(
                      f"{names[k]} {ms(v)} ms ({ms(s['fixed_max_s'][k])})" for k, v in fixed.items())
                  + ".", ""]
    jit_steps = [r for r in res.get("runs", []) if r.get("tag") == "per_kernel"
                 and r.get("mode") in ("jit_cold", "jit_warm") and "per_kernel" in r]
    if jit_steps:
        by = {}
        for r in jit_steps:
            k = r["kernels"][0]
            pk = r["per_kernel"][k]
            by.setdefault(r["mode"], []).append((r["steps_s"]["import triton"], pk["import_module_s"],
                                                 pk["compile_and_launch_s"]))
        import statistics
        lines += ["Where the JIT's time goes (median over kernels, ms): " + "; ".join(
            f"{LABELS[m]}: import triton {ms(statistics.median(x[0] for x in v))}, import the "
            f"kernel's module {ms(statistics.median(x[1] for x in v))}, compile or cache load + "
            f"launch {ms(statistics.median(x[2] for x in v))}" for m, v in by.items()) + ".", ""]
    imported = sorted({r["mode"] for r in res.get("runs", [])
                       if r.get("triton_imported") and r.get("mode") in ("ctypes", "torch_op")})
    if any(r.get("mode") in ("ctypes", "torch_op") and "first_call_s" in r for r in res.get("runs", [])):
        lines += ["triton was imported by: " + (", ".join(imported) if imported else
                                                "no process of ours (ctypes, torch op)") + ".", ""]
    checks = {}
    for r in res.get("runs", []):
        for k, v in (r.get("check") or {}).items():
            checks.setdefault(v, set()).add(k)
    if checks:
        lines += ["Torch op outputs against the library's: " + "; ".join(
            f"{v}: {len(ks)} kernel(s)" for v, ks in checks.items()) + ".", ""]
    if una:
        lines += ["Not measured:", ""] + [f"- {k}: {v}" for k, v in una.items()] + [""]
    bad = [r for r in res.get("runs", []) if "error" in r or "skipped" in r]
    if bad:
        lines += ["Runs that failed or were skipped:", ""] + [
            f"- {r.get('tag')} {r['mode']} {','.join(r['kernels'])[:60]}: "
            f"{r.get('error') or r.get('skipped')}" for r in bad] + [""]
    if res.get("errors"):
        lines += ["Errors:", ""] + [f"- {k}: `{v.splitlines()[0][:300]}`"
                                    for k, v in res["errors"].items()] + [""]
    return "\n".join(lines)


def chart(res: dict, path: Path) -> str | None:
    s = res.get("summary") or {}
    per = s.get("per_kernel_s")
    if not per:
        return "no chart: nothing was measured"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - the chart is optional
        return f"no chart: {e}"
    modes = [m for m in MODES if m in res["modes"]]
    colors = {"jit_cold": "#d62728", "jit_warm": "#ff9896", "ctypes": "#1f77b4",
              "torch_op": "#2ca02c"}
    kernels = [k for k in res["kernels"] if k in per]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(17, 6.5), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / len(modes)
    for j, m in enumerate(modes):
        xs = [i + (j - (len(modes) - 1) / 2) * width for i in range(len(kernels))]
        ax.bar(xs, [1e3 * per[k].get(m, float("nan")) for k in kernels], width, label=LABELS[m],
               color=colors[m])
    ax.set_yscale("log")
    ax.set_xticks(range(len(kernels)), kernels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("first call in a fresh process, ms (log)")
    ax.set_title("Per kernel: load/import + first call")
    ax.legend(fontsize=8)
    groups = [("sum of per-kernel\nprocesses", s.get("sum_s", {}))]
    if s.get("server"):
        groups.append(("server: all kernels,\none process", {m: v["first_call_s"]
                                                             for m, v in s["server"].items()}))
    for g, (label, vals) in enumerate(groups):
        for j, m in enumerate(modes):
            if m in vals:
                x = g + (j - (len(modes) - 1) / 2) * width
                ax2.bar(x, 1e3 * vals[m], width, color=colors[m])
                ax2.text(x, 1e3 * vals[m], f"{1e3 * vals[m]:.0f}", ha="center", va="bottom",
                         fontsize=7)
    ax2.set_yscale("log")
    ax2.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
    ax2.set_ylabel("ms (log)")
    ax2.set_title("What start-up costs")
    env = res.get("environment", {})
    fig.suptitle(f"Cold start, Liger-Kernel corpus ({len(kernels)} kernels): {env.get('gpu', '?')}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def write_outputs(res: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "torch_cold_start.json").write_text(json.dumps(res, indent=1) + "\n")
    (out_dir / "torch_cold_start.md").write_text(markdown(res))
    err = chart(res, out_dir / "torch_cold_start.png")
    say(err or f"wrote {out_dir}/torch_cold_start.json, .md, .png")


def _results_store():
    """bench/results_store.py (how committed raw results are stored), for --render."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import results_store
    return results_store


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus-dir", type=Path, default=REPO / ".gpu" / "corpus",
                   help="what `tools/gpu pack corpus` packed (`pack torchbench` packs it too)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--torch-op-module", default=None,
                   help="the Python module triton_torch_library generated for the corpus "
                        "library; without it the torch op column says 'not available'")
    p.add_argument("-k", default="", help="only kernels whose name contains this")
    p.add_argument("--budget-s", type=float, default=240.0,
                   help="runs that would start after this many seconds are skipped (recorded)")
    p.add_argument("--no-server", action="store_true",
                   help="skip the server rows (every kernel in one process per mode)")
    p.add_argument("--render", type=Path, default=None, metavar="JSON",
                   help="measure nothing: rewrite the Markdown and chart from a torch_cold_start.json")
    # the child side (one fresh process per kernel and mode); not for users
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--kernels", default="", help=argparse.SUPPRESS)
    p.add_argument("--spawned-at", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--torch-ops", default="{}", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a)), flush=True)
        return 0
    if a.render is not None:
        res = _results_store().load(a.render)
        write_outputs(res, a.out or a.render.parent)
        return 0
    from torchbench_common import (default_out, environment, fail, import_torch_with_gpu,
                                   qualified_op_name)
    for f in ("libcorpus_kernels.so", "corpus_manifest.json", "site/liger_kernel/__init__.py"):
        if not (a.corpus_dir / f).exists():
            fail(TOOL, f"{a.corpus_dir / f} is missing: run tools/gpu pack torchbench (or "
                       "tools/gpu pack corpus) on the build machine and carry .gpu/corpus")
    if a.torch_op_module:
        a.torch_op_module = Path(a.torch_op_module).resolve()
        if not a.torch_op_module.is_file():
            fail(TOOL, f"--torch-op-module {a.torch_op_module} is not a file")
    a.corpus_dir = a.corpus_dir.resolve()
    torch = import_torch_with_gpu(TOOL)
    entries = [e for e in json.loads((a.corpus_dir / "corpus_manifest.json").read_text())
               if a.k in e["name"]]
    res = {"format": "rules_triton.bench.torch_cold_start.v1",
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "python3 bench/torch/cold_start_bench.py " + " ".join(sys.argv[1:]),
           "environment": environment(torch), "kernels": [e["name"] for e in entries],
           "modes": [m for m in MODES if m != "torch_op" or a.torch_op_module],
           "unavailable": {} if a.torch_op_module else {
               LABELS["torch_op"]: "not available: no --torch-op-module (the Python module "
                                   "triton_torch_library generates for the corpus library)"}}
    if a.torch_op_module:
        res["torch_op_module"] = str(a.torch_op_module)
    del torch  # the parent's torch plays no part in the children's timings
    t0 = time.time()
    res["warm_up"] = warm_up(a)
    if res["warm_up"]["rc"] != 0:
        fail(TOOL, "the warm-up process failed: "
                   + (res["warm_up"]["stderr_tail"].strip().splitlines() or ["?"])[-1])
    if a.torch_op_module:
        a.torch_ops = {}
        try:
            if res["warm_up"].get("op_error"):
                raise LookupError(f"the module did not import: {res['warm_up']['op_error']}")
            for e in entries:
                a.torch_ops[e["name"]] = qualified_op_name(res["warm_up"]["new_ops"],
                                                           [e["name"], e["kernel"]])
            res["torch_ops"] = a.torch_ops
        except LookupError as e:
            res["modes"].remove("torch_op")
            res["unavailable"][LABELS["torch_op"]] = f"not available: {e}"
            a.torch_op_module = None
    say(f"warm-up process: {res['warm_up']['s']} s; {len(entries)} kernels x "
        f"{len(res['modes'])} modes, then the server rows")
    try:
        run_all(a, res, entries)
    except Exception as e:  # noqa: BLE001 - what was measured is still written
        import traceback
        res.setdefault("errors", {})["run"] = f"{type(e).__name__}: {e}\n" + traceback.format_exc()[-3000:]
    res["summary"] = summarize(res)
    res["total_seconds"] = round(time.time() - t0, 1)
    write_outputs(res, a.out or default_out())
    print(markdown(res))
    failed = [r for r in res["runs"] if "error" in r]
    return 1 if failed or res.get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
