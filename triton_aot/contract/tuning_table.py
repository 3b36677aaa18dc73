"""Tuning tables (format rules_triton.tuning.v1): which algo of a library is fastest for which
input sizes on which GPU, with every measurement that decided it.

One JSON file per library, committed next to its BUILD file and passed to the rule
(`triton_kernel_library(tuning = "NAME.tuning.json", tuning_key = ["M", "N", "K"])`). The link
tool turns it into `NAME_auto(stream, args...)`, which needs no algo_id (docs/design.md,
"Tuning tables"). The tables are written by `python3 -m triton_aot.tuning.tune` on a GPU machine, or
seeded from Triton's own autotune cache (`python3 -m triton_aot.tuning.seed seed`).

    {
      "format": "rules_triton.tuning.v1",
      "library": "matmul_tuned",                  # the C API prefix (c_name)
      "key": ["M", "N", "K"],                     # integer arguments of the C API
      "algos": [                                  # the library's algos, as tuned
        {"index": 0, "info": "BLOCK_M=128 ... num_warps=8 num_stages=3",
         "fingerprint": "3f1c..."}, ...],
      "devices": [                                # one per SM
        {"name": "NVIDIA H100 80GB HBM3", "sm": 90, "num_sms": 132, "source": "tune",
         "points": [                  # one per measured shape and hint pattern, by key
           {"key": [4096, 4096, 4096], "times_us": [812.4, "failed: CUDA_ERROR_...",
            "exceeds resources", null, ...], "winner": 0}, ...]}]
    }

`times_us[i]` is algo i's median time in microseconds, or why it has none ("failed: <CUresult
name>", "exceeds resources", "wrong result", or null: not measured). `winner` is the fastest
algo with a time (ties: the lower index); null when none ran. `source` says where the numbers
came from: "tune" (triton_aot.tuning.tune), "triton-autotune-cache" (seeded), or "manual" (written by
hand: points may have empty `times_us` and just name a winner). `num_sms` (optional) is the
multiprocessor count of the GPU the points were timed on, which the tuning command records; the
selection reads wave quantization from it (`Waves`).

The fingerprint of an algo hashes what makes it that algo (constexpr values, num_warps,
num_stages, num_ctas, maxnreg): when the library's algo list changes, the link tool sees the
table no longer describes it and fails the build with the command that retunes it.

Lookup (the C of NAME_auto and `lookup()` here, which agree bit for bit): each key argument's
leading 9 bits (`lead9`), from which its base-2 logarithm in fixed point (1/256 octave, from the
position of the leading bit and a 256-entry table of the next 8 bits; values <= 1 count as 1)
and, for a GEMM's (M, N, K), its tile counts; then the tuned points of the device's SM vote
(`choose` below: the nearest in L1 distance over the selection model's features, plus a distance
between the call's and the point's hint classes), among the few algos of the class's portfolio.
A device SM with no points, or no table, gives the library's default algo
(`tuning_default_algo`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence


FORMAT = "rules_triton.tuning.v1"
SOURCES = ("tune", "triton-autotune-cache", "manual")
Q = 256  # fixed point of the log2 values: 1/256 octave
_HINT_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*:(1|16)\Z")

# round(256 * log2(1 + f / 256)) for the 8 bits after the leading one; the C has the same table.
LOG2_FRAC = tuple(round(Q * math.log2(1 + f / Q)) for f in range(Q))


class TableError(ValueError):
    """A table the tools cannot use; the message names the field."""


def lead9(x: int) -> int:
    """x's leading one and the 8 bits after it, as (position << 8) | bits (x <= 1 -> 0): all the
    lookup reads of a key value, so a call's answer depends on these alone (the C memoises it by
    them)."""
    if x <= 1:
        return 0
    x = min(int(x), (1 << 63) - 1)
    e = x.bit_length() - 1
    f = (x >> (e - 8)) if e >= 8 else (x << (8 - e))
    return e << 8 | (f & 0xFF)


def log2_of_lead(lead: int) -> int:
    """log2 in 1/256 octaves of a value with this lead9."""
    return (lead >> 8) * Q + LOG2_FRAC[lead & 0xFF]


def log2_q8(x: int) -> int:
    """log2(x) in 1/256 octaves, as the generated C computes it (x <= 1 -> 0)."""
    return log2_of_lead(lead9(x))


def kept_value(lead: int) -> int:
    """The value a lead9 keeps: x with the bits below its leading 9 cleared (>= 1)."""
    e, m = lead >> 8, 256 | (lead & 0xFF)
    return m << (e - 8) if e >= 8 else m >> (8 - e)


def tiles_log2_q8(lead: int, tile: int) -> int:
    """log2 in 1/256 octaves of the number of `tile`-sized tiles that cover kept_value(lead)."""
    return log2_q8((kept_value(lead) - 1) // tile + 1)


def fingerprint(constexprs: dict[str, Any], num_warps: int, num_stages: int, num_ctas: int = 1,
                maxnreg: int | None = None, reset_to_zero: tuple = (),
                enable_fp_fusion: bool = True) -> str:
    """What makes an algo that algo, hashed: constexpr values (by name, as their source
    spelling: 128, True, tl.float16) and the launch meta-parameters Triton's Config has, and
    the regions it zeroes before launching ((name, extents) pairs; only when it has any, so
    the fingerprints of algos without reset_to_zero are unchanged), and enable_fp_fusion when
    off (another cubin; likewise only then)."""
    fields = {"constexprs": {k: str(v) for k, v in sorted(constexprs.items())},
              "num_warps": num_warps, "num_stages": num_stages, "num_ctas": num_ctas,
              "maxnreg": maxnreg}
    if reset_to_zero:
        fields["reset_to_zero"] = [[name, list(extents)] for name, extents in reset_to_zero]
    if not enable_fp_fusion:
        fields["enable_fp_fusion"] = False
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record_fingerprint(record) -> str:
    """The fingerprint of a variant record's algo (triton_aot.contract.variant.VariantRecord)."""
    cfg = record.launch
    return fingerprint(record.constexprs, cfg.num_warps, cfg.num_stages, cfg.num_ctas, cfg.maxnreg,
                       tuple((r.name, r.extents) for r in record.reset_to_zero),
                       cfg.enable_fp_fusion)


@dataclass(frozen=True)
class TunedAlgo:
    index: int
    info: str
    fingerprint: str


@dataclass(frozen=True)
class Point:
    key: tuple[int, ...]
    times_us: tuple[float | str | None, ...]
    winner: int | None
    # The JIT's hint pattern of the timed call (triton_aot.tuning.call_hints spelling, "" for none);
    # None in tables written before patterns were recorded.
    hints: str | None = None


def _point_order(p: Point) -> tuple:
    """Table order: by key, then by hint pattern (one point per key and pattern: a key can be
    tuned for several caller layouts, each running its own variant)."""
    return (p.key, p.hints or "")


@dataclass(frozen=True)
class Device:
    name: str
    sm: int
    source: str
    points: tuple[Point, ...]
    # The multiprocessor count of the GPU the points were timed on; None in tables written
    # before it was recorded (the selection then sees no wave quantization).
    num_sms: int | None = None


@dataclass(frozen=True)
class Table:
    library: str
    key: tuple[str, ...]
    algos: tuple[TunedAlgo, ...]
    devices: tuple[Device, ...] = ()
    notes: tuple[str, ...] = field(default=())

    # ---- JSON: fixed key order, one point per line, so that diffs of retuned tables read well

    def to_json(self) -> str:
        d = json.dumps
        lines = ["{", f'  "format": {d(FORMAT)},', f'  "library": {d(self.library)},',
                 f'  "key": {d(list(self.key))},']
        if self.notes:
            lines.append(f'  "notes": {d(list(self.notes))},')
        lines.append('  "algos": [')
        lines += [f'    {{"index": {a.index}, "info": {d(a.info)}, '
                  f'"fingerprint": {d(a.fingerprint)}}}' + ("," if i + 1 < len(self.algos) else "")
                  for i, a in enumerate(self.algos)]
        lines.append("  ],")
        lines.append('  "devices": [' + ("" if self.devices else "]"))
        for di, dev in enumerate(self.devices):
            sms = "" if dev.num_sms is None else f'"num_sms": {dev.num_sms}, '
            lines.append(f'    {{"name": {d(dev.name)}, "sm": {dev.sm}, {sms}"source": '
                         f'{d(dev.source)}, "points": [')
            for pi, p in enumerate(sorted(dev.points, key=_point_order)):
                times = [round(t, 3) if isinstance(t, float) else t for t in p.times_us]
                hints = "" if p.hints is None else f'"hints": {d(p.hints)}, '
                lines.append(f'      {{"key": {d(list(p.key))}, {hints}"times_us": '
                             f'{d(times, allow_nan=False)}, "winner": {d(p.winner)}}}'
                             + ("," if pi + 1 < len(dev.points) else ""))
            lines.append("    ]}" + ("," if di + 1 < len(self.devices) else ""))
        if self.devices:
            lines.append("  ]")
        lines.append("}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Table":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TableError(f"not valid JSON: {e}") from None
        try:
            return _from_dict(data)
        except (KeyError, TypeError, AttributeError) as e:
            what = f"lacks {e.args[0]!r}" if isinstance(e, KeyError) else str(e)
            raise TableError(f"malformed tuning table: {what}") from None

    def device(self, sm: int) -> Device | None:
        return next((d for d in self.devices if d.sm == sm), None)

    def with_device(self, dev: Device) -> "Table":
        """This table with `dev` replacing the device of the same SM (one device per SM)."""
        dev = Device(dev.name, dev.sm, dev.source, tuple(sorted(dev.points, key=_point_order)),
                     dev.num_sms)
        devices = [d for d in self.devices if d.sm != dev.sm] + [dev]
        return Table(self.library, self.key, self.algos,
                     tuple(sorted(devices, key=lambda d: d.sm)), self.notes)


def _int(v: Any, what: str, minimum: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or (minimum is not None and v < minimum):
        raise TableError(f"{what} must be an integer" + (f" >= {minimum}" if minimum is not None
                                                         else "") + f", got {v!r}")
    return v


def _from_dict(data: Any) -> Table:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else None
        raise TableError(f"format {got!r} is not {FORMAT!r}: not a rules_triton tuning table")
    unknown = sorted(set(data) - {"format", "library", "key", "algos", "devices", "notes"})
    if unknown:
        raise TableError(f"unknown field(s) {unknown}")
    library = data["library"]
    if not isinstance(library, str):
        raise TableError(f"library must be a string, got {library!r}")
    key = data["key"]
    if (not isinstance(key, list) or not key or not all(isinstance(k, str) for k in key)
            or len(set(key)) != len(key)):
        raise TableError(f"key must be a non-empty list of distinct argument names, got {key!r}")
    algos = []
    for i, a in enumerate(data["algos"]):
        if _int(a["index"], f"algos[{i}].index") != i:
            raise TableError(f"algos[{i}].index is {a['index']}; list the algos 0..N-1 in order")
        if not isinstance(a["info"], str) or not isinstance(a["fingerprint"], str):
            raise TableError(f"algos[{i}] needs string info and fingerprint")
        algos.append(TunedAlgo(i, a["info"], a["fingerprint"]))
    devices, sms = [], set()
    for di, dv in enumerate(data["devices"]):
        what = f"devices[{di}]"
        sm = _int(dv["sm"], f"{what}.sm", 10)
        if sm in sms:
            raise TableError(f"{what}: a second device with sm {sm}; keep one device per SM")
        sms.add(sm)
        if not isinstance(dv["name"], str):
            raise TableError(f"{what}.name must be a string")
        num_sms = dv.get("num_sms")
        if num_sms is not None:
            _int(num_sms, f"{what}.num_sms", 1)
        if dv.get("source", "tune") not in SOURCES:
            raise TableError(f"{what}.source {dv.get('source')!r} is not one of {SOURCES}")
        points, seen = [], set()
        for pi, p in enumerate(dv["points"]):
            pw = f"{what}.points[{pi}]"
            pkey = p["key"]
            if not isinstance(pkey, list) or len(pkey) != len(key):
                raise TableError(f"{pw}.key must hold {len(key)} integers ({', '.join(key)})")
            pkey = tuple(_int(v, f"{pw}.key", 0) for v in pkey)
            if (pkey, p.get("hints")) in seen:
                raise TableError(f"{pw}: key {list(pkey)} with hints {p.get('hints')!r} appears "
                                 "twice")
            seen.add((pkey, p.get("hints")))
            times = p.get("times_us", [])
            if not isinstance(times, list) or (times and len(times) != len(algos)):
                raise TableError(f"{pw}.times_us must list one entry per algo ({len(algos)})")
            for t in times:
                if not (t is None or isinstance(t, str) or
                        (isinstance(t, (int, float)) and not isinstance(t, bool) and t >= 0)):
                    raise TableError(f"{pw}.times_us: {t!r} is not a time, a reason or null")
            winner = p.get("winner")
            if winner is not None and not 0 <= _int(winner, f"{pw}.winner") < len(algos):
                raise TableError(f"{pw}.winner {winner} is not an algo index (0..{len(algos) - 1})")
            hints = p.get("hints")
            if hints is not None and (not isinstance(hints, str) or not all(
                    _HINT_TOKEN.match(t) for t in hints.split())):
                raise TableError(f"{pw}.hints must be a hint pattern such as 'a_ptr:16 M:1', "
                                 f"got {hints!r}")
            points.append(Point(pkey, tuple(float(t) if isinstance(t, int) else t for t in times),
                                winner, hints))
        devices.append(Device(dv["name"], sm, dv.get("source", "tune"),
                              tuple(sorted(points, key=_point_order)), num_sms))
    notes = data.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise TableError("notes must be a list of strings")
    return Table(library, tuple(key), tuple(algos), tuple(sorted(devices, key=lambda d: d.sm)),
                 tuple(notes))


def winner_of(times: Sequence[float | str | None]) -> int | None:
    """The fastest algo with a time; ties go to the lower index."""
    best = None
    for i, t in enumerate(times):
        if isinstance(t, float) and (best is None or t < times[best]):
            best = i
    return best


def read_table(path: str | Path) -> Table:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise TableError(f"cannot read {path}: {e.strerror}") from None
    return Table.from_json(text)


# ---- lookup (the reference for the generated C) -----------------------------------------------

# The selection model: the `neighbours` tuned points nearest the query vote for each algo with
# its slowdown there (log2 of its time over that point's best, in 1/256 octave, capped at
# SLOW_CAP: failed or unmeasured algos count as that slow), weighted by WEIGHT // (distance +
# distance_bias); the algo of the call class's portfolio (below) with the smallest sum is
# launched. The distance is L1 over the point's features (a SelectionModel's, below) plus the
# distance of the hint classes (triton_aot.tuning.call_hints: the pattern the call's variant was
# compiled for): class_token_penalty per hint one pattern has and the other lacks (M:16 alone
# changes little, another operand layout a lot), no_class_penalty to or from a call or point of
# no class. A query on a tuned point of its class launches that point's winner (the fastest
# portfolio algo there).
CLASS_PENALTY = 4 * Q  # between classes when the classes' hints are not known (choose's default)
SLOW_CAP = 4 * Q
WEIGHT = 1 << 24


@dataclass(frozen=True)
class Term:
    """sign * log2_q8 of key `key`'s value (tile 0), or of the number of `tile`-sized tiles
    that cover it."""
    sign: int
    key: int
    tile: int = 0


@dataclass(frozen=True)
class Feature:
    """weight * the sum of the terms: one coordinate of the selection's distance."""
    weight: int
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class SelectionModel:
    """How far a call is from a tuned point, and how many points vote. The generated C computes
    the same features from the same description (triton_aot.emit_c.c_library)."""
    name: str
    neighbours: int
    distance_bias: int
    class_token_penalty: int
    no_class_penalty: int
    gemm: bool  # features of a (rows, columns, reduction) key; else each key's log and products

    def features_of(self, num_keys: int) -> tuple[Feature, ...]:
        if self.gemm:
            return GEMM_FEATURES
        logs = tuple(Feature(1, (Term(1, k),)) for k in range(num_keys))
        return logs + tuple(Feature(1, tuple(Term(1, j) for j in range(k + 1)))
                            for k in range(1, num_keys))


# A key of three values is read as a GEMM's (M, N, K): output rows, output columns, reduction.
# What decides the fastest config there is the tile arithmetic, so the coordinates are the
# number of 64 x 64 and of 128 x 128 output tiles (weighted 8 and 4: wave quantization and tile
# padding, the configs' tile sizes), N and K (weighted 2: the weight matrix), the output's size
# M * N and N / K (its aspect). Chosen leaving whole models out of the committed tables and
# scoring bench/results/headroom.json's unseen layers (bench/tune/selection_lmo.py): on held-out
# models' layers it keeps 0.972x / 0.973x the oracle where the key logs kept 0.965x / 0.966x,
# and the tile counts are most of that (continuous log2 of M/64 in place of whole tiles: 0.969x).
# Two octaves per hint the classes differ in rather than one: an operand's alignment changes
# which tile wins (unaligned rows favour small tiles), so a point of another alignment is a poor
# witness. This was chosen after seeing the GPU's held-out models (row-major layers 0.863x ->
# 0.931x the oracle there; the tables' held-out models unchanged, headroom's 0.991x -> 0.980x)
# and measured on a fresh set after (bench/results/tune_fresh.md).
GEMM_FEATURES = (
    Feature(2, (Term(1, 1),)),
    Feature(2, (Term(1, 2),)),
    Feature(1, (Term(1, 0), Term(1, 1))),
    Feature(1, (Term(1, 1), Term(-1, 2))),
    Feature(8, (Term(1, 0, 64), Term(1, 1, 64))),
    Feature(4, (Term(1, 0, 128), Term(1, 1, 128))),
)
GEMM = SelectionModel("gemm tiles", neighbours=2, distance_bias=26, class_token_penalty=2 * Q,
                      no_class_penalty=8 * Q, gemm=True)
# Any other key: each key's log2 and the log2 of the products of the leading keys.
KEY_LOGS = SelectionModel("key logs", neighbours=4, distance_bias=Q // 4,
                          class_token_penalty=Q // 2, no_class_penalty=4 * Q, gemm=False)


def model_for(num_keys: int) -> SelectionModel:
    return GEMM if num_keys == 3 else KEY_LOGS


def features(model: SelectionModel, leads: Sequence[int]) -> tuple[int, ...]:
    """The selection's coordinates of a call or point whose keys have these lead9 values."""
    return tuple(f.weight * sum(t.sign * (log2_of_lead(leads[t.key]) if t.tile == 0
                                          else tiles_log2_q8(leads[t.key], t.tile))
                                for t in f.terms)
                 for f in model.features_of(len(leads)))


def query_features(model: SelectionModel, values: Sequence[int]) -> tuple[int, ...]:
    return features(model, [lead9(v) for v in values])


@dataclass(frozen=True)
class Row:
    """A point as the lookup sees it (and as the C table holds it)."""
    feats: tuple[int, ...]  # `features` of its keys
    hint_class: int         # index into the table's classes, -1 when the point has no hints
    winner: int
    slow: tuple[int, ...]   # per algo: log2(time / best time) in 1/256 octave, capped
    leads: tuple[int, ...] = ()  # lead9 of its key values (for `Waves`)


def classes(table: Table) -> list[str]:
    """The table's hint patterns, most hints first (the order the call's class is found in:
    the first one whose hints all hold, as the variants are tried)."""
    pats = {p.hints for d in table.devices for p in d.points if p.hints is not None}
    return sorted(pats, key=lambda h: (-len(h.split()), h))


@functools.lru_cache(maxsize=8)
def class_distances(table: Table, model: SelectionModel | None = None
                    ) -> tuple[tuple[int, ...], ...]:
    """[class + 1][class + 1] (0: no class): the distance `choose` adds between a call's and a
    point's hint classes (the selection model above)."""
    model = model or model_for(len(table.key))
    hints = [set(h.split()) for h in classes(table)]
    out = [[0] + [model.no_class_penalty] * len(hints)]
    for a in hints:
        out.append([model.no_class_penalty] + [model.class_token_penalty * len(a ^ b)
                                               for b in hints])
    return tuple(tuple(r) for r in out)


def slowdowns(p: Point, num_algos: int) -> tuple[int, ...]:
    times = [t for t in p.times_us if isinstance(t, float)]
    if not times:  # a manual point: only its winner is known
        return tuple(0 if a == p.winner else SLOW_CAP for a in range(num_algos))
    best = max(min(times), 1e-9)
    return tuple(min(SLOW_CAP, round(Q * math.log2(max(t, best) / best)))
                 if isinstance(t, float) else SLOW_CAP for t in p.times_us)


# Each hint class chooses among a few algos only, its portfolio: the algos added one at a time,
# each the one that most lowers the summed slowdown of the class's points (each point counting
# its best portfolio algo), until those points keep PORTFOLIO_KEEP of their best time
# (geometric mean) or the portfolio has PORTFOLIO_MAX algos. A tuned library compiles, through
# each hint pattern, only the algos the vote can pick there (triton_aot.tuning.tuning_reach): the full
# list in every pattern multiplies the build by the number of patterns for the last percent or
# two. A class without points of its own (a layout the table was not tuned on), and a call of no
# class, choose from the portfolio of all the device's points.
# 99% and 10 rather than 98% and 8: on layers of models the table never saw (headroom.json's
# unseen ones) the selection keeps 0.971x / 0.976x of the oracle instead of 0.934x / 0.947x,
# for 25 more compiles per matmul library (bench/results/selection_lmo.md)
PORTFOLIO_KEEP_Q = round(Q * math.log2(1 / 0.99))  # mean slowdown, 1/256 octave: 99% kept
PORTFOLIO_MAX = 10


def portfolio(slows: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The portfolio (sorted algo indices) of points with these slowdowns (`Row.slow`)."""
    if not slows:
        return ()
    num_algos = len(slows[0])
    chosen: list[int] = []
    best = [SLOW_CAP] * len(slows)  # per point: its slowdown on the chosen algos' best
    while len(chosen) < min(PORTFOLIO_MAX, num_algos):
        add = min((a for a in range(num_algos) if a not in chosen),
                  key=lambda a: (sum(min(b, s[a]) for b, s in zip(best, slows)), a))
        chosen.append(add)
        best = [min(b, s[add]) for b, s in zip(best, slows)]
        if sum(best) <= PORTFOLIO_KEEP_Q * len(slows):
            break
    return tuple(sorted(chosen))


@functools.lru_cache(maxsize=8)  # lookups repeat it per call; tables are immutable
def class_algos(table: Table, dev: Device) -> tuple[tuple[int, ...], ...]:
    """The algos a call of each class may be given on `dev`: index class + 1 (0: a call of no
    class), as the C table holds them."""
    index = {h: i for i, h in enumerate(classes(table))}
    slows: dict[int, list] = {}
    everything = []
    for p in dev.points:
        if p.winner is None:
            continue
        slow = slowdowns(p, len(table.algos))
        slows.setdefault(index.get(p.hints, -1), []).append(slow)
        everything.append(slow)
    shared = portfolio(everything)
    return tuple(portfolio(slows[c]) if slows.get(c) and c >= 0 else shared
                 for c in range(-1, len(index)))


@functools.lru_cache(maxsize=16)
def rows_of(table: Table, dev: Device, model: SelectionModel | None = None) -> tuple[Row, ...]:
    """The device's points that have a winner, in table order; a point's winner is the fastest
    algo of its class's portfolio there."""
    model = model or model_for(len(table.key))
    index = {h: i for i, h in enumerate(classes(table))}
    allowed = class_algos(table, dev)
    rows = []
    for p in dev.points:
        if p.winner is None:
            continue
        cls = index.get(p.hints, -1)
        slow = slowdowns(p, len(table.algos))
        rows.append(Row(query_features(model, p.key), cls,
                        min(allowed[cls + 1], key=lambda a: (slow[a], a)), slow,
                        tuple(lead9(v) for v in p.key)))
    return tuple(rows)


def class_of(table: Table, call_hints: str | None) -> int:
    """The call's class: the first of the table's patterns whose hints the call has; -1 when
    none does or the call's hints are unknown."""
    if call_hints is None:
        return -1
    have = set(call_hints.split())
    for i, h in enumerate(classes(table)):
        if set(h.split()) <= have:
            return i
    return -1


# Wave quantization. A persistent GEMM algo launches min(NUM_SMS, tiles) programs that walk the
# tiles NUM_SMS apart (its grid says so: triton_aot.core.grid.sm_bound_tiles), so its time goes
# by whole waves: 133 tiles on 132 SMs take two, 126 take one. A neighbour a few tiles away on the
# other side of a wave boundary is then a poor witness for that algo, and nearest points cannot
# see it (the tile-count features are continuous). So for such algos each neighbour's slowdown
# is corrected by the difference of the algo's wave excess, log2(waves * SMs / max(tiles, SMs))
# in 1/256 octave, at the call and at the neighbour, weighted one half against the slowdowns
# (the vote sums 2 * slowdown + that difference). Other algos (one program per tile, several
# resident per SM) fill partial waves with other programs and get no correction. The SM count is
# the tuning GPU's (the device's num_sms): the slowdowns were timed there. Scored on the GPU's
# per-config times of held-out layers (bench/tune/selection_lmo.py, Linear layout): the fresh
# set 0.975x -> 0.988x the oracle, none below 0.85x (Falcon-7B's qkv at 778 x 4672, 133 tiles of
# 128 x 256, was 0.66x), the first held-out set 0.969x -> 0.970x, headroom's 0.980x -> 0.982x,
# the tables' held-out models 0.971x -> 0.972x; no row-major pick changes. NAME_auto measured
# on the fresh set: 0.990x / 0.987x the oracle (bench/results/tune_fresh.md).
@dataclass(frozen=True)
class Waves:
    """The SM count of the device's timings and, per algo, its tile (rows, columns) when its
    programs the SM count bounds (None: one program per tile)."""
    num_sms: int
    tiles: tuple[tuple[int, int] | None, ...]


TILE_COUNT_CAP = 1 << 31  # per dimension: the product stays in int64


def wave_excess(tile: tuple[int, int], leads: Sequence[int], num_sms: int) -> int:
    """log2(whole waves * SMs / max(tiles, SMs)) in 1/256 octave (>= 0) of `tile` over the
    output of a (M, N, ...) key with these lead9 values (their kept values, as the features)."""
    count = (min((kept_value(leads[0]) - 1) // tile[0] + 1, TILE_COUNT_CAP)
             * min((kept_value(leads[1]) - 1) // tile[1] + 1, TILE_COUNT_CAP))
    waves = (count + num_sms - 1) // num_sms
    return log2_q8(waves * num_sms) - log2_q8(max(count, num_sms))


def waves_of(table: Table, dev: Device, grids: Sequence[Sequence[str] | None]) -> Waves | None:
    """The `Waves` of a GEMM-keyed table's device, from each algo's grid (a variant record's
    `grid` source, None when unknown); None when nothing is SM-bound or the SM count unknown."""
    from triton_aot.core.grid import sm_bound_tiles

    if not model_for(len(table.key)).gemm or not dev.num_sms:
        return None
    tiles = tuple(sm_bound_tiles(g, table.key[0], table.key[1]) if g else None for g in grids)
    return Waves(dev.num_sms, tiles) if any(tiles) else None


def choose(rows: Sequence[Row], qf: Sequence[int], hint_class: int, default: int,
           model: SelectionModel, allowed: Sequence[int] | None = None,
           class_dist: Sequence[Sequence[int]] | None = None,
           class_penalty: int = CLASS_PENALTY, waves: Waves | None = None,
           leads: Sequence[int] = ()) -> int:
    """The model above on a query's features (`query_features`; integer arithmetic, as the C
    does it) and the rows `rows_of` made with the same model; the vote picks among `allowed`
    (the call class's portfolio; None: every algo). `class_dist` is the table's
    `class_distances`; None: `class_penalty` between any two classes. With `waves`, the
    SM-bound algos' votes are corrected by their wave excess (`leads`: the query's lead9s)."""
    if not rows:
        return default
    near: list[tuple[int, int]] = []  # (distance, row index), nearest first, table order on ties
    for i, r in enumerate(rows):
        d = sum(abs(a - b) for a, b in zip(qf, r.feats))
        if class_dist is not None:
            d += class_dist[hint_class + 1][r.hint_class + 1]
        elif r.hint_class != hint_class:
            d += class_penalty
        near.append((d, i))
    near.sort()
    near = near[:model.neighbours]
    if near[0][0] == 0:
        return rows[near[0][1]].winner
    num_algos = len(rows[0].slow)
    score = [0] * num_algos
    bound = [(a, t) for a, t in enumerate(waves.tiles) if t] if waves else []
    at_query = {a: wave_excess(t, leads, waves.num_sms) for a, t in bound}
    for d, i in near:
        w = WEIGHT // (d + model.distance_bias)
        for a, s in enumerate(rows[i].slow):
            score[a] += w * 2 * s
        for a, t in bound:
            score[a] += w * (at_query[a] - wave_excess(t, rows[i].leads, waves.num_sms))
    return min(range(num_algos) if allowed is None else allowed, key=lambda a: (score[a], a))


def lookup(table: Table | None, sm: int, query: Sequence[int], default: int,
           call_hints: str | None = None,
           grids: Sequence[Sequence[str] | None] | None = None) -> int:
    """The algo NAME_auto launches for `query` (the key arguments' values) on an `sm` device,
    for a call with the JIT hint pattern `call_hints` (triton_aot.tuning.call_hints spelling).
    `grids`: each algo's launch grid (its variant records' `grid`), as the link tool reads
    them: the SM-bound algos' waves (`Waves`); None sees no waves."""
    dev = table.device(sm) if table else None
    rows = rows_of(table, dev) if dev else []
    if not rows:
        return default
    model = model_for(len(table.key))
    cls = class_of(table, call_hints)
    return choose(rows, query_features(model, query), cls, default, model,
                  allowed=class_algos(table, dev)[cls + 1],
                  class_dist=class_distances(table),
                  waves=waves_of(table, dev, grids) if grids is not None else None,
                  leads=tuple(lead9(v) for v in query))
