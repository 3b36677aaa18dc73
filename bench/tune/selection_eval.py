#!/usr/bin/env python3
"""How well NAME_auto's selection generalises, measured on the committed tuning tables without a
GPU: leave-one-out. Each tuned point in turn is removed from its device's table; the selection
model picks an algo for that point's shape and hint class from the remaining points; its cost is
the held-out point's measured time of that algo over the point's best (1.0: the tuner's own
choice). Several models side by side, over every point of every table given:

  nearest          the winner of the nearest point over the key logs and their products, any
                   hint class (the lookup before hint classes and voting)
  nearest-class    the same, points of the call's own hint class first (CLASS_PENALTY)
  knn-K            the K nearest points (own class first: other classes CLASS_PENALTY further)
                   vote with their slowdowns, weighted by 1 / (distance + distance_bias),
                   over the key logs and their products (the models before the one in use)
  in use           triton_aot.contract.tuning_table.choose as NAME_auto runs it (the table's
                   SelectionModel, class distances, within the class's portfolio)

    python3 bench/tune/selection_eval.py examples/kernels/*.tuning.json [--out bench/results]

Writes selection.json and selection.md: per model and table, the geometric mean of
best time / chosen time (the fraction of the oracle's speed kept) and the worst point.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from triton_aot.contract import tuning_table as tuning  # noqa: E402
from selection_lmo import example_grids  # noqa: E402  (this folder's)

NO_PENALTY = 0


IN_USE = "in use (the table's selection model, within the class's portfolio)"


def models(table: tuning.Table):
    """(name, selection model, flat class penalty or None for the table's class distances,
    whether the vote is limited to the call class's portfolio)."""
    logs = tuning.KEY_LOGS
    out = [(IN_USE, tuning.model_for(len(table.key)), None, True),
           ("nearest", dataclasses.replace(logs, neighbours=1), NO_PENALTY, False),
           ("nearest-class", dataclasses.replace(logs, neighbours=1), tuning.CLASS_PENALTY,
            False)]
    for k in (2, 4, 8, 16):
        for penalty in (2 * tuning.Q, 4 * tuning.Q, 8 * tuning.Q):
            out.append((f"knn-{k} class penalty {penalty // tuning.Q} octaves",
                        dataclasses.replace(logs, neighbours=k), penalty, False))
    out.append(("knn-8 no class penalty", dataclasses.replace(logs, neighbours=8), NO_PENALTY,
                False))
    return out


def evaluate(table: tuning.Table, model: tuning.SelectionModel, penalty: int | None,
             in_portfolio: bool) -> list[dict]:
    class_dist = tuning.class_distances(table, model) if penalty is None else None
    out = []
    for dev in table.devices:
        rows = tuning.rows_of(table, dev, model)
        # the portfolios of the whole table: the held-out point still helped choose them
        allowed = tuning.class_algos(table, dev)
        # the model in use votes with the waves of the SM-bound algos, as NAME_auto does
        waves = (tuning.waves_of(table, dev, example_grids(table))
                 if in_portfolio and penalty is None and model.gemm else None)
        points = [p for p in dev.points if p.winner is not None]
        for i, (p, row) in enumerate(zip(points, rows)):
            times = p.times_us
            if not any(isinstance(t, float) for t in times):
                continue
            rest = rows[:i] + rows[i + 1:]
            algo = tuning.choose(rest, row.feats, row.hint_class, 0, model,
                                 allowed=allowed[row.hint_class + 1] if in_portfolio else None,
                                 class_dist=class_dist,
                                 class_penalty=tuning.CLASS_PENALTY if penalty is None
                                 else penalty, waves=waves, leads=row.leads)
            best = times[p.winner]
            t = times[algo]
            kept = best / t if isinstance(t, float) else 0.0
            out.append({"sm": dev.sm, "key": list(p.key), "hints": p.hints, "algo": algo,
                        "winner": p.winner, "kept": kept})
    return out


def geomean(xs):
    xs = [max(x, 1e-3) for x in xs]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--models", default="", help="comma-separated name prefixes of the models "
                    "to run (default: all; each is a leave-one-out over every point)")
    args = ap.parse_args()
    wanted = [m for m in args.models.split(",") if m]
    res = {"format": "rules_triton.selection_eval.v1", "model": {
        m.name: dataclasses.asdict(m) for m in (tuning.GEMM, tuning.KEY_LOGS)}, "results": []}
    for path in args.tables:
        table = tuning.read_table(path)
        for name, model, penalty, in_portfolio in models(table):
            if wanted and not any(name.startswith(w) for w in wanted):
                continue
            got = evaluate(table, model, penalty, in_portfolio)
            kept = [g["kept"] for g in got]
            worst = min(got, key=lambda g: g["kept"]) if got else None
            res["results"].append({
                "table": path.name, "model": name, "points": len(got),
                "kept_geomean": geomean(kept), "kept_min": min(kept) if kept else None,
                "below_0.8": sum(1 for k in kept if k < 0.8),
                "same_as_tuner": sum(1 for g in got if g["algo"] == g["winner"]),
                "worst": worst})
    lines = ["# Selection models, leave-one-out over the tuning tables", "",
             "Generated by bench/tune/selection_eval.py (no GPU: the tables' own measurements). "
             "Each tuned point is held out and chosen for from the others; *kept* is the "
             "held-out point's best time over the chosen algo's time there (1.0 = the tuner's "
             "choice).", "", f"Model in use: {res['model']}", "",
             "| table | model | points | kept (geomean) | worst | points below 0.8 | same as tuner |",
             "|---|---|---|---|---|---|---|"]
    for r in res["results"]:
        w = r["worst"]
        lines.append(f"| {r['table']} | {r['model']} | {r['points']} | {r['kept_geomean']:.3f} "
                     f"| {r['kept_min']:.3f} ({'x'.join(map(str, w['key']))}) | {r['below_0.8']} "
                     f"| {r['same_as_tuner']} |")
    md = "\n".join(lines) + "\n"
    print(md)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "selection.json").write_text(json.dumps(res, indent=1) + "\n")
        (args.out / "selection.md").write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
