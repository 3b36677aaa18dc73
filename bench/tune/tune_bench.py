#!/usr/bin/env python3
"""Tuned matmul benchmark, on the GPU machine (python3 + torch + triton, no Bazel), from the
repository root, after `tools/tune //kernels:matmul_tuned //kernels:matmul_tuned_bf16` (in
examples/) packed the libraries built with their committed tables:

    python3 bench/tune/tune_bench.py .gpu/tune/matmul_tuned .gpu/tune/matmul_tuned_bf16 \\
        [--out bench/results] [--quick] [--reps 5] [--rounds 5]
    python3 bench/tune/tune_bench.py --render bench/results/tune.json   # no GPU: re-render

Side by side in one process, on every shape of the tuning inputs (SHAPES) and each library's
dtype:
  auto    NAME_auto(stream, args...) of the ahead-of-time library: the tuning table's choice
  cublas  torch.matmul(a, b, out=c)
  jit     the same kernel file (examples/kernels/matmul_tuned.py) through Triton's JIT with
          @triton.autotune(key=["M", "N", "K"]) over the library's own configs (its records)
Every method is timed the same way (triton_aot.tune.time_launches: CUDA-graph replays of a
batch of launches between CUDA events, median), in `rounds` rounds whose method order rotates;
the per-method median over rounds is reported, with its spread ((max - min) / median over the
rounds): a shape where auto is below the JIT by less than that spread is not resolved by the
measurement. Results are checked against torch.matmul. The JIT's configs are the library's
algos: the split-K ones with pre_hook zeroing C (the library's reset_to_zero), the persistent
ones on min(SMs, tiles) programs with Triton's allocator for their device-made TMA descriptors.

Writes tune.json, tune.md and (with matplotlib) tune.png into --out: per shape the three times,
the algo NAME_auto chose and the config the autotuner chose, cuBLAS time / auto time (>1: auto
is faster) and JIT time / auto time; the geometric means over the sweep.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from triton_aot import tune, tuning  # noqa: E402

KERNELS = REPO / "examples" / "kernels"
TARGETS = {"random_auto_vs_jit_geomean_min": 0.95, "random_auto_vs_jit_min": 0.8,
           "auto_vs_cublas_geomean_min": 1.0}
# Shapes off the tuned grid, never tuned on, drawn log-uniformly from this seed (the tuning's
# own come from another, in the tuning inputs files); for the matmul also the shapes of an
# earlier report where NAME_auto fell to 0.06-0.8x cuBLAS.
RANDOM_SEED, RANDOM_COUNT = 20261126, 48


def log(msg: str) -> None:
    print(f"tune_bench: {msg}", file=sys.stderr, flush=True)


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def log_uniform(rng, high: int, low: int = 1) -> int:
    return int(math.exp(rng.uniform(math.log(low), math.log(high + 1))))


class Matmul:
    """C = A @ B (examples/kernels/matmul_tuned.py): against cuBLAS (torch.matmul)."""
    kernel_file, kernel_name, baseline = KERNELS / "matmul_tuned.py", "matmul_tuned_kernel", "cuBLAS"
    key = ["M", "N", "K"]
    reported = [(3000, 1000, 2000), (1000, 3000, 1500), (3072, 3072, 3072), (1536, 8960, 1536),
                (2000, 5120, 13824)]

    @staticmethod
    def random_shapes(rng):
        return [tuple(log_uniform(rng, 8192) for _ in range(3)) for _ in range(RANDOM_COUNT)]

    @staticmethod
    def class_shape(shape):
        """A small shape the JIT specialises the same way (each size 1, % 16 == 0, or neither)."""
        return tuple(1 if v == 1 else 16 if v % 16 == 0 else 17 for v in shape)

    @staticmethod
    def pre_hook(kwargs):
        # Split-K configs add into C with atomics: zeroed before every launch, as the library's
        # reset_to_zero algos do (Triton's own split-K configs carried this pre_hook).
        return (lambda nargs: nargs["c_ptr"].zero_()) if kwargs.get("SPLIT_K", 1) > 1 else None

    @staticmethod
    def jit_args(args, out):
        a, b, c, M, N, K, *strides = args
        return [a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                out.stride(0), out.stride(1)]

    @staticmethod
    def grid(triton, shape, num_sms):
        M, N, _ = shape

        def grid(meta_):  # the library's per-algo grids (examples/kernels/BUILD.bazel)
            tiles = triton.cdiv(M, meta_["BLOCK_M"]) * triton.cdiv(N, meta_["BLOCK_N"])
            if meta_.get("PERSISTENT"):
                return (min(num_sms, tiles),)
            return (tiles, meta_.get("SPLIT_K", 1))
        return grid

    @staticmethod
    def output(args):
        return args[2]

    @staticmethod
    def run_baseline(torch, args, out):
        torch.matmul(args[0], args[1], out=out)

    @staticmethod
    def reference(torch, inputs, args):
        return torch.matmul(args[0], args[1]).float()

    tolerance = 3e-2

    @staticmethod
    def flops(shape):
        M, N, K = shape
        return 2.0 * M * N * K


class RmsNorm:
    """y = rmsnorm(x) * w over rows (examples/kernels/rmsnorm_tuned.py): against torch's
    F.rms_norm."""
    kernel_file, kernel_name, baseline = KERNELS / "rmsnorm_tuned.py", "rmsnorm_kernel", "torch"
    key = ["n_rows", "n_cols"]
    reported = []

    @staticmethod
    def random_shapes(rng):
        return [(log_uniform(rng, 8192), log_uniform(rng, 16384)) for _ in range(RANDOM_COUNT)]

    @staticmethod
    def class_shape(shape):
        return tuple(1 if v == 1 else 16 if v % 16 == 0 else 17 for v in shape)

    @staticmethod
    def pre_hook(kwargs):
        return None

    @staticmethod
    def jit_args(args, out):
        y, x, w, xs, ys, n_rows, n_cols, eps = args
        return [out, x, w, x.stride(0), out.stride(0), n_rows, n_cols, eps]

    @staticmethod
    def grid(triton, shape, num_sms):
        return (shape[0],)

    @staticmethod
    def output(args):
        return args[0]

    @staticmethod
    def run_baseline(torch, args, out):
        x, w = args[1], args[2]
        out.copy_(torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps=args[7]))

    @staticmethod
    def reference(torch, inputs, args):
        return inputs.reference(torch, args[1], args[2]).float()

    tolerance = 2e-2

    @staticmethod
    def flops(shape):
        return 3.0 * shape[0] * shape[1]


def adapter(name: str):
    return RmsNorm if name.startswith("rmsnorm") else Matmul


def load_kernel_module(kind, tag: str):
    spec = importlib.util.spec_from_file_location(tag, kind.kernel_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, kind.kernel_name)


def jit_kernel(triton, kind, recs):
    """The kernel file's @triton.jit function under @triton.autotune over the library's configs."""
    configs = []
    for i in sorted(recs):
        r = recs[i]
        # the records hold constexprs as Python literals: "128", "True"
        kwargs = {k: ast.literal_eval(v) for k, v in r.constexprs.items()}
        configs.append(triton.Config(kwargs, num_warps=r.launch.num_warps,
                                     num_stages=r.launch.num_stages,
                                     pre_hook=kind.pre_hook(kwargs)))

    def short_bench(fn, quantiles):  # the autotuner's own timer, shortened to fit the GPU budget
        return triton.testing.do_bench(fn, warmup=3, rep=10, quantiles=quantiles)

    return triton.autotune(configs=configs, key=kind.key, do_bench=short_bench)(
        load_kernel_module(kind, "jit_" + kind.kernel_name))


def sweep(kind, inputs) -> list[tuple[str, tuple]]:
    """(set, shape): the tuned grid, then the random and the reported shapes (none tuned)."""
    import random
    tuned = {tuple(s) for s in inputs.SHAPES}
    grid = [tuple(s) for s in getattr(inputs, "GRID", inputs.SHAPES)]
    off = ([("random", s) for s in kind.random_shapes(random.Random(RANDOM_SEED))]
           + [("reported", s) for s in kind.reported])
    leaked = [s for _, s in off if s in tuned]
    if leaked:
        raise SystemExit(f"error: benchmark shapes {leaked} are tuning shapes; change RANDOM_SEED")
    return [("grid", s) for s in grid] + off


def _warm_one(task) -> str:
    """Compiles one (library, size classes, algo) of the JIT kernel into the shared on-disk cache,
    in a worker process: the autotuner then loads it instead of compiling it in the timed
    process, one config after another."""
    pack, shape, algo = task
    import torch
    p = tune.open_pack(Path(pack))
    kind = adapter(p.name)
    r = p.records[algo]
    fn = load_kernel_module(kind, "warm_" + kind.kernel_name)
    args = p.inputs.make_args(torch, p.dtype(torch), **dict(zip(p.key, shape)))
    kwargs = {k: ast.literal_eval(v) for k, v in r.constexprs.items()}
    fn.warmup(*kind.jit_args(args, kind.output(args)), grid=(1,), num_warps=r.launch.num_warps,
              num_stages=r.launch.num_stages, **kwargs)
    return f"{p.name} {'x'.join(map(str, shape))} algo {algo}"


def prewarm_jit(packs: list[Path], jobs: int) -> float:
    """Fills the Triton cache with every (library, size class, algo) the sweep will autotune,
    on `jobs` processes; returns the seconds it took."""
    import multiprocessing
    tasks = []
    for pack in packs:
        p = tune.open_pack(pack)
        kind = adapter(p.name)
        classes = sorted({kind.class_shape(s) for _, s in sweep(kind, p.inputs)})
        tasks += [(str(pack), cls, algo) for cls in classes for algo in sorted(p.records)]
    t0 = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for i, done in enumerate(pool.imap_unordered(_warm_one, tasks)):
            if i % 100 == 0:
                log(f"JIT cache: {i + 1}/{len(tasks)} compiled ({done})")
    return time.monotonic() - t0


def bench_library(pack: Path, torch, triton, args, results: list, t_start: float):
    p = tune.open_pack(pack)
    meta, name, recs, inputs, lib = p.meta, p.name, p.records, p.inputs, p.lib
    kind = adapter(name)
    dtype = p.dtype(torch)
    if lib.auto is None:
        raise SystemExit(f"error: {pack}/{meta['so']} has no {name}_auto: set tuning_key")
    auto_algo = getattr(lib.lib, f"{name}_auto_algo")
    auto_algo.restype = tune.ctypes.c_int
    auto_algo.argtypes = [tune.ctypes.c_int] + lib.fn.argtypes[1:-1]
    kernel = jit_kernel(triton, kind, recs)
    major, minor = torch.cuda.get_device_capability()
    sm = major * 10 + minor
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = sweep(kind, inputs)
    if args.quick:
        shapes = shapes[:6] + [s for s in shapes if s[0] == "random"][:6]
    for shape_set, shape in shapes:
        if args.budget_s and time.monotonic() - t_start > args.budget_s:
            log(f"time budget spent: {name} {'x'.join(map(str, shape))} and later not measured")
            results.append({"library": name, "shape": list(shape), "set": shape_set,
                            "skipped": "time budget"})
            continue
        cl_args = inputs.make_args(torch, dtype, **dict(zip(p.key, shape)))
        cargs = tune.c_values(cl_args)
        out = kind.output(cl_args)
        out_jit = torch.empty_like(out)
        out_base = torch.empty_like(out)
        jit_args = kind.jit_args(cl_args, out_jit)
        grid = kind.grid(triton, shape, num_sms)

        def run_jit(stream_handle=None):
            kernel[grid](*jit_args)

        def run_baseline(stream_handle=None):
            kind.run_baseline(torch, cl_args, out_base)

        def run_auto(stream_handle):
            r = lib.auto(stream_handle, *cargs)
            if r != 0:
                raise RuntimeError(f"{name}_auto returned CUresult {r}")

        row = {"library": name, "dtype": inputs.DTYPES[name], "shape": list(shape),
               "set": shape_set, "baseline": kind.baseline}
        try:
            run_jit()  # the autotuner benchmarks every config here (untimed)
            run_baseline()
            run_auto(torch.cuda.current_stream().cuda_stream)
            torch.cuda.synchronize()
            ref = kind.reference(torch, inputs, cl_args)
            tol = kind.tolerance
            row["auto_ok"] = bool(torch.allclose(out.float(), ref, atol=tol, rtol=tol))
            row["jit_ok"] = bool(torch.allclose(out_jit.float(), ref, atol=tol, rtol=tol))
            methods = {"auto": run_auto, "cublas": run_baseline, "jit": run_jit}
            per = {m: [] for m in methods}
            order = list(methods)
            for rnd in range(args.rounds):
                for m in order[rnd % 3:] + order[:rnd % 3]:
                    per[m].append(tune.time_launches(torch, methods[m], args.reps))
            for m, ts in per.items():
                row[f"{m}_us"] = statistics.median(ts)
                # how much one method's rounds disagree: the noise floor of the ratios below
                row[f"{m}_spread"] = (max(ts) - min(ts)) / statistics.median(ts)
            row["auto_algo"] = auto_algo(sm, *cargs)
            row["hints"] = tuning_hints(recs, cargs)
            row["auto_algo_info"] = lib.infos[row["auto_algo"]]
            best = kernel.best_config
            row["jit_config"] = str(best)
            row["jit_algo"] = next((i for i, r in recs.items()
                                    if tuning._config_matches(
                                        {"kwargs": best.kwargs, "num_warps": best.num_warps,
                                         "num_stages": best.num_stages,
                                         "num_ctas": best.num_ctas, "maxnreg": best.maxnreg},
                                        r.constexprs, r.launch)), None)
            row["cublas_over_auto"] = row["cublas_us"] / row["auto_us"]
            row["jit_over_auto"] = row["jit_us"] / row["auto_us"]
            row["tflops_auto"] = kind.flops(shape) / row["auto_us"] / 1e6
            log(f"{name} {'x'.join(map(str, shape))} ({shape_set}): auto {row['auto_us']:.1f} us "
                f"(algo {row['auto_algo']}), {kind.baseline} {row['cublas_us']:.1f}, JIT "
                f"{row['jit_us']:.1f} (algo {row['jit_algo']})")
        except Exception as e:  # one shape's failure is reported, never ends the run
            row["error"] = f"{type(e).__name__}: {e}"[:300]
            log(f"{name} {'x'.join(map(str, shape))}: {row['error']}")
            torch.cuda.synchronize()
        results.append(row)
        del cl_args, cargs, out, out_jit, out_base, jit_args


def tuning_hints(recs, cargs) -> str:
    from triton_aot import call_hints
    return call_hints.spelling(call_hints.of_call(next(iter(recs.values())), cargs))


def summarize(rows: list) -> dict:
    ok = [r for r in rows if "auto_us" in r]
    out = {}
    groups = [(lib, None) for lib in sorted({r["library"] for r in ok})] + [
        (None, st) for st in ("grid", "random", "reported") if any(r.get("set") == st for r in ok)]
    for lib, shape_set in groups + [(None, None)]:
        sel = [r for r in ok if (lib is None or r["library"] == lib)
               and (shape_set is None or r.get("set", "grid") == shape_set)]
        if not sel:
            continue
        jit = [r["jit_over_auto"] for r in sel]
        out[lib or shape_set or "all"] = {
            "shapes": len(sel),
            "auto_vs_cublas_geomean": geomean([r["cublas_over_auto"] for r in sel]),
            "auto_vs_jit_geomean": geomean(jit),
            "auto_vs_jit_min": min(jit),
            "shapes_below_jit": [r["shape"] for r in sel if r["jit_over_auto"] < 1.0],
            "shapes_below_jit_by_more_than_3pct": [
                r["shape"] for r in sel if r["jit_over_auto"] < 0.97],
            # below 1.0x with the very kernel the autotuner chose: the two times differ by noise
            "below_jit_same_algo": [r["shape"] for r in sel
                                    if r["jit_over_auto"] < 1.0 and r["auto_algo"] == r.get("jit_algo")],
            # below 1.0x with another algo, by less than the rounds' own spread: not resolved
            "below_jit_other_algo_within_noise": [
                r["shape"] for r in sel if r["jit_over_auto"] < 1.0
                and r["auto_algo"] != r.get("jit_algo")
                and 1.0 - r["jit_over_auto"] <= max(r["auto_spread"], r["jit_spread"])],
            # below 1.0x with another algo, by more than the rounds' own spread: a worse choice
            "below_jit_other_algo_beyond_noise": [
                r["shape"] for r in sel if r["jit_over_auto"] < 1.0
                and r["auto_algo"] != r.get("jit_algo")
                and 1.0 - r["jit_over_auto"] > max(r["auto_spread"], r["jit_spread"])],
            "same_choice_as_autotuner": sum(1 for r in sel if r["auto_algo"] == r.get("jit_algo")),
            "all_results_correct": all(r["auto_ok"] and r["jit_ok"] for r in sel),
            "worst_vs_jit": sorted(([r["library"], r["shape"], round(r["jit_over_auto"], 3),
                                     r["auto_algo"], r.get("jit_algo"), r.get("hints")]
                                    for r in sel), key=lambda w: w[2])[:5],
        }
    return out


def markdown(res: dict) -> str:
    env = res["environment"]
    s = res["summary"].get("all", {})
    base = next((r["baseline"] for r in res["rows"] if "baseline" in r), "cuBLAS")
    libs = sorted({r["library"] for r in res["rows"]})
    lines = [f"# Tuned {', '.join(libs)}: NAME_auto vs {base} vs Triton JIT autotune", "",
             f"{env['gpu']} (sm_{env['sm']}), torch {env['torch']}, triton {env['triton']}, "
             f"{env['date']}. Generated by bench/tune/tune_bench.py; times are medians of "
             "CUDA-graph replays (GPU time, host launch cost excluded), the three methods side "
             "by side in one process.", ""]
    if s:
        lines += [f"- speed vs {base}, geometric mean over {s['shapes']} shapes: "
                  f"**{s['auto_vs_cublas_geomean']:.3f}x** (target >= "
                  f"{TARGETS['auto_vs_cublas_geomean_min']})",
                  f"- speed vs the autotuned JIT: geometric mean {s['auto_vs_jit_geomean']:.3f}x, "
                  f"worst shape {s['auto_vs_jit_min']:.3f}x; {len(s['shapes_below_jit'])} "
                  f"shape(s) below 1.0x, {len(s['shapes_below_jit_by_more_than_3pct'])} below "
                  "0.97x",
                  f"- below 1.0x the JIT: {len(s['below_jit_same_algo'])} shape(s) with the same algo "
                  "as the autotuner (the same kernel: the gap is timing noise), "
                  f"{len(s['below_jit_other_algo_within_noise'])} with another algo by less than "
                  "the spread of that shape's timing rounds (not resolved by the measurement), "
                  f"{len(s['below_jit_other_algo_beyond_noise'])} with another algo by more than "
                  "the spread (a worse choice than the autotuner's)",
                  f"- same algo as the autotuner on {s['same_choice_as_autotuner']} of "
                  f"{s['shapes']} shapes; all results correct: {s['all_results_correct']}", ""]
    for lib, v in res["summary"].items():
        if lib != "all":
            lines.append(f"- {lib}: {v['shapes']} shapes, vs {base} "
                         f"{v['auto_vs_cublas_geomean']:.3f}x, vs JIT "
                         f"{v['auto_vs_jit_geomean']:.3f}x (worst {v['auto_vs_jit_min']:.3f}x)")
    rnd = res["summary"].get("random")
    if rnd:
        t = res["targets"]
        lines += ["", f"Targets: on the {rnd['shapes']} random shapes >= "
                  f"{t['random_auto_vs_jit_geomean_min']}x the autotuned JIT's geomean "
                  f"(**{rnd['auto_vs_jit_geomean']:.3f}x**) and no shape below "
                  f"{t['random_auto_vs_jit_min']}x it (worst **{rnd['auto_vs_jit_min']:.3f}x**); "
                  f"on the whole sweep >= {t['auto_vs_cublas_geomean_min']}x {base} "
                  f"(**{s['auto_vs_cublas_geomean']:.3f}x**).", "",
                  "Worst random shapes against the JIT (library, shape, JIT/auto, auto's algo, "
                  "the JIT's algo, the call's hints):", ""]
        lines += [f"- {w}" for w in rnd["worst_vs_jit"]]
    lines += ["", f"| library | set | shape | {base} us | auto us (algo) | JIT us (algo) | "
              f"{base}/auto | JIT/auto | auto TFLOPS |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        shape = "x".join(map(str, r["shape"]))
        if "auto_us" not in r:
            lines.append(f"| {r['library']} | {r.get('set', 'grid')} | {shape} | "
                         f"{r.get('error') or r.get('skipped')} | | | | | |")
            continue
        lines.append(f"| {r['library']} | {r.get('set', 'grid')} | {shape} | {r['cublas_us']:.1f} | {r['auto_us']:.1f} "
                     f"({r['auto_algo']}) | {r['jit_us']:.1f} ({r['jit_algo']}) | "
                     f"{r['cublas_over_auto']:.3f} | {r['jit_over_auto']:.3f} | "
                     f"{r['tflops_auto']:.0f} |")
    lines += ["", "Algos (index: config):", ""]
    for i, info in enumerate(res.get("algos", [])):
        lines.append(f"- {i}: {info}")
    return "\n".join(lines) + "\n"


def chart(res: dict, path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart"
    rows = [r for r in res["rows"] if "auto_us" in r]
    if not rows:
        return "no results to chart"
    fig, ax = plt.subplots(figsize=(max(8, 0.22 * len(rows)), 5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["cublas_over_auto"] for r in rows], 0.4,
           label=f"{rows[0].get('baseline', 'cuBLAS')} time / auto time")
    ax.bar([x + 0.2 for x in xs], [r["jit_over_auto"] for r in rows], 0.4,
           label="autotuned JIT time / auto time")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['dtype'][:4]} {'x'.join(map(str, r['shape']))}" for r in rows],
                       rotation=90, fontsize=6)
    ax.set_ylabel("speed of NAME_auto relative to (>1: auto faster)")
    ax.set_title(f"Tuned matmul on {res['environment']['gpu']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("packs", nargs="*", type=Path)
    ap.add_argument("--render", type=Path, metavar="TUNE_JSON",
                    help="no GPU: rewrite the summary, tune.md and tune.png of an earlier run's "
                         "tune.json into --out")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--stem", default="tune", help="result file names: STEM.json, .md, .png")
    ap.add_argument("--quick", action="store_true", help="a dozen shapes per library")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=14,
                    help="processes that fill the JIT's cache before the timed run (0: none)")
    ap.add_argument("--budget_s", type=float, default=420.0,
                    help="skip the remaining shapes after this many seconds")
    args = ap.parse_args()
    if args.render:
        res = json.loads(args.render.read_text())
        res["summary"] = summarize(res["rows"])
        write_results(res, args.out, args.stem)
        return 0
    if not args.packs:
        ap.error("give the packed libraries (or --render TUNE_JSON)")
    import torch
    import triton

    # The persistent TMA algos make their tensor descriptors on the device, in global scratch
    # that the JIT's launcher asks this allocator for (the library's runtime provides its own).
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                 device="cuda"))
    warm_s = prewarm_jit(args.packs, args.jobs) if args.jobs > 0 else None
    t0 = time.monotonic()
    major, minor = torch.cuda.get_device_capability()
    res = {"format": "rules_triton.tune_bench.v1", "targets": TARGETS, "environment": {
        "gpu": torch.cuda.get_device_name(), "sm": major * 10 + minor, "torch": torch.__version__,
        "triton": triton.__version__, "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, "rows": []}
    for pack in args.packs:
        bench_library(pack, torch, triton, args, res["rows"], t0)
        meta = json.loads((pack / "pack.json").read_text())
        res.setdefault("algos", [a.info for a in tuning.empty_table(
            meta["library"], meta["key"], tuning.records_by_algo(
                (pack / "records").glob("*.json"), meta["library"])).algos])
    res["summary"] = summarize(res["rows"])
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["jit_cache_warmup_seconds"] = warm_s and round(warm_s, 1)
    write_results(res, args.out, args.stem)
    return 0 if all("error" not in r for r in res["rows"]) else 1


def write_results(res: dict, out: Path, stem: str = "tune") -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(res, indent=1) + "\n")
    note = chart(res, out / f"{stem}.png")
    md = markdown(res) + (f"\n({note})\n" if note else f"\n![chart]({stem}.png)\n")
    (out / f"{stem}.md").write_text(md)
    log(f"wrote {out}/{stem}.json, {stem}.md{'' if note else f', {stem}.png'} in "
        f"{res['seconds']} s")
    print(md)


if __name__ == "__main__":
    sys.exit(main())
