"""Which algos NAME_auto can launch through each specialization of a tuned library.

A tuned library compiles every algo for every hint pattern (`specializations`), but NAME_auto
only launches, for a call of hint class c, an algo of c's portfolio (triton_aot.contract.tuning_table,
`class_algos`: a few algos per class, chosen from the table's measurements; `choose` votes among
them). This module computes, per non-generic pattern, the algos that can reach it: the rule
compiles only those there (`specialization_algos`, written into NAME.tuning_hints.bzl by
triton_aot.tuning.call_hints), and the generic variant keeps every algo, so `NAME(..., algo_id)` and a
call whose algo a pattern lacks still run (the dispatcher launches the first variant of that algo
whose hints hold, in the dispatch order: at worst the generic one; docs/design.md, "Tuning
tables").

A call launches pattern S's variant when S is the first pattern (dispatch order) whose hints
hold. A call of class c can launch S only if S's and c's hints can hold together (no argument
both `:1` and `:16`), no class before c and no pattern before S hold for a call with just those
hints (more hints only make an earlier one hold). S keeps the union of c's portfolios (on every
device of the table) over those c, and the tuning_default_algo (what a device the table lacks
gets). So whenever the vote picks algo a for a call, a is compiled in the call's own pattern:
pruning changes no launch of NAME_auto.
"""

from __future__ import annotations

from typing import Sequence

from triton_aot.contract import tuning_table as tuning

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


def reach(table: tuning.Table, hint_class: int) -> set[int]:
    """The algos `choose` can return for calls of `hint_class` on any of the table's devices:
    the class's portfolio on each."""
    out: set[int] = set()
    for dev in table.devices:
        if tuning.rows_of(table, dev):
            out |= set(tuning.class_algos(table, dev)[hint_class + 1])
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
