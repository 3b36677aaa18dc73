#!/usr/bin/env python3
"""Headroom against cuBLAS on torch.nn.Linear's layout: the best time any config reaches on each
shape (an oracle: every config timed on the shape itself), for the tuned library's own 28 configs
and for kernels built with the rest of what Triton has on Hopper. On the GPU machine (python3 +
torch + triton, no Bazel), from the repository root:

    python3 bench/tune/headroom.py --out DIR            # fp16 and bf16, 24 shapes each
    python3 bench/tune/headroom.py --dry-run            # no GPU: the shapes and the configs

It answers whether a better choice among configs could reach the tuned benchmark's cuBLAS targets
(bench/tune/tune_bench.py): if the best of every config on the very shape stays below, no
tuning table, portfolio or selection model can.

Methods per shape (C = A @ W.t(), A [M, K] and W [N, K] row-major, C [M, N]), all through
Triton's JIT with the configs fixed (no autotuner):
  cublas     torch.matmul(a, w.t(), out=c)
  lib:I      the tuned library's algo I (examples/kernels/matmul_tuned.py with the config its
             tuning table lists: tile, split-K, persistent TMA)
  tma:...    bench/tune/headroom_kernels.py mm_tma: TMA loads and stores for every operand, one
             program per unit or persistent, split-K 1/2/4 with TMA reduce-add, warp
             specialisation on the persistent loop
  sk:...     mm_stream_k: stream-K over NUM_SMS or 2 x NUM_SMS programs
Configs that need C zeroed get the library's memset (cuMemsetD2D16Async, a memset node in the
graph) on both sides of any comparison.

Timing: bench/tune/tune_bench.py's time_methods for every method of a shape (one launch count
for all, one CUDA graph each, rounds in rotating order, each replay behind a GPU busy-wait; L2
warm). Sanity check: one library algo is timed twice as two methods (the identical kernel in two
graphs); the median disagreement over shapes must be <= 2%. Shapes: the LLM layers of
tune_bench.py with M log-uniform in 1..8192, from a seed of their own, none a tuning point.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import tune_bench  # noqa: E402  (this folder's benchmark: shapes, timing, memset)

KERNELS = REPO / "examples" / "kernels"
SEED = f"headroom/{tune_bench.EVAL_SEED}"
SANITY_ALGO = 2  # 128x128x32, 4 warps: timed twice
TILES = [(64, 64, 128, 4, 4), (64, 128, 64, 4, 4), (64, 128, 128, 4, 3), (64, 256, 64, 8, 3),
         (128, 64, 64, 4, 4), (128, 128, 64, 4, 4), (128, 128, 64, 8, 4), (128, 128, 128, 8, 3),
         (128, 256, 64, 8, 3), (64, 64, 64, 4, 6)]


def log(msg: str) -> None:
    print(f"headroom: {msg}", file=sys.stderr, flush=True)


def library_configs(dtype: str) -> dict[str, dict]:
    """The tuned library's algos, from its committed tuning table's algo list."""
    name = "matmul_tuned" if dtype == "fp16" else "matmul_tuned_bf16"
    table = json.loads((KERNELS / f"{name}.tuning.json").read_text())
    out = {}
    for algo in table["algos"]:
        # "BLOCK_M=128 ... num_stages=4 [reset_to_zero=c_ptr[M, N, ...]]"
        kv = dict(item.split("=", 1) for item in algo["info"].split(" reset_to_zero=")[0].split())
        out[f"lib:{algo['index']}"] = {
            "kernel": "lib", "BLOCK_M": int(kv["BLOCK_M"]), "BLOCK_N": int(kv["BLOCK_N"]),
            "BLOCK_K": int(kv["BLOCK_K"]), "SPLIT_K": int(kv["SPLIT_K"]),
            "PERSISTENT": kv["PERSISTENT"] == "True", "TMA": kv["TMA"] == "True",
            "num_warps": int(kv["num_warps"]), "num_stages": int(kv["num_stages"])}
    return out


def extra_configs() -> dict[str, dict]:
    out = {}
    for bm, bn, bk, warps, stages in TILES:
        tile = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
        base = f"{bm}x{bn}x{bk}w{warps}s{stages}"
        for split in (1, 2, 4):
            for persistent, ws in ((False, False), (True, False), (True, True)):
                mode = "ws" if ws else "persistent" if persistent else "grid"
                out[f"tma:{base}/k{split}/{mode}"] = dict(
                    tile, kernel="tma", SPLIT_K=split, PERSISTENT=persistent, WS=ws)
        for per_sm in (1, 2):
            out[f"sk:{base}/x{per_sm}"] = dict(tile, kernel="sk", PER_SM=per_sm)
    return out


def draw_shapes(count: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location("matmul_tuning", KERNELS / "matmul_tuning.py")
    inputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inputs)
    tuned = tune_bench.tuning_points(inputs)
    rng = random.Random(SEED)
    layers = rng.sample(tune_bench.LLM_LAYERS, len(tune_bench.LLM_LAYERS))
    shapes, seen = [], set()
    for i in range(count):
        model, layer, n, k = layers[i % len(layers)]
        while True:
            shape = (tune_bench.log_uniform(rng, 8192), n, k)
            if shape not in tuned and shape not in seen:
                break
        seen.add(shape)
        shapes.append({"shape": shape, "label": f"{model} {layer}"})
    return shapes


def needs_zero(cfg: dict) -> bool:
    return cfg["kernel"] == "sk" or cfg.get("SPLIT_K", 1) > 1


def launcher(torch, triton, kernels, cfg: dict, a, w, c, num_sms: int):
    """A launch(stream) of one config on one shape (C zeroed first where the config adds)."""
    M, K = a.shape
    N = w.shape[0]
    tiles = triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"])
    meta = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
                GROUP_M=8, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    zero = needs_zero(cfg)
    if cfg["kernel"] == "lib":
        b = w.t()
        if cfg["PERSISTENT"]:
            meta.update(PERSISTENT=True, TMA=cfg["TMA"])
            grid = (min(num_sms, tiles),)
        else:
            meta.update(SPLIT_K=cfg["SPLIT_K"])
            grid = (tiles, cfg["SPLIT_K"])
        args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1))
        fn = kernels["lib"]
    elif cfg["kernel"] == "tma":
        units = tiles * cfg["SPLIT_K"]
        grid = (min(num_sms, units),) if cfg["PERSISTENT"] else (units,)
        meta.update(SPLIT_K=cfg["SPLIT_K"], WS=cfg["WS"], FLAT=cfg["PERSISTENT"] and not cfg["WS"])
        args = (a, w, c, M, N, K, a.stride(0), w.stride(0), c.stride(0))
        fn = kernels["tma"]
    else:
        grid = (num_sms * cfg["PER_SM"],)
        args = (a, w, c, M, N, K, a.stride(0), w.stride(0), c.stride(0))
        fn = kernels["sk"]

    def launch(stream=None):
        if zero:
            tune_bench.memset_like_library(torch, c)
        fn[grid](*args, **meta)
    return launch


def load_kernels():
    import headroom_kernels
    spec = importlib.util.spec_from_file_location("matmul_tuned", KERNELS / "matmul_tuned.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {"lib": mod.matmul_tuned_kernel, "tma": headroom_kernels.mm_tma,
            "sk": headroom_kernels.mm_stream_k}


def setup():
    import torch
    import triton
    tune_bench.use_torch_scratch(torch, triton)
    return torch, triton


def operands(torch, dtype: str, shape):
    M, N, K = shape
    t = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    a = torch.randn((M, K), device="cuda", dtype=t) / K ** 0.5
    w = torch.randn((N, K), device="cuda", dtype=t)
    return a, w, torch.empty((M, N), device="cuda", dtype=t)


def _compile_one(task) -> tuple[str, str | None]:
    """Runs one config on every shape in a worker process: fills Triton's cache, so the timing
    process only loads. Returns the config's name and its first error (None: it runs)."""
    dtype, name, cfg, shapes = task
    torch, triton = setup()
    kernels = load_kernels()
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    for shape in shapes:
        a, w, c = operands(torch, dtype, shape)
        try:
            launcher(torch, triton, kernels, cfg, a, w, c, num_sms)()
        except Exception as e:  # noqa: BLE001 (a config Triton refuses is left out, reported)
            return name, f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    torch.cuda.synchronize()
    return name, None


def run_dtype(dtype: str, shapes: list[dict], args, torch, triton) -> dict:
    configs = {**library_configs(dtype), **extra_configs()}
    t0 = time.time()
    import multiprocessing
    tasks = [(dtype, n, c, [e["shape"] for e in shapes]) for n, c in configs.items()]
    refused = {}
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
        for name, err in ex.map(_compile_one, tasks):
            if err:
                refused[name] = err
    log(f"{dtype}: {len(configs)} configs compiled in {time.time() - t0:.0f} s, "
        f"{len(refused)} refused by Triton")
    kernels = load_kernels()
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    busy = tune_bench.busy_cycles_for(torch, tune_bench.BUSY_WAIT_US)
    rows = []
    for entry in shapes:
        shape = entry["shape"]
        a, w, c = operands(torch, dtype, shape)
        ref = (a.float() @ w.float().t())
        scale = ref.abs().max().item() + 1e-6
        methods = {"cublas": lambda stream=None: torch.matmul(a, w.t(), out=c)}
        wrong = []
        for name, cfg in configs.items():
            if name in refused:
                continue
            launch = launcher(torch, triton, kernels, cfg, a, w, c, num_sms)
            launch()
            torch.cuda.synchronize()
            if (c.float() - ref).abs().max().item() / scale > 2e-2:
                wrong.append(name)
                continue
            methods[name] = launch
        sanity = f"lib:{SANITY_ALGO}"
        methods[sanity + "#again"] = launcher(torch, triton, kernels, configs[sanity], a, w, c,
                                              num_sms)
        batch, per, uncaptured = tune_bench.time_methods(torch, methods, args.reps, args.rounds,
                                                         busy)
        us = {m: statistics.median(v) for m, v in per.items()}
        lib = min((v, m) for m, v in us.items() if m.startswith("lib:") and "#" not in m)
        extra = min((v, m) for m, v in us.items() if m.startswith(("tma:", "sk:")))
        row = {"shape": list(shape), "label": entry["label"], "batch": batch,
               "cublas_us": us["cublas"], "lib_best_us": lib[0], "lib_best": lib[1],
               "extra_best_us": extra[0], "extra_best": extra[1],
               "best_us": min(lib[0], extra[0]),
               "sanity": [us[sanity], us[sanity + "#again"]], "wrong": wrong,
               "uncaptured": uncaptured, "times_us": us}
        rows.append(row)
        log(f"{dtype} {'x'.join(map(str, shape))} ({entry['label']}): cuBLAS {us['cublas']:.1f} us, "
            f"library best {lib[0]:.1f} ({lib[1]}), beyond {extra[0]:.1f} ({extra[1]}): "
            f"cuBLAS/best {us['cublas'] / row['best_us']:.3f}")
    return {"configs": len(configs), "refused": refused, "rows": rows}


def summarize(res: dict) -> dict:
    out = {}
    for dtype, d in res["dtypes"].items():
        rows = d["rows"]
        dis = [abs(r["sanity"][0] / r["sanity"][1] - 1.0) for r in rows]
        strata = {}
        for name, lo, hi in tune_bench.TIME_STRATA + (("all", 0.0, math.inf),):
            sel = [r for r in rows if lo <= r["cublas_us"] < hi]
            if not sel:
                continue
            stat = {"shapes": len(sel)}
            for side in ("lib_best", "extra_best", "best"):
                ratios = [r["cublas_us"] / r[side + "_us"] for r in sel]
                worst = min(range(len(sel)), key=lambda i: ratios[i])
                stat[side] = {"geomean": tune_bench.geomean(ratios), "worst": ratios[worst],
                              "worst_shape": sel[worst]["shape"]}
            strata[name] = stat
        out[dtype] = {"strata": strata, "sanity_median": statistics.median(dis),
                      "sanity_max": max(dis), "sanity_pass": statistics.median(dis) <= 0.02}
    return out


def render(res: dict) -> str:
    s = res["summary"]
    lines = [
        "# Headroom against cuBLAS on torch.nn.Linear's layout",
        "",
        f"{res['device']}, torch {res['torch']}, triton {res['triton']}, {res['date']}. "
        f"Generated by bench/tune/headroom.py in {res['seconds']:.0f} s.",
        "",
        "Each shape's best time over every config timed on that very shape (an oracle no tuning "
        "table can beat), against cuBLAS; ratios are cuBLAS time / best time (> 1: Triton "
        "faster). *library*: the tuned library's 28 configs; *beyond*: TMA for every operand "
        "(one program per unit or persistent, split-K 1/2/4 with TMA reduce-add, warp "
        "specialisation) and stream-K (bench/tune/headroom_kernels.py); *best*: either. Timing "
        "as in tune.md (one launch count per shape for every method, CUDA graphs, rotating "
        "rounds, L2 warm). Shapes: LLM layers in the Linear layout, M log-uniform in 1..8192, "
        "none a tuning point.",
        "",
    ]
    for dtype, d in res["dtypes"].items():
        sd = s[dtype]
        lines += [f"## {dtype}", "",
                  f"- configs: {d['configs']}, refused by Triton 3.6 on sm_90: {len(d['refused'])}"
                  + (f" (e.g. {sorted(d['refused'])[0]}: {d['refused'][sorted(d['refused'])[0]]})"
                     if d["refused"] else ""),
                  f"- sanity (library algo {SANITY_ALGO} timed twice): disagreement median "
                  f"{100 * sd['sanity_median']:.2f}%, max {100 * sd['sanity_max']:.2f}%: "
                  f"{'PASS' if sd['sanity_pass'] else 'FAIL'}",
                  "",
                  "| cuBLAS time | shapes | library best (worst) | beyond (worst) | best of all (worst) |",
                  "|---|---|---|---|---|"]
        for name, st in sd["strata"].items():
            cells = [f"{st[k]['geomean']:.3f}x ({st[k]['worst']:.3f}x, "
                     f"{'x'.join(map(str, st[k]['worst_shape']))})"
                     for k in ("lib_best", "extra_best", "best")]
            lines.append(f"| {name} | {st['shapes']} | " + " | ".join(cells) + " |")
        lines += ["", "| shape | layer | cuBLAS us | library best us (config) | beyond us (config) | cuBLAS/best |",
                  "|---|---|---|---|---|---|"]
        for r in d["rows"]:
            lines.append(
                f"| {'x'.join(map(str, r['shape']))} | {r['label']} | {r['cublas_us']:.1f} | "
                f"{r['lib_best_us']:.1f} ({r['lib_best']}) | {r['extra_best_us']:.1f} "
                f"({r['extra_best']}) | {r['cublas_us'] / r['best_us']:.3f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="folder for headroom.json and headroom.md")
    p.add_argument("--dtypes", default="fp16,bf16")
    p.add_argument("--shapes", type=int, default=24)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--jobs", type=int, default=14, help="processes compiling configs")
    p.add_argument("--dry-run", action="store_true", help="print the shapes and configs, no GPU")
    args = p.parse_args()
    shapes = draw_shapes(args.shapes)
    dtypes = args.dtypes.split(",")
    if args.dry_run:
        print(json.dumps({"shapes": shapes, "configs": {d: sorted({**library_configs(d),
                                                                   **extra_configs()})
                                                        for d in dtypes}}, indent=1))
        return 0
    if args.out is None:
        p.error("--out is required (the folder for headroom.json and headroom.md)")
    t0 = time.time()
    torch, triton = setup()
    res = {"format": "rules_triton.headroom.v1", "device": torch.cuda.get_device_name(),
           "torch": torch.__version__, "triton": triton.__version__,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "host": platform.node(), "dtypes": {}}
    for dtype in dtypes:
        res["dtypes"][dtype] = run_dtype(dtype, shapes, args, torch, triton)
    res["seconds"] = time.time() - t0
    res["summary"] = summarize(res)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "headroom.json").write_text(json.dumps(res, indent=1) + "\n")
    (args.out / "headroom.md").write_text(render(res))
    print(render(res))
    return 0 if all(v["sanity_pass"] for v in res["summary"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
