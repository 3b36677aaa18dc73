"""The tuning command: times every algo of a kernel library on a set of shapes on this machine's
GPU and writes the library's tuning table (triton_aot.contract.tuning_table, format rules_triton.tuning.v1).

Runs where the GPU is, from the repository checkout and a folder that `tools/tune LABEL` packed
on the build machine (no Bazel here; python3 + torch + absl-py + the driver):

    python3 -m triton_aot.tuning.tune .gpu/tune/NAME [--out=TABLE.json] [--budget_s=420] [--reps=10]

(the command-line convention of every triton_aot tool, triton_aot.core.cli: absl flags, one `error:`
line and exit code 1 on failure; the GPU machine's python3 needs absl-py besides torch).

The folder holds pack.json (where the pack's files are, where the table lives in the
repository), the library's description (library.json, triton_aot.contract.library: its C API,
algos with their fingerprints, hint patterns and tuning key), the library as a shared object
(ctypes: NAME(stream, args..., algo_id), NAME_get_num_algos, NAME_get_algo_info), the variant
records the description names (the C arguments a call's hints are read from), the current table
and the user's inputs file (`tuning_inputs`: KEY, SHAPES, DTYPES, make_args, optionally check).

For each shape it makes the arguments once, then for each algo: one launch (loads the module;
a failing launch is recorded as "failed: <CUresult name>", or "exceeds resources" for
CUDA_ERROR_NOT_SUPPORTED / OUT_OF_RESOURCES, and the run goes on), the result check if the
inputs file has one ("wrong result"), then CUDA-event timing: `reps` replays of a CUDA graph
of a batch of back-to-back launches (sized to ~200 us of GPU time, at least one launch), the
median of the per-launch times: GPU time only, as the launch path is the same for every algo.
No L2 flush between launches: the steady state of a serving loop. Then the finalists, the algos
within FINALIST_MARGIN of the fastest, are timed FINAL_ROUNDS more times, interleaved (the order
alternates), and each finalist's recorded time is the median of its 1 + FINAL_ROUNDS timings:
clocks and power state drift by several percent over a sweep, and a single timing on a big
shape can crown the wrong algo by that much.

The table keeps the other devices of the existing table (one device per SM: this run replaces
this SM's) unless its algos no longer match the library's, in which case it starts afresh.
With --budget_s, shapes left when the budget is spent are not measured (and listed in the
table's notes). Exit code 0 when the table was written.
"""

from __future__ import annotations

import ctypes
import dataclasses
import inspect
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from absl import flags

from triton_aot.contract import hint_patterns, library, record_reader
from triton_aot.contract import tuning_table as tuning
from triton_aot.core import cli
from triton_aot.core.errors import UserError
from triton_aot.tuning import call_hints, model_shapes, shards, tune_flags

CUDA_ERROR_NOT_SUPPORTED = 801
CUDA_ERROR_OUT_OF_RESOURCES = 701
RESOURCE_ERRORS = (CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_OUT_OF_RESOURCES)
FINALIST_MARGIN = 1.10  # re-time the algos at most 10% slower than the fastest
FINAL_ROUNDS = 2

_CTYPES = {"CUdeviceptr": ctypes.c_uint64, "bool": ctypes.c_bool, "int8_t": ctypes.c_int8,
           "int16_t": ctypes.c_int16, "int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64,
           "uint8_t": ctypes.c_uint8, "uint16_t": ctypes.c_uint16, "uint32_t": ctypes.c_uint32,
           "uint64_t": ctypes.c_uint64, "float": ctypes.c_float, "double": ctypes.c_double}


def log(msg: str) -> None:
    print(f"tune: {msg}", file=sys.stderr, flush=True)


class Library:
    """A kernel library's C API through ctypes, typed by its library description."""

    def __init__(self, so: Path, description: library.Library):
        self.lib = ctypes.CDLL(str(so))
        self.name = name = description.name
        argtypes = [ctypes.c_void_p] + [_CTYPES[p.c_type]
                                        for p in description.function("default").params[1:]]
        self.fn = getattr(self.lib, name)
        self.fn.argtypes = argtypes + [ctypes.c_int]
        self.fn.restype = ctypes.c_int
        self.num_algos = getattr(self.lib, f"{name}_get_num_algos")()
        info = getattr(self.lib, f"{name}_get_algo_info")
        info.restype = ctypes.c_char_p
        self.infos = [info(i).decode() for i in range(self.num_algos)]
        self.auto = getattr(self.lib, f"{name}_auto", None)
        if self.auto is not None:
            self.auto.argtypes = argtypes
            self.auto.restype = ctypes.c_int


@dataclass(frozen=True)
class Pack:
    """A folder `tools/tune` packed: the library through ctypes, its description, one variant
    record per algo and the user's inputs file (the tuning command, the benchmark and the GPU
    checks all start here)."""
    dir: Path
    meta: dict
    name: str
    key: tuple[str, ...]
    records: dict  # algo index -> a variant record of that algo (its C arguments and hints)
    inputs: Any
    lib: Library
    description: library.Library

    def dtype(self, torch):
        return getattr(torch, self.inputs.DTYPES[self.name])

    @property
    def grids(self) -> list:
        """Each algo's launch grid (tuning_table.lookup's `grids`), None for an algo without
        variants."""
        return [self.records[a].grid if a in self.records else None
                for a in range(self.lib.num_algos)]


def open_pack(pack: Path) -> Pack:
    meta = json.loads((pack / "pack.json").read_text())
    description = library.read_library(pack / meta["library"])
    if description.tuning is None:
        raise UserError(f"{pack / meta['library']}: the library has no tuning_key; rerun "
                        "tools/tune on a library that sets it")
    name = description.name
    recs: dict = {}
    for v in description.variants:
        if v.algo not in recs:
            recs[v.algo] = record_reader.read_json(
                (pack / "records" / f"{v.symbol}.json").read_text(encoding="utf-8"))
    inputs = call_hints.load_inputs(pack / meta["inputs"])
    if name not in inputs.DTYPES:
        raise SystemExit(f"error: {meta['inputs']}: DTYPES has no entry for {name}")
    lib = Library(pack / meta["so"], description)
    return Pack(pack, meta, name, description.tuning.key, recs, inputs, lib, description)


def pack_hint_patterns(p: Pack) -> list[hint_patterns.Hints]:
    """The hint patterns the packed library has variants for, in the order they are tried."""
    return hint_patterns.dispatch_order(set(p.description.specializations) | {()},
                                        next(iter(p.records.values())).c_args)


def fresh_table(p: Pack) -> tuning.Table:
    """A table of the packed library's algos with no device yet."""
    return tuning.Table(p.name, p.key, tuple(tuning.TunedAlgo(a.index, a.info, a.fingerprint)
                                             for a in p.description.algos))


def c_values(args: list) -> list:
    """Tensors become their device addresses; everything else is passed as it is."""
    return [a.data_ptr() if hasattr(a, "data_ptr") else a for a in args]


class Driver:
    """cuGetErrorName, for the reason of a failed launch."""

    def __init__(self):
        self.get_name = None
        try:
            self.get_name = ctypes.CDLL("libcuda.so.1").cuGetErrorName
            self.get_name.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        except (OSError, AttributeError):  # no driver, or one without cuGetErrorName
            pass

    def name(self, code: int) -> str:
        s = ctypes.c_char_p()
        if self.get_name is not None and self.get_name(code, ctypes.byref(s)) == 0:
            return s.value.decode()
        return f"CUresult {code}"


def capture_launches(torch, launch, batch: int):
    """A CUDA graph of `batch` back-to-back `launch(stream)` calls, replayed once (its upload);
    None when the launch cannot be captured."""
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            capture = torch.cuda.current_stream()
            for _ in range(batch):
                launch(capture.cuda_stream)
        graph.replay()
        torch.cuda.synchronize()
        return graph
    except RuntimeError:
        torch.cuda.synchronize()
        return None


def replay_times(torch, graph, launch, batch: int, reps: int, busy_cycles: int = 0) -> list:
    """Microseconds per launch of `reps` replays of `graph` (without one, `batch` plain launches),
    each between CUDA events. With busy_cycles, each replay is queued behind a GPU busy-wait of
    that many cycles, long enough for the host to queue the start event and the replay before
    the GPU reaches them: the events then time the GPU's work alone, with no launch gap."""
    stream = torch.cuda.current_stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        if busy_cycles:
            torch.cuda._sleep(busy_cycles)
        start.record(stream)
        if graph is not None:
            graph.replay()
        else:
            for _ in range(batch):
                launch(stream.cuda_stream)
        end.record(stream)
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / batch)
    return times


def time_launches(torch, launch, reps: int, target_us: float = 200.0) -> float:
    """Median microseconds per launch of `launch(stream)`: `reps` replays of a CUDA graph of a
    batch of back-to-back launches (sized to ~target_us from one launch's time, host included),
    between CUDA events, so the host's launch cost (Python, ctypes) never shows; plain launches
    between events when the launch cannot be captured. The algos of one library share one launch
    path, so the batch sizes they get are alike (the benchmark, which compares launch paths, gives
    every method one batch instead: bench/tune/tune_bench.py)."""
    one = max(replay_times(torch, None, launch, 1, 1)[0], 1.0)
    batch = max(1, min(200, int(target_us / one)))
    graph = capture_launches(torch, launch, batch)
    return statistics.median(replay_times(torch, graph, launch, batch, reps))


def measure_algo(torch, lib: Library, driver: Driver, stream: int, cargs: list, algo: int,
                 check, reps: int):
    r = lib.fn(stream, *cargs, algo)
    if r != 0:
        return "exceeds resources" if r in RESOURCE_ERRORS else f"failed: {driver.name(r)}"
    torch.cuda.synchronize()
    if check is not None and not check():
        return "wrong result"
    return time_launches(torch, lambda st: lib.fn(st, *cargs, algo), reps)


def retime_finalists(torch, lib: Library, cargs: list, times: list, reps: int) -> None:
    """Replaces the time of each algo within FINALIST_MARGIN of the fastest by the median of
    that time and FINAL_ROUNDS more, taken in interleaved rounds (see the module docstring)."""
    timed = [t for t in times if isinstance(t, float)]
    if not timed:
        return
    finalists = [i for i, t in enumerate(times)
                 if isinstance(t, float) and t <= min(timed) * FINALIST_MARGIN]
    if len(finalists) < 2:
        return
    samples = {i: [times[i]] for i in finalists}
    for rnd in range(FINAL_ROUNDS):
        for algo in (finalists if rnd % 2 else list(reversed(finalists))):
            samples[algo].append(
                time_launches(torch, lambda st, a=algo: lib.fn(st, *cargs, a), reps))
    for algo, ts in samples.items():
        times[algo] = statistics.median(ts)


def _existing_table(out: Path | None, pack: Path, fresh: tuning.Table,
                    name: str) -> tuning.Table | None:
    """The table being retuned, when it was tuned for the library's current algos."""
    existing = out if out is not None and out.exists() else pack / "table.json"
    return _table_if_current(existing, fresh, name)


def _table_if_current(existing: Path, fresh: tuning.Table, name: str) -> tuning.Table | None:
    if not existing.exists():
        return None
    try:
        old = tuning.read_table(existing)
    except tuning.TableError as e:
        log(f"{existing}: {e}; starting a new table")
        return None
    if old.algos == fresh.algos and old.key == fresh.key and old.library == name:
        return tuning.Table(name, fresh.key, fresh.algos, old.devices, old.notes)
    log(f"{existing}: tuned for other algos; starting a new table")
    return None


def _time_algos(torch, lib, driver, stream, cargs, check, reps) -> list:
    """Each algo's time on one call (or why it failed), the finalists timed again."""
    times = []
    for algo in range(lib.num_algos):
        try:
            times.append(measure_algo(torch, lib, driver, stream, cargs, algo, check, reps))
        except RuntimeError as e:  # a CUDA error torch saw (e.g. an illegal address)
            times.append(f"failed: {str(e).splitlines()[0][:80]}")
            torch.cuda.synchronize()
    retime_finalists(torch, lib, cargs, times, reps)
    return times


def _measure_calls(torch, p, dtype, driver, stream, calls, have: set,
                   budget_s: float | None, reps: int, t0: float) -> tuple[list, list]:
    """Times every algo on each call's variant: (the points measured, the calls skipped for
    the time budget). A call whose point the table has (`have`) or another call measured is
    not timed again."""
    meta, key, inputs, lib = p.meta, p.key, p.inputs, p.lib
    ref = next(iter(p.records.values()))
    variant_hints = pack_hint_patterns(p)
    points, skipped, seen = [], [], set()
    for call in calls:
        if budget_s is not None and time.monotonic() - t0 > budget_s:
            skipped.append(call)
            continue
        kw = call.kwargs(key)
        args = inputs.make_args(torch, dtype, **kw)
        jit = hint_patterns.of_call(ref, c_values(args))
        # The point is the variant that runs: the first (most hints) whose hints the call has.
        ran = next(p for p in variant_hints if set(p) <= set(jit))
        hints = hint_patterns.spelling(ran)
        if (call.key, hints) in seen:
            continue  # another call (another layout, say) already measured this variant here
        if have & {(call.key, hints), (call.key, hint_patterns.spelling(jit))}:
            continue  # --missing_only: the table has this call's point (packed with its variant)
        seen.add((call.key, hints))
        if ran != jit:
            log(f"  {call.label()}: no variant has the JIT's hints "
                f"({hint_patterns.spelling(jit) or 'none'}); timed with '{hints or 'no hints'}' "
                f"(tools/tune {meta.get('label', 'LABEL')} writes the specializations the "
                "tuning calls need)")
        cargs = c_values(args)
        check = None
        if hasattr(inputs, "check"):
            check = lambda: inputs.check(torch, dtype, args, **kw)  # noqa: E731
        times = _time_algos(torch, lib, driver, stream, cargs, check, reps)
        win = tuning.winner_of(times)
        points.append(tuning.Point(call.key, tuple(times), win, hints))
        shown = f"algo {win} {times[win]:.1f} us" if win is not None else "no algo ran"
        log(f"  {call.label()}: {shown}")
        del args, cargs
    return points, skipped


def tune(pack: Path, out: Path | None, reps: int, budget_s: float | None,
         shapes_filter: str | None = None, missing_only: bool = False,
         model: list[call_hints.Call] | None = None, shard: tuple[int, int] | None = None,
         base: Path | None = None) -> tuning.Table:
    """Times the calls (the inputs' SHAPES, or `model`'s calls) on this process's GPU. With
    `shard` (i, n), only shard i of shards.plan's n, and the table returned holds only the
    points measured here (tune_on_gpus merges the shards); `base` is the table being retuned
    (default: `out`, else the pack's)."""
    import torch

    p = open_pack(pack)
    meta, name, key, inputs, lib = p.meta, p.name, p.key, p.inputs, p.lib
    fresh = fresh_table(p)
    if tuple(inputs.KEY) != key:
        raise SystemExit(f"error: {meta['inputs']}: KEY is {inputs.KEY} but the library's "
                         f"tuning_key is {key}")
    dtype = p.dtype(torch)
    if lib.infos != [a.info for a in fresh.algos]:
        raise SystemExit("error: the packed library and its description disagree; rerun tools/tune")
    driver = Driver()
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    major, minor = torch.cuda.get_device_capability(dev)
    sm = major * 10 + minor
    stream = torch.cuda.current_stream().cuda_stream
    calls = call_hints.tuning_calls(inputs) if model is None else model
    if shapes_filter:
        keep = tune_flags.shape_keys(shapes_filter)
        calls = [c for c in calls if c.key in keep]
    if shard is not None:
        calls = shards.plan(calls, shard[1])[shard[0]]
    old_table = (_table_if_current(base, fresh, name) if base is not None and base.exists()
                 else _existing_table(out, pack, fresh, name))
    old_dev = old_table.device(sm) if old_table else None
    have = {(p.key, p.hints) for p in old_dev.points} if (missing_only and old_dev) else set()
    log(f"{name}: {lib.num_algos} algos x {len(calls)} calls on {props.name} (sm_{sm}), "
        f"{inputs.DTYPES[name]}" + (f"; {len(have)} already in the table" if have else ""))

    t0 = time.monotonic()
    points, skipped = _measure_calls(torch, p, dtype, driver, stream, calls, have, budget_s,
                                     reps, t0)
    table = old_table or fresh
    notes = [n for n in table.notes if not n.startswith("Not tuned yet")]
    if skipped:
        notes.append(f"sm_{sm}: over the time budget, not measured: "
                     + ", ".join(c.label() for c in skipped))
    table = tuning.Table(name, key, table.algos, table.devices, tuple(notes))
    measured = len(points)
    if shard is not None:  # only this shard's points: tune_on_gpus merges them into the table
        log(f"{name}: shard {shard[0]} of {shard[1]}: {measured} shapes in "
            f"{time.monotonic() - t0:.0f} s")
        return tuning.Table(name, key, table.algos,
                            (tuning.Device(props.name, sm, "tune", tuple(points),
                                           props.multi_processor_count),), tuple(notes))
    if (shapes_filter or missing_only or model is not None) and old_dev is not None:
        # --shapes and --missing_only measure some calls only: the device keeps its other points
        remeasured = {(p.key, p.hints) for p in points}
        points = [p for p in old_dev.points if (p.key, p.hints) not in remeasured] + points
    table = table.with_device(tuning.Device(props.name, sm, "tune", tuple(points),
                                            props.multi_processor_count))
    log(f"{name}: {measured} shapes in {time.monotonic() - t0:.0f} s"
        + (f", {len(skipped)} skipped (budget)" if skipped else ""))
    return table


def tune_on_gpus(pack: Path, out: Path, worker_flags: list[str], devices: list[str],
                 worker: list[str] | None = None) -> tuning.Table:
    """One tuning process per GPU (`devices`: CUDA_VISIBLE_DEVICES of each), each timing its
    shard (shards.plan) into a file of its own, then the shards merged into the table being
    retuned (`out`, else the pack's; a fresh one when neither is tuned for these algos).
    `worker` is the command that runs one shard (default: this module)."""
    p_meta = json.loads((pack / "pack.json").read_text())
    description = library.read_library(pack / p_meta["library"])
    fresh = tuning.Table(description.name, description.tuning.key, tuple(
        tuning.TunedAlgo(a.index, a.info, a.fingerprint) for a in description.algos))
    base_path = out if out.exists() else pack / "table.json"
    base = (_table_if_current(base_path, fresh, description.name) if base_path.exists()
            else None) or fresh
    worker = worker or [sys.executable, "-m", "triton_aot.tuning.tune"]
    n = len(devices)
    with tempfile.TemporaryDirectory(prefix="tune_shards_") as tmp:
        base_copy = Path(tmp) / "base.json"
        base_copy.write_text(base.to_json(), encoding="utf-8")
        outs = [Path(tmp) / f"shard_{i}.json" for i in range(n)]
        t0 = time.monotonic()
        log(f"{description.name}: {n} GPUs ({', '.join(devices)}), one tuning process each")
        codes = shards.run(lambda i: worker + [str(pack), f"--shard={i}/{n}", f"--out={outs[i]}",
                                               f"--base={base_copy}"] + worker_flags, devices)
        failed = [i for i, c in enumerate(codes) if c != 0]
        if failed:
            raise UserError(f"the tuning of shard(s) {failed} failed (exit codes "
                            f"{[codes[i] for i in failed]}; their output is above); the table "
                            "is unchanged: rerun with --missing_only")
        merged = shards.merge(base, [tuning.read_table(o) for o in outs])
        log(f"{description.name}: {n} shards merged in {time.monotonic() - t0:.0f} s")
    return merged


def _model_calls(values: tune_flags.TuneFlags, inputs) -> list[call_hints.Call] | None:
    """The calls of --layers or --model_config at --batch sizes; None: the inputs' SHAPES."""
    model = tune_flags.check(values, tuple(inputs.KEY))
    if model is None:
        return None
    params = inspect.signature(inputs.make_args).parameters
    layout = "nt" if "layout" in params else None
    layers, ms = model.layers, model.batch_sizes
    log(f"{len(layers)} layers ({', '.join(f'{l.name} {l.n}x{l.k}' for l in layers)}) x "
        f"{len(ms)} batch sizes ({', '.join(map(str, ms))})"
        + (", B = W.t() (torch.nn.Linear)" if layout else ""))
    return model_shapes.model_calls(layers, ms, layout)


def _gpu_count(spec: str) -> int:
    count = tune_flags.gpu_count(spec)
    if count is None:
        import torch
        return max(1, torch.cuda.device_count())
    return count


def _define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("out", None, "The table to write (default: the library's table in the "
                        "repository, as pack.json names it; its other devices are kept).",
                        flag_values=fv)
    tune_flags.define(fv)  # the flags the build machine takes too (tools/tune LABEL FLAGS)
    flags.DEFINE_string("shard", None, "Internal: time shard I of N only (I/N) and write only "
                        "its points.", flag_values=fv)
    flags.DEFINE_string("base", None, "Internal: the table being retuned (a shard's).",
                        flag_values=fv)


def _run(fv: flags.FlagValues, rest: list[str]) -> None:
    if len(rest) != 1:
        raise UserError("give one argument: the folder tools/tune packed (.gpu/tune/NAME)")
    pack = Path(rest[0])
    if not (pack / "pack.json").is_file():
        raise UserError(f"{pack} has no pack.json: run tools/tune LABEL on the build machine "
                        "and use the folder it prints")
    meta = json.loads((pack / "pack.json").read_text())
    out = Path(fv.out) if fv.out else Path(meta["table"])
    shard = None
    if fv.shard:
        i, _, n = fv.shard.partition("/")
        if not (i.isdigit() and n.isdigit() and int(i) < int(n)):
            raise UserError(f"--shard={fv.shard!r}: give I/N with 0 <= I < N")
        shard = (int(i), int(n))
    values = tune_flags.from_absl(fv)
    tune_flags.gpu_count(values.gpus)  # refused before anything is read or timed
    model = _model_calls(values, call_hints.load_inputs(pack / meta["inputs"]))
    gpus = 1 if shard else _gpu_count(fv.gpus)
    if gpus > 1:
        # each worker its shard of the same calls: every flag but --gpus
        passed = dataclasses.replace(values, gpus="all").argv()
        table = tune_on_gpus(pack, out, passed, shards.visible_devices(gpus))
    else:
        table = tune(pack, out, fv.reps, fv.budget_s, fv.shapes, fv.missing_only, model, shard,
                     Path(fv.base) if fv.base else None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table.to_json(), encoding="utf-8")
    log(f"wrote {out}")


TOOL = cli.Tool(
    module="triton_aot.tuning.tune",
    usage="python3 -m triton_aot.tuning.tune .gpu/tune/NAME [--out=TABLE.json] [--reps=10] "
          "[--budget_s=S] [--shapes=MxNxK,...] [--missing_only] [--gpus=all|N] "
          "[--layers=NxK,... | --model_config=config.json] [--batch=LO:HI] [--batch_count=20]",
    define_flags=_define_flags,
    run=_run,
    positional=True,
)


def main(argv=None) -> int:
    return cli.main(TOOL, argv)


if __name__ == "__main__":
    sys.exit(main())
