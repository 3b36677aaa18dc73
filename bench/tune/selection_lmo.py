#!/usr/bin/env python3
"""How NAME_auto's selection does on models its table never saw, without a GPU: leave models out.

Two sources of per-config timings, both committed:

  tables     the tuning tables (examples/kernels/matmul_tuned*.tuning.json): every algo timed at
             every point. The Linear-layout points are the layers of the open models below; each
             model in turn is held out, every point whose (N, K) is one of its layers is removed
             (any layout, so a layer another model shares is unseen too), the portfolios are
             chosen again from what is left, and each held-out point is chosen for from the rest.
  headroom   bench/results/headroom.json: the library's 28 configs and cuBLAS timed on 24 fresh
             LLM layers (bench/tune/headroom.py); those whose (N, K) no tuning point has are
             chosen for from the whole table.
  heldout    bench/results/tune_heldout.json: the layers of 8 models no table has, in both
             layouts, every config timed through the JIT on the GPU beside NAME_auto
             (tune_bench.py --held_out); chosen for from the whole table, so the selection in
             use is scored on the GPU's own per-config times, whatever portfolios that run had.
  fresh      bench/results/tune_fresh.json: the same on a second set of models
             (`--held_out_layers=fresh`), which no choice of the selection looked at
             until the waves (tuning_table.Waves), whose form was chosen scoring it too.

Each choice costs the held-out shape's time of the chosen algo over its best of all algos (the
oracle; the JIT's autotuner, which times every config on each new shape and keeps the fastest,
approximates it on the same data). Reported per stratum (layout, the oracle's time band, dtype)
as the geometric mean and the worst of oracle time / chosen time, for the selection in use and
the one before it (4 neighbours over the key logs and their products), and the portfolio
ceiling: the best algo of the call class's portfolio, which no selection limited to the
portfolios (what the build compiles) can beat. The gap between a selection and the ceiling is
the vote's; the gap between the ceiling and 1.0 is the portfolios'.

    python3 bench/tune/selection_lmo.py [--out bench/results]   # writes selection_lmo.{json,md}
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from triton_aot.contract import hint_patterns  # noqa: E402
from triton_aot.contract import tuning_table as tuning  # noqa: E402

TABLES = {"fp16": REPO / "examples/kernels/matmul_tuned.tuning.json",
          "bf16": REPO / "examples/kernels/matmul_tuned_bf16.tuning.json"}
HEADROOM = REPO / "bench/results/headroom.json"
HELDOUT = REPO / "bench/results/tune_heldout.json"
FRESH = REPO / "bench/results/tune_fresh.json"
HELDOUT_LIBRARIES = {"matmul_tuned": "fp16", "matmul_tuned_bf16": "bf16"}
CEILING = "portfolio ceiling (best of the class's portfolio in use)"

# The Linear layers of examples/kernels/matmul_tuning.py's LINEAR_NK, by model: (N, K) pairs.
TABLE_MODELS = {
    "Llama-2-7B": [(4096, 4096), (11008, 4096), (4096, 11008), (32000, 4096)],
    "Llama-3-8B": [(4096, 4096), (1024, 4096), (6144, 4096), (14336, 4096), (28672, 4096),
                   (4096, 14336), (128256, 4096)],
    "Llama-2/3-70B": [(8192, 8192), (1024, 8192), (10240, 8192), (28672, 8192), (8192, 28672)],
    "Qwen2.5-7B": [(3584, 3584), (512, 3584), (4608, 3584), (18944, 3584), (3584, 18944),
                   (152064, 3584)],
    "Qwen2.5-1.5B": [(1536, 1536), (256, 1536), (8960, 1536), (1536, 8960)],
    "Phi-3-mini": [(3072, 3072), (9216, 3072), (16384, 3072), (3072, 8192), (8192, 3072)],
    "Llama-3.2-3B": [(3072, 3072), (5120, 3072), (8192, 3072), (3072, 8192)],
    "Gemma-2-9B": [(3584, 4096), (4096, 3584), (14336, 3584), (3584, 14336)],
    "MoE experts": [(2816, 2048), (2048, 1408), (1408, 2048), (14336, 4096), (4096, 14336)],
}
BANDS = ((0.0, 10.0, "<10us"), (10.0, 100.0, "10-100us"), (100.0, math.inf, ">100us"))
NT_ARGS = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk",
           "stride_bn", "stride_cm", "stride_cn")


_INFO_VALUE = re.compile(r"(\w+)=(\S+)")


def example_grids(table: tuning.Table) -> list:
    """Each algo's launch grid as examples/kernels/kernels.bzl's matmul_tuned_algo writes it (the
    link tool reads it from the variant records, which this bench has not): a persistent algo
    launches min(NUM_SMS, cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)) programs, the others one per tile
    (and split)."""
    grids = []
    for a in table.algos:
        info = dict(_INFO_VALUE.findall(a.info))
        tiles = f"cdiv(M, {info['BLOCK_M']}) * cdiv(N, {info['BLOCK_N']})"
        grids.append((f"min(NUM_SMS, {tiles})", "1", "1") if info.get("PERSISTENT") == "True"
                     else (tiles, info.get("SPLIT_K", "1"), "1"))
    return grids


@dataclass(frozen=True)
class Selection:
    name: str
    model: tuning.SelectionModel
    # None: the portfolios in use; "all": every algo allowed (what the vote alone keeps)
    portfolio: str | None = None
    waves: bool = True  # the SM-bound algos' wave correction (tuning_table.Waves)

    def choose(self, table: tuning.Table, dev: tuning.Device, key, cls: int) -> int:
        rows = tuning.rows_of(table, dev, self.model)
        allowed = None if self.portfolio == "all" else tuning.class_algos(table, dev)[cls + 1]
        waves = (tuning.waves_of(table, dev, example_grids(table))
                 if self.waves and self.model.gemm else None)
        return tuning.choose(rows, tuning.query_features(self.model, key), cls, 0, self.model,
                             allowed=allowed,
                             class_dist=tuning.class_distances(table, self.model),
                             waves=waves, leads=tuple(tuning.lead9(v) for v in key))


NEW = Selection("in use (GEMM tile features and waves)", tuning.GEMM)
NO_WAVES = Selection("GEMM tile features without waves", tuning.GEMM, waves=False)
FORMER = Selection("before (key logs and their products, 4 neighbours)", tuning.KEY_LOGS)
ALL = Selection("in use, every algo allowed", tuning.GEMM, "all")


def nt_hints(m: int, n: int, k: int) -> str:
    """The JIT's hint pattern of a torch.nn.Linear call (B = W.t(), W row-major [N, K]) on
    16-byte aligned tensors: matmul_tuning.make_args(layout="nt")."""
    values = (16, 16, 16, m, n, k, k, 1, 1, k, n, 1)
    return " ".join(f"{a}:{hint_patterns.int_hint(v) if i >= 3 else 16}"
                    for i, (a, v) in enumerate(zip(NT_ARGS, values))
                    if i < 3 or hint_patterns.int_hint(v))


def _times(p: tuning.Point) -> list[float]:
    return [t if isinstance(t, float) else math.inf for t in p.times_us]


def _scored(row: dict, times: list[float], table, dev, q, cls: int, selections) -> dict:
    """`row` with oracle time / chosen time for each selection, and the portfolio ceiling."""
    best = min(times)
    for s in selections:
        row[s.name] = best / times[s.choose(table, dev, q, cls)]
    row[CEILING] = best / min(times[a] for a in tuning.class_algos(table, dev)[cls + 1])
    return row


def table_cases(dtype: str, selections) -> list[dict]:
    table = tuning.read_table(TABLES[dtype])
    out = []
    for model, pairs in TABLE_MODELS.items():
        pairs = set(pairs)
        for dev in table.devices:
            keep = tuple(p for p in dev.points if (p.key[1], p.key[2]) not in pairs)
            held = [p for p in dev.points if (p.key[1], p.key[2]) in pairs
                    and p.winner is not None and p.hints is not None]
            train = tuning.Table(table.library, table.key, table.algos,
                                 (tuning.Device(dev.name, dev.sm, dev.source, keep,
                                               dev.num_sms),))
            tdev = train.devices[0]
            for p in held:
                times = _times(p)
                layout = "nt" if "stride_bk:1" in p.hints.split() else "nn"
                cls = tuning.class_of(train, p.hints)
                q = p.key
                row = {"source": "tables", "dtype": dtype, "model": model, "layout": layout,
                       "shape": list(p.key), "oracle_us": min(times)}
                out.append(_scored(row, times, train, tdev, q, cls, selections))
    return out


def read_results(stem: Path) -> dict | None:
    """A committed run's raw data, STEM.json or STEM.json.gz (bench/results_store.py)."""
    for path, opener in ((stem, open), (stem.with_suffix(".json.gz"), gzip.open)):
        if path.exists():
            with opener(path, "rt", encoding="utf-8") as f:
                return json.load(f)
    return None


def headroom_cases(dtype: str, selections) -> list[dict]:
    results = read_results(HEADROOM)
    if results is None:
        return []
    table = tuning.read_table(TABLES[dtype])
    dev = table.devices[0]
    seen = {(p.key[1], p.key[2]) for p in dev.points}
    data = results["dtypes"][dtype]
    out = []
    for r in data["rows"]:
        m, n, k = r["shape"]
        if (n, k) in seen:
            continue
        t = r["times_us"]
        times = [t.get(f"lib:{a}", math.inf) or math.inf for a in range(len(table.algos))]
        cls = tuning.class_of(table, nt_hints(m, n, k))
        q = (m, n, k)
        row = {"source": "headroom", "dtype": dtype, "model": r["label"], "layout": "nt",
               "shape": [m, n, k], "oracle_us": min(times), "cublas_us": t.get("cublas")}
        out.append(_scored(row, times, table, dev, q, cls, selections))
    return out


def heldout_cases(dtype: str, selections, stem: Path = HELDOUT, source: str = "heldout"
                  ) -> list[dict]:
    """The GPU's held-out layers (tune_bench.py --held_out): the selection in use re-scored on
    each shape's per-config JIT times, on the call's own hint pattern."""
    results = read_results(stem)
    if results is None:
        return []
    table = tuning.read_table(TABLES[dtype])
    dev = table.devices[0]
    out = []
    for r in results["rows"]:
        if HELDOUT_LIBRARIES.get(r["library"]) != dtype or "config_us" not in r:
            continue
        times = [r["config_us"].get(str(a), math.inf) for a in range(len(table.algos))]
        cls = tuning.class_of(table, r["hints"])
        q = tuple(r["shape"])
        row = {"source": source, "dtype": dtype, "model": r["label"], "layout": r["layout"],
               "shape": list(r["shape"]), "oracle_us": min(times),
               "measured auto": min(times) / r["auto_us"]}
        out.append(_scored(row, times, table, dev, q, cls, selections))
    return out


def geomean(xs):
    return math.exp(sum(math.log(max(x, 1e-3)) for x in xs) / len(xs)) if xs else None


def strata(rows):
    """(stratum name, rows) pairs: per source, dtype and layout, then by the oracle's time."""
    groups = {}
    for r in rows:
        band = next(b for lo, hi, b in BANDS if lo <= r["oracle_us"] < hi)
        for g in ((r["source"], r["dtype"], r["layout"], "all"),
                  (r["source"], r["dtype"], r["layout"], band),
                  (r["source"], "both", r["layout"], "all")):
            groups.setdefault(g, []).append(r)
    return sorted(groups.items())


def summarise(rows, metrics) -> list[dict]:
    out = []
    for (source, dtype, layout, band), rs in strata(rows):
        s = {"source": source, "dtype": dtype, "layout": layout, "band": band, "shapes": len(rs)}
        for name in metrics:
            have = [r for r in rs if name in r]
            if not have:
                continue
            ks = [r[name] for r in have]
            worst = min(have, key=lambda r: r[name])
            s[name] = {"geomean": geomean(ks), "worst": min(ks),
                       "worst_shape": "x".join(map(str, worst["shape"])),
                       "below_0.85": sum(k < 0.85 for k in ks)}
        out.append(s)
    return out


def markdown(summary, metrics) -> str:
    lines = ["# NAME_auto on models the table never saw (leave models out, no GPU)", "",
             "Generated by `python3 bench/tune/selection_lmo.py --out bench/results` from the "
             "committed per-config timings (module docstring). *tables*: each model of the "
             "tuning tables held out in turn (its layers' points removed in every layout, the "
             "portfolios chosen again without them); *headroom*: the fresh LLM layers of "
             "bench/results/headroom.json whose (N, K) the table lacks; *heldout*: the layers "
             "of 8 models no table has, both layouts, every config timed on the GPU by "
             "`tune_bench.py --held_out` (bench/results/tune_heldout.md), where *measured auto* "
             "is NAME_auto as that run timed it (its library had the portfolios of its day). "
             "Figures: oracle time / chosen time (1.0 = the per-shape best of the 28 configs, "
             "which the JIT's autotuner approximates), geometric mean, worst (shape), shapes "
             "below 0.85. The portfolio ceiling is the best algo the call's class may launch.",
             "", "| source | dtype | layout | oracle time | shapes | " + " | ".join(metrics) + " |",
             "|---|---|---|---|---|" + "---|" * len(metrics)]
    for s in summary:
        cells = [f"{s[m]['geomean']:.3f} ({s[m]['worst']:.3f}, {s[m]['worst_shape']}; "
                 f"{s[m]['below_0.85']})" if m in s else "" for m in metrics]
        lines.append(f"| {s['source']} | {s['dtype']} | {s['layout']} | {s['band']} | "
                     f"{s['shapes']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    selections = (NEW, NO_WAVES, FORMER, ALL)
    rows = []
    for dtype in TABLES:
        rows += (table_cases(dtype, selections) + headroom_cases(dtype, selections)
                 + heldout_cases(dtype, selections)
                 + heldout_cases(dtype, selections, FRESH, "fresh"))
    metrics = [s.name for s in selections] + [CEILING, "measured auto"]
    summary = summarise(rows, metrics)
    md = markdown(summary, metrics)
    print(md)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        res = {"format": "rules_triton.selection_lmo.v1",
               "model": {"name": tuning.GEMM.name, "neighbours": tuning.GEMM.neighbours,
                         "class_token_penalty": tuning.GEMM.class_token_penalty,
                         "no_class_penalty": tuning.GEMM.no_class_penalty,
                         "distance_bias": tuning.GEMM.distance_bias,
                         "slow_cap": tuning.SLOW_CAP,
                         "portfolio_keep_q": tuning.PORTFOLIO_KEEP_Q,
                         "portfolio_max": tuning.PORTFOLIO_MAX},
               "summary": summary}
        (args.out / "selection_lmo.json").write_text(json.dumps(res, indent=1) + "\n")
        (args.out / "selection_lmo.md").write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
