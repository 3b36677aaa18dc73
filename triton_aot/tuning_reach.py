"""Which algos NAME_auto can launch through each specialization of a tuned library.

A tuned library compiles every algo for every hint pattern (`specializations`), but NAME_auto
only launches the algo the table's vote picks for the call's hint class (triton_aot.tuning,
`choose`): most (algo, pattern) variants can never be reached that way. This module computes,
per non-generic pattern, the algos that can: the rule compiles only those there
(`specialization_algos`, written into NAME.tuning_hints.bzl by triton_aot.call_hints), and the
generic variant keeps every algo, so `NAME(..., algo_id)` and a call whose algo a pattern lacks
still run (the dispatcher launches the first variant of that algo whose hints hold, in the
dispatch order: at worst the generic one; docs/design.md, "Tuning tables").

The model, per device of the table and per hint class c of a call (tuning.classes, or -1: none
holds):

- reach(c): the algos `choose` returns for a call of class c: every tuned point's own winner
  (a query on a point of its class takes it), and the vote at every tuned point's key and at
  every point of a grid over the key space in log2 steps of STEP (1/2 octave; on the committed
  fp16 matmul table a 1/4-octave grid gives the same set for its largest class, 832 points)
  from 0 to 2 octaves past the largest tuned value of each key, then at 1, 2, 4, ... 32 octaves
  further (past every point the neighbours' order along that key no longer changes, only their
  distances grow); a key that c hints `:1` takes only 1 (log2 0), a key it hints `:16` only 0
  or >= 16. The tuning_default_algo is in every set: it is what a device the table lacks gets.
- a call launches pattern S's variant when S is the first pattern (dispatch order) whose hints
  hold. A call of class c can launch S only if S's and c's hints can hold together (no argument
  both `:1` and `:16`), no class before c and no pattern before S hold for a call with just those
  hints (more hints only make an earlier one hold). S keeps the union of reach(c) over those c.

So whenever the vote picks algo a for a call, a is compiled in the call's own pattern: pruning
changes no launch of NAME_auto. The grid is a sampling (conservative only up to its step); the
tests check the C lookup against `choose` (tests/link/test_tuning.py) and the fallback of a call
whose algo a pattern lacks.
"""

from __future__ import annotations

from typing import Sequence

from triton_aot import tuning

STEP = tuning.Q // 2  # the grid's step over each key: 1/2 octave
MARGIN = 2 * tuning.Q  # the dense grid's reach past the largest tuned value of a key
FAR_OCTAVES = (1, 2, 4, 8, 16, 32)  # then single samples this many octaves past that
MAX_LOG = 63 * tuning.Q  # log2_q8 of the largest int64
_CHUNK = 1 << 22  # (call, point) distances per numpy step: bounds the memory


def _hints(pattern: str) -> dict[str, str]:
    return dict(token.partition(":")[::2] for token in pattern.split())


def _holds(pattern: str, have: dict[str, str]) -> bool:
    return all(have.get(arg) == hint for arg, hint in _hints(pattern).items())


def _together(a: str, b: str) -> dict[str, str] | None:
    """The hints of a call that has both patterns' hints, or None when no call can."""
    out = _hints(a)
    for arg, hint in _hints(b).items():
        if out.setdefault(arg, hint) != hint:
            return None
    return out


def key_grid(rows: Sequence[tuning.Row], k: int, hint: str | None) -> list[int]:
    """The log2_q8 values the grid samples key k at, for a class that hints it `hint`."""
    top = max((r.logs[k] for r in rows), default=0) + MARGIN
    values = set(range(0, top + 1, STEP)) | {min(MAX_LOG, top + o * tuning.Q) for o in FAR_OCTAVES}
    return sorted(v for v in values if _fits(v, hint))


def _fits(log: int, hint: str | None) -> bool:
    """Whether a key value with this log2_q8 can have the class's hint (`:1`: the value 1;
    `:16`: 0, a negative multiple, or >= 16)."""
    if hint == "1":
        return log == 0
    return hint != "16" or log == 0 or log >= 4 * tuning.Q


def _pick(d, slow, winner) -> set[int]:
    """The algos `choose` picks for calls at distances `d` (numpy, (calls, points), the class
    penalty included; the same integer arithmetic)."""
    import numpy as np

    n = d.shape[1]
    near = min(tuning.NEIGHBOURS, n)
    # nearest first, table order on ties: one sort key per (distance, point)
    key = d.astype(np.int64) * n + np.arange(n, dtype=np.int64)[None, :]
    if near < n:
        key = np.partition(key, near - 1, axis=1)[:, :near]
    key = np.sort(key, axis=1)
    dist, idx = key // n, key % n
    weight = tuning.WEIGHT // (dist + tuning.DISTANCE_BIAS)                # (calls, near)
    score = np.einsum("qn,qna->qa", weight, slow[idx])
    pick = np.argmin(score, axis=1)  # the lowest algo on ties, as choose
    pick = np.where(dist[:, 0] == 0, winner[idx[:, 0]], pick)
    return set(np.unique(pick).tolist())


def _votes(rows: Sequence[tuning.Row], key: Sequence[str], hint_class: int,
           hinted: dict[str, str]) -> set[int]:
    """The algos `choose` returns for the sampled calls of a class: the grid's points, then the
    tuned points' own keys."""
    import numpy as np

    logs = np.array([r.logs for r in rows], dtype=np.int32)              # (R, K)
    penalty = np.array([0 if r.hint_class == hint_class else tuning.CLASS_PENALTY for r in rows],
                       dtype=np.int32)
    slow = np.array([r.slow for r in rows], dtype=np.int64)              # (R, A)
    winner = np.array([r.winner for r in rows], dtype=np.int64)
    n = len(rows)
    # The grid is a product: a call's distance is a sum of per-key parts |q_k - r_k|.
    parts = [np.abs(np.array(key_grid(rows, k, hinted.get(name)), dtype=np.int32)[:, None]
                    - logs[None, :, k]) for k, name in enumerate(key)]
    tail = penalty[None, :]
    for p in parts[1:]:
        tail = (tail[:, None, :] + p[None, :, :]).reshape(-1, n)
    out: set[int] = set()
    per = max(1, _CHUNK // (n * tail.shape[0]))
    for lo in range(0, parts[0].shape[0], per):
        d = (parts[0][lo:lo + per, None, :] + tail[None, :, :]).reshape(-1, n)
        out |= _pick(d, slow, winner)
    own = np.array([r.logs for r in rows
                    if all(_fits(v, hinted.get(name)) for v, name in zip(r.logs, key))],
                   dtype=np.int32).reshape(-1, len(key))
    if len(own):
        out |= _pick(np.abs(own[:, None, :] - logs[None, :, :]).sum(axis=2) + penalty[None, :],
                     slow, winner)
    return out


def reach(table: tuning.Table, hint_class: int) -> set[int]:
    """The algos `choose` returns for calls of `hint_class` on any of the table's devices."""
    classes = tuning.classes(table)
    hinted = _hints(classes[hint_class]) if hint_class >= 0 else {}
    out: set[int] = set()
    for dev in table.devices:
        rows = tuning.rows_of(table, dev)
        if rows:
            out |= {r.winner for r in rows if r.hint_class == hint_class}
            out |= _votes(rows, table.key, hint_class, hinted)
    return out


def specialization_algos(table: tuning.Table, patterns: Sequence[str], default_algo: int
                         ) -> dict[str, list[int]]:
    """Per non-generic pattern (`patterns` in dispatch order, call_hints spelling), the algos
    NAME_auto can launch through it (module docstring), ascending."""
    classes = tuning.classes(table)
    memo: dict[int, set[int]] = {}
    out = {}
    for si, spec in enumerate(patterns):
        if not spec:
            continue  # the generic variant keeps every algo
        algos = {default_algo}
        for c in range(-1, len(classes)):
            have = _together(spec, classes[c]) if c >= 0 else _hints(spec)
            if have is None or any(_holds(h, have) for h in classes[:c if c >= 0 else None]):
                continue
            if any(_holds(p, have) for p in patterns[:si]):
                continue
            if c not in memo:
                memo[c] = reach(table, c)
            algos |= memo[c]
        out[spec] = sorted(algos)
    return out
