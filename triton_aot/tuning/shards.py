"""Tuning on every GPU of a host: the calls split into one shard per GPU, one tuning process
per GPU (CUDA_VISIBLE_DEVICES names its one GPU), and the shards' points merged into the table.

    plan(calls, n)                  -> n lists of calls, balanced by model_shapes.cost
    run(argv_of, devices)           -> each worker's exit code (all started at once)
    merge(base, shard_tables)       -> the base table with every shard's points in

Deterministic: the plan depends on the calls alone, and the merged table on the points alone
(a device's points are kept in table order), never on which worker finished first.
"""

from __future__ import annotations

import os
import subprocess
from typing import Callable, Sequence

from triton_aot.contract import tuning_table as tuning
from triton_aot.core.errors import UserError
from triton_aot.tuning.call_hints import Call
from triton_aot.tuning.model_shapes import cost


def plan(calls: Sequence[Call], n: int) -> list[list[Call]]:
    """The calls in n shards of about equal cost: the costliest first, each to the shard with
    the least so far (the lower index on ties); each shard keeps the calls' order."""
    if n < 1:
        raise UserError(f"--gpus={n}: give at least 1")
    load = [0.0] * n
    where: dict[int, int] = {}
    for i in sorted(range(len(calls)), key=lambda i: (-cost(calls[i]), i)):
        s = min(range(n), key=lambda s: (load[s], s))
        where[i] = s
        load[s] += cost(calls[i])
    return [[c for i, c in enumerate(calls) if where[i] == s] for s in range(n)]


def visible_devices(count: int) -> list[str]:
    """The ids to give the workers in CUDA_VISIBLE_DEVICES: those already visible (when the
    variable is set), else 0..count-1."""
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v.strip() for v in vis.split(",") if v.strip()] if vis else []
    return (ids or [str(i) for i in range(count)])[:count]


def run(argv_of: Callable[[int], list[str]], devices: Sequence[str]) -> list[int]:
    """Starts worker i (argv_of(i)) on device devices[i], all at once; their exit codes."""
    procs = []
    for i, dev in enumerate(devices):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=dev)
        procs.append(subprocess.Popen(argv_of(i), env=env))
    return [p.wait() for p in procs]


def merge(base: tuning.Table, shards: Sequence[tuning.Table]) -> tuning.Table:
    """`base` with each shard's devices' points added (a point of the same key and hints
    replaced); a shard tuned for other algos, or two shards with the same point, are refused."""
    out = base
    measured: dict[tuple, int] = {}
    for si, shard in enumerate(shards):
        if shard.algos != base.algos or shard.key != base.key:
            raise UserError(f"shard {si} was tuned for other algos than the table; rerun it")
        for dev in shard.devices:
            for p in dev.points:
                k = (dev.sm, p.key, p.hints)
                if k in measured:
                    raise UserError(f"shards {measured[k]} and {si} both measured "
                                    f"{'x'.join(map(str, p.key))} ({p.hints or 'no hints'}) "
                                    f"on sm_{dev.sm}: the shards overlap")
                measured[k] = si
            old = out.device(dev.sm)
            new = {(p.key, p.hints) for p in dev.points}
            kept = tuple(p for p in (old.points if old else ()) if (p.key, p.hints) not in new)
            out = out.with_device(tuning.Device(dev.name, dev.sm, dev.source,
                                                kept + dev.points, dev.num_sms))
    notes = tuple(dict.fromkeys(base.notes + tuple(n for s in shards for n in s.notes)))
    return tuning.Table(out.library, out.key, out.algos, out.devices, notes)
