"""Tuning tables without a GPU: `new` writes an empty table for a library's algos, `seed` adds a
device from Triton's own autotune cache files (`@triton.autotune(..., cache_results=True)`).
The table format and its lookup are triton_aot.contract.tuning_table."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from absl import flags

from triton_aot.contract import record_reader
from triton_aot.contract.library import Library, read_library
from triton_aot.contract.tuning_table import (Device, Point, Table, TableError, TunedAlgo,
                                              read_table, record_fingerprint, winner_of)
from triton_aot.core import cli
from triton_aot.core.errors import UserError


# ---- seeding from Triton's autotune cache ------------------------------------------------------


def _config_matches(cfg: dict, algo_constexprs: dict[str, str], launch) -> bool:
    kwargs = cfg.get("kwargs", {})
    if any(str(v) != algo_constexprs.get(k) for k, v in kwargs.items()):
        return False
    return (cfg.get("num_warps", 4) == launch.num_warps and
            cfg.get("num_stages", 3) == launch.num_stages and
            cfg.get("num_ctas", 1) == launch.num_ctas and
            cfg.get("maxnreg") == launch.maxnreg and
            # a Config has no enable_fp_fusion: the autotuner timed Triton's default, fused
            launch.enable_fp_fusion)


def seed_from_autotune_cache(table: Table, records_by_algo: dict[int, Any],
                             cache_files: Iterable[Path], device_name: str, sm: int) -> Table:
    """A device of `table` from Triton's `<kernel>.autotune.json` files (written with
    `@triton.autotune(..., cache_results=True)` into the Triton cache). Each file is one key:
    {"key": [key values..., dtype strings...], "configs_timings": [[Config.__dict__, [median ms,
    p20, p80]], ...]}. The key's first len(table.key) values must be the table's key arguments, in
    order (the autotune `key` list). Configs that match no algo of the library are reported."""
    points: dict[tuple, list] = {}
    nkey = len(table.key)
    for path in sorted(cache_files):
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            key = data["key"]
            timings = data["configs_timings"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TableError(f"{path}: not a Triton autotune cache file ({e})") from None
        values = key[:nkey]
        if len(values) != nkey or not all(isinstance(v, int) and not isinstance(v, bool)
                                          for v in values):
            raise TableError(f"{path}: key {key!r} does not start with {nkey} integers "
                             f"({', '.join(table.key)})")
        times: list = [None] * len(table.algos)
        for cfg, t in timings:
            matched = [i for i, r in records_by_algo.items()
                       if _config_matches(cfg, r.constexprs, r.launch)]
            if not matched:
                raise TableError(f"{path}: config {cfg!r} is none of the library's algos; seed "
                                 "from a cache written with the library's own configs")
            median_ms = t[0] if isinstance(t, list) else t
            for i in matched:
                times[i] = (float(median_ms) * 1000.0 if math.isfinite(median_ms)
                            else "exceeds resources")
        points[tuple(values)] = times
    pts = tuple(Point(k, tuple(v), winner_of(v)) for k, v in sorted(points.items()))
    return table.with_device(Device(device_name, sm, "triton-autotune-cache", pts))


def empty_table(name: str, key: Sequence[str], records_by_algo: dict[int, Any]) -> Table:
    return Table(name, tuple(key), tuple(
        TunedAlgo(i, r.algo_info(), record_fingerprint(r)) for i, r in sorted(records_by_algo.items())))


def records_by_algo(description: Library, records: Path) -> dict[int, Any]:
    """One variant record per algo index: of the variants the library description names, from
    the folder of the library's records (its `metadata` output group, searched recursively)."""
    by_symbol = {p.stem: p for p in sorted(records.rglob("*.json"))}
    out: dict[int, Any] = {}
    for v in description.variants:
        if v.algo in out:
            continue
        path = by_symbol.get(v.symbol)
        if path is None:
            raise TableError(f"{records}: no record {v.symbol}.json of library {description.name}")
        out[v.algo] = record_reader.read_json(path.read_text(encoding="utf-8"))
    return out


def _define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("library", None, "The library's description (NAME.library.json, its "
                        "`library_description` output group).", flag_values=fv)
    flags.DEFINE_string("key", None, "Comma-separated key argument names, e.g. M,N,K "
                        "(default: the library's tuning_key).", flag_values=fv)
    flags.DEFINE_string("records", None, "Folder of the library's variant records.",
                        flag_values=fv)
    flags.DEFINE_string("out", None, "The table to write (read first when it exists).",
                        flag_values=fv)
    flags.DEFINE_multi_string("cache", [], "seed: a <kernel>.autotune.json file, or a folder "
                              "searched for them (the Triton cache, ~/.triton/cache); repeatable.",
                              flag_values=fv)
    flags.DEFINE_string("device_name", None, "seed: the GPU's name, e.g. "
                        "'NVIDIA H100 80GB HBM3'.", flag_values=fv)
    flags.DEFINE_integer("sm", None, "seed: the GPU's SM, e.g. 90.", flag_values=fv)


def _run(fv: flags.FlagValues, rest: list[str]) -> None:
    if len(rest) != 1 or rest[0] not in ("new", "seed"):
        raise UserError("give one command: new (an empty table) or seed (a device from "
                        "Triton's autotune cache files)")
    cli.require(fv, "library", "records", "out")
    try:
        table = _new_or_seed(fv, rest[0])
    except (TableError, OSError) as e:
        raise UserError(str(e)) from None
    print(f"wrote {fv.out}: {len(table.algos)} algos, "
          f"{sum(len(d.points) for d in table.devices)} points", file=sys.stderr)


def _new_or_seed(fv: flags.FlagValues, command: str) -> Table:
    description = read_library(fv.library)
    if fv.key:
        key = fv.key.split(",")
    elif description.tuning is not None:
        key = list(description.tuning.key)
    else:
        raise TableError(f"--key: {fv.library} has no tuning_key; give the key arguments")
    recs = records_by_algo(description, Path(fv.records))
    fresh = empty_table(description.name, key, recs)
    out = Path(fv.out)
    table = fresh
    if out.exists():
        old = read_table(out)
        if old.algos == fresh.algos and old.key == fresh.key:
            table = old
    if command == "seed":
        if not fv.cache or fv.device_name is None or fv.sm is None:
            raise TableError("seed needs --cache, --device_name and --sm")
        files: list[Path] = []
        for c in map(Path, fv.cache):
            files += sorted(c.rglob("*.autotune.json")) if c.is_dir() else [c]
        if not files:
            raise TableError(f"no *.autotune.json under {fv.cache}")
        table = seed_from_autotune_cache(table, recs, files, fv.device_name, fv.sm)
    out.write_text(table.to_json(), encoding="utf-8")
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """python3 -m triton_aot.tuning.seed new|seed ... (see --help): create a tuning table (new) or add
    a device to one from Triton's autotune cache files (seed). Records: the library's variant
    metadata (its `metadata` output group)."""
    return cli.main(cli.Tool(
        module="triton_aot.tuning.seed",
        usage="python3 -m triton_aot.tuning.seed new|seed --library=NAME.library.json --records=DIR "
              "--out=T.json [--cache=PATH ... --device_name=NAME --sm=SM]",
        define_flags=_define_flags, run=_run, positional=True), argv)


if __name__ == "__main__":
    sys.exit(main())
