#!/usr/bin/env python3
"""Tuning for a new model, measured on the GPU machine (python3 + torch + absl-py, no Bazel):
how long `python3 -m triton_aot.tuning.tune --model_config=...` takes on this host's GPUs, and
what the table it writes gives on that model's layers at batch sizes it was not tuned on.

    python3 bench/tune/model_tune_bench.py .gpu/tune/matmul_tuned .gpu/tune/matmul_tuned_bf16 \\
        --model_config bench/tune/models/gemma-7b.config.json --out bench/results

(`tools/gpu run model_tune` runs it on the bundles `tools/gpu pack tune` packed: every algo in
every pattern, so that each algo runs on the variant of the call's hints, as NAME_auto's choice
does in the library users build.)

Per bundle (one dtype): the tuning command, timed (wall clock, compiles and all), adds the
model's layers at --batch_count batch sizes (--batch) to the bundle's table; then on each layer
at batch sizes drawn log-uniformly from a seed of their own, none a tuned one, every algo
(NAME(..., algo)) and cuBLAS are timed side by side the tune_bench way (CUDA graphs, one launch
count for all, rotating rounds, warm L2). Per shape: the oracle (the fastest algo there, what
the JIT autotuned over the same configs finds), the algo the new table's selection picks
(triton_aot.contract.tuning_table.lookup, bit for bit NAME_auto's C) and the one the committed
table picks (the model unseen). Writes STEM.json and STEM.md.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tune_bench  # noqa: E402

EVAL_SEED = 20261128  # the batch sizes evaluated on: neither the tuning's nor tune_bench's seed
EVAL_M_PER_LAYER = 6


def log(msg: str) -> None:
    print(f"model_tune_bench: {msg}", file=sys.stderr, flush=True)


def eval_batches(rng, tuned: set[int], high: int) -> list[int]:
    out: list[int] = []
    while len(out) < EVAL_M_PER_LAYER:
        m = tune_bench.log_uniform(rng, high)
        if m not in tuned and m not in out:
            out.append(m)
    return sorted(out)


def tune_model(pack: Path, args, out: Path) -> float:
    """Runs the tuning command for the model into `out`; its wall time in seconds."""
    cmd = [sys.executable, "-m", "triton_aot.tuning.tune", str(pack), f"--out={out}",
           f"--model_config={args.model_config}", f"--batch={args.batch}",
           f"--batch_count={args.batch_count}", f"--gpus={args.gpus}"]
    log(" ".join(cmd))
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, cwd=REPO)
    return time.monotonic() - t0


def bench_pack(pack: Path, args, torch, res: dict) -> None:
    from triton_aot.contract import hint_patterns
    from triton_aot.contract import tuning_table as tuning
    from triton_aot.tuning import model_shapes, tune

    p = tune.open_pack(pack)
    with tempfile.TemporaryDirectory() as tmp:
        new_path = Path(tmp) / "table.json"
        seconds = tune_model(pack, args, new_path)
        new = tuning.read_table(new_path)
    old = tuning.read_table(pack / "table.json")
    layers = model_shapes.layers_of_config(json.loads(Path(args.model_config).read_text()))
    ms = model_shapes.batch_sizes(args.batch, args.batch_count)
    tuned_calls = len(model_shapes.model_calls(layers, ms))
    res["tuning"].append({"library": p.name, "seconds": seconds, "calls": tuned_calls,
                          "gpus": args.gpus, "layers": [[l.name, l.n, l.k] for l in layers],
                          "batch_sizes": ms})
    log(f"{p.name}: tuned {tuned_calls} calls in {seconds:.0f} s")
    dtype = p.dtype(torch)
    major, minor = torch.cuda.get_device_capability()
    sm = major * 10 + minor
    ref = next(iter(p.records.values()))
    grids = p.grids  # as the link tool reads them: the waves of SM-bound algos
    default = p.description.tuning.default_algo
    rng = random.Random(f"{EVAL_SEED}/{p.name}")
    stream = torch.cuda.current_stream().cuda_stream
    for layer in layers:
        high = model_shapes.LM_HEAD_MAX_M if layer.name == "lm_head" else 8192
        for m in eval_batches(rng, set(ms), high):
            shape = (m, layer.n, layer.k)
            args_ = tune_bench.make_args(p.inputs, torch, dtype, shape, "nt")
            cargs = tune.c_values(args_)
            hints = hint_patterns.spelling(hint_patterns.of_call(ref, cargs))
            pick_new = tuning.lookup(new, sm, shape, default, hints, grids)
            pick_old = tuning.lookup(old, sm, shape, default, hints, grids)
            methods = {}
            for a in range(p.lib.num_algos):
                if p.lib.fn(stream, *cargs, a) == 0:
                    methods[f"algo{a}"] = (lambda st, a=a: p.lib.fn(st, *cargs, a))
            # the retuned pick once more, as a method of its own: two sides running the
            # identical kernel, whose agreement the report prints
            if f"algo{pick_new}" in methods:
                methods["repeat"] = methods[f"algo{pick_new}"]
            a_, b_ = args_[0], args_[1]
            out = torch.empty_like(args_[2])
            methods["cublas"] = lambda st=None: torch.matmul(a_, b_, out=out)
            torch.cuda.synchronize()
            batch, per, _ = tune_bench.time_methods(torch, methods, args.reps, args.rounds,
                                                    args.busy)
            t = {k: statistics.median(v) for k, v in per.items()}
            algos = {int(k[4:]): v for k, v in t.items() if k.startswith("algo")}
            repeat = t.get("repeat")
            oracle = min(algos.values())
            row = {"library": p.name, "layer": layer.name, "shape": list(shape),
                   "hints": hints, "batch": batch, "cublas_us": t["cublas"],
                   "oracle_us": oracle, "oracle_algo": min(algos, key=algos.get),
                   "new_algo": pick_new, "new_us": algos.get(pick_new),
                   "old_algo": pick_old, "old_us": algos.get(pick_old),
                   "repeat_disagreement": abs(repeat / algos[pick_new] - 1) if repeat else None}
            for k in ("new", "old"):
                row[f"{k}_vs_oracle"] = oracle / row[f"{k}_us"] if row[f"{k}_us"] else 0.0
                row[f"{k}_vs_cublas"] = t["cublas"] / row[f"{k}_us"] if row[f"{k}_us"] else 0.0
            log(f"{p.name} {layer.name} {'x'.join(map(str, shape))}: oracle {oracle:.1f} us "
                f"(algo {row['oracle_algo']}), retuned {row['new_us']:.1f} (algo {pick_new}), "
                f"before {row['old_us']:.1f} (algo {pick_old}), cuBLAS {t['cublas']:.1f}")
            res["rows"].append(row)
            del args_, cargs, out


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for lib in sorted({r["library"] for r in rows}):
        for band, lo, hi in (("all", 0, math.inf),) + tuple(
                (n, lo, hi) for n, lo, hi in tune_bench.TIME_STRATA):
            sel = [r for r in rows if r["library"] == lib and lo <= r["cublas_us"] < hi]
            if not sel:
                continue
            s = {"library": lib, "cublas_time": band, "shapes": len(sel)}
            for k in ("new_vs_oracle", "old_vs_oracle", "new_vs_cublas", "old_vs_cublas"):
                vals = [r[k] for r in sel]
                s[k] = {"geomean": tune_bench.geomean(vals), "worst": min(vals)}
            s["new_below_0.85_oracle"] = sum(r["new_vs_oracle"] < 0.85 for r in sel)
            out.append(s)
    return out


SAME_KERNEL_LIMIT = 0.02  # median disagreement of the retuned pick timed twice


def same_kernel_check(rows: list[dict]) -> dict:
    """The retuned pick timed as two methods in the same run: their median disagreement."""
    d = sorted(r["repeat_disagreement"] for r in rows if r.get("repeat_disagreement") is not None)
    if not d:
        return {"pairs": 0, "valid": False}
    return {"pairs": len(d), "median": statistics.median(d), "max": d[-1],
            "valid": statistics.median(d) <= SAME_KERNEL_LIMIT}


def markdown(res: dict) -> str:
    env = res["environment"]
    lines = ["# Tuning a new model: wall time, and the table it gives at untuned batch sizes", "",
             f"{env['gpu']}, torch {env['torch']}, {env['date']}. Generated by "
             "bench/tune/model_tune_bench.py (`tools/gpu run model_tune`).", "",
             "| library | calls tuned | GPUs | wall time |", "|---|---|---|---|"]
    for t in res["tuning"]:
        lines.append(f"| {t['library']} | {t['calls']} | {t['gpus']} | {t['seconds']:.0f} s |")
    lines += ["", "Ratios on the model's layers at batch sizes not tuned on: oracle (fastest "
              "algo there) time / chosen algo's time, and cuBLAS time / chosen algo's time; "
              "*retuned*: the table with the model, *before*: the committed table (the model "
              "unseen). Geomean (worst).", "",
              "| library | cuBLAS time | shapes | retuned vs oracle | before vs oracle | "
              "retuned vs cuBLAS | before vs cuBLAS | retuned < 0.85 oracle |",
              "|---|---|---|---|---|---|---|---|"]
    for s in res["summary"]:
        c = [f"{s[k]['geomean']:.3f} ({s[k]['worst']:.3f})" for k in
             ("new_vs_oracle", "old_vs_oracle", "new_vs_cublas", "old_vs_cublas")]
        lines.append(f"| {s['library']} | {s['cublas_time']} | {s['shapes']} | "
                     + " | ".join(c) + f" | {s['new_below_0.85_oracle']} |")
    same = res.get("same_kernel")
    if same:
        lines += ["", "Sanity check, every method timed the same way in one run (one launch "
                  "count, one CUDA graph each, rotating rounds): the retuned pick timed twice, "
                  + (f"{same['pairs']} pairs, disagreement median {same['median']:.2%}, max "
                     f"{same['max']:.2%}: {'PASS' if same['valid'] else 'FAIL'} (median <= "
                     f"{SAME_KERNEL_LIMIT:.0%})" if same["pairs"] else "no pairs: FAIL")]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("packs", nargs="+", type=Path)
    ap.add_argument("--model_config", default=str(REPO / "bench/tune/models/gemma-7b.config.json"))
    ap.add_argument("--batch", default="1:8192")
    ap.add_argument("--batch_count", type=int, default=20)
    ap.add_argument("--gpus", default="all")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--stem", default="model_tune")
    args = ap.parse_args()
    import torch
    args.busy = tune_bench.busy_cycles_for(torch, tune_bench.BUSY_WAIT_US)
    res = {"format": "rules_triton.model_tune_bench.v1", "model_config": args.model_config,
           "environment": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                           "gpus_visible": torch.cuda.device_count(),
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
           "tuning": [], "rows": []}
    t0 = time.monotonic()
    for pack in args.packs:
        bench_pack(pack, args, torch, res)
    res["seconds"] = time.monotonic() - t0
    res["summary"] = summary(res["rows"])
    res["same_kernel"] = same_kernel_check(res["rows"])
    md = markdown(res)
    print(md)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.stem}.json").write_text(json.dumps(res, indent=1) + "\n")
        (args.out / f"{args.stem}.md").write_text(md)
    return 0 if res["same_kernel"]["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
