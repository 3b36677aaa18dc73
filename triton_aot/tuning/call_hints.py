"""The hints Triton's JIT specialises a call on, and the specializations they call for.

The JIT compiles one kernel per pattern of its arguments, each argument on its own: a pointer is
`:16` when its address is 16-byte aligned, an integer `:1` when it equals one and `:16` when it
is divisible by 16 (triton/runtime/jit.py, `specialize_impl`). A library built ahead of time has
only the variants its BUILD lists, and a call whose pattern has no variant falls to one with
fewer hints (at worst the generic one, with no vectorised loads). So the variants of a tuned
library are derived from the calls it is tuned on:

- on the build machine, `python3 -m triton_aot.tuning.call_hints` runs the library's `tuning_inputs`
  (`make_args` for every shape of SHAPES) on meta tensors with a CPU torch, takes each call's JIT
  pattern and writes them, most specific first and the generic variant last, as
  `SPECIALIZATIONS` in `NAME.tuning_hints.bzl` (the rule's `tuning` output group; `tools/tune`
  copies it beside the table, where the BUILD file loads it);
- on the GPU machine, the tuning command takes the same pattern from the real tensors, refuses a
  call whose pattern the packed library lacks, and records it in the table's point (`hints`);
- the link tool fails the build when a point of the table has a pattern that no variant has,
  and NAME_auto picks among the points of the call's own pattern (triton_aot.contract.tuning_table).

Meta tensors have no address; a tensor's is taken as its storage offset in bytes, the allocation
counted as aligned (CUDA's caching allocator aligns every block to 512 bytes).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from absl import flags

from triton_aot.contract.hint_patterns import Hints, dispatch_order, of_call, spelling
from triton_aot.core import cli
from triton_aot.core.errors import UserError

class _MetaTorch:
    """torch, with every tensor factory making meta tensors: `make_args` asks for
    device="cuda", and a CPU torch has none (nor is memory needed to know a pattern)."""

    FACTORIES = frozenset({"empty", "empty_strided", "zeros", "ones", "full", "rand", "randn",
                           "randint", "arange", "tensor", "as_strided", "eye", "linspace"})

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name: str):
        attr = getattr(self._torch, name)
        if name in self.FACTORIES:
            return functools.partial(_on_meta, attr)
        return attr


def _on_meta(factory, *args, **kwargs):
    kwargs["device"] = "meta"
    kwargs.pop("pin_memory", None)
    return factory(*args, **kwargs)


def load_inputs(path: Path):
    """The library's `tuning_inputs` file as a module (KEY, SHAPES, DTYPES, make_args; optionally
    CALLERS and check)."""
    spec = importlib.util.spec_from_file_location("tuning_inputs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for attr in ("KEY", "SHAPES", "DTYPES", "make_args"):
        if not hasattr(mod, attr):
            raise UserError(f"{path} defines no {attr}; see triton_aot/tuning/tune.py")
    return mod


@dataclass(frozen=True)
class Call:
    """One call of a tuning inputs file: the key values, and the other keyword arguments of
    `make_args` (how a caller lays out its operands, say `layout="nt"`)."""
    key: tuple[int, ...]
    options: tuple[tuple[str, Any], ...] = ()

    def kwargs(self, key_names: Sequence[str]) -> dict[str, Any]:
        return dict(zip(key_names, self.key)) | dict(self.options)

    def label(self) -> str:
        return "x".join(map(str, self.key)) + "".join(f" {k}={v}" for k, v in self.options)


def calls_of(entries: Iterable, key_names: Sequence[str], what: str) -> list[Call]:
    """SHAPES or CALLERS entries as calls: each is the key values, optionally followed by a dict
    of further make_args keyword arguments, e.g. (4096, 4096, 4096, {"layout": "nt"})."""
    out = []
    for entry in entries:
        entry = tuple(entry)
        options = entry[len(key_names):]
        if (len(entry) < len(key_names) or len(options) > 1
                or (options and not isinstance(options[0], dict))
                or not all(isinstance(v, int) and not isinstance(v, bool)
                           for v in entry[:len(key_names)])):
            raise UserError(f"{what} entry {entry!r}: give the {len(key_names)} key values "
                            f"({', '.join(key_names)}), optionally followed by a dict of "
                            "make_args keyword arguments")
        out.append(Call(entry[:len(key_names)],
                        tuple(sorted(options[0].items())) if options else ()))
    return out


def tuning_calls(inputs) -> list[Call]:
    """The calls the tuning command times (SHAPES)."""
    return calls_of(inputs.SHAPES, inputs.KEY, "SHAPES")


def pattern_calls(inputs) -> list[Call]:
    """The calls the library gets variants for: the tuned ones (SHAPES) and those of callers
    it is not tuned on (CALLERS, optional), which run the variant of their own pattern with the
    algo the table picks from its nearest points."""
    return tuning_calls(inputs) + calls_of(getattr(inputs, "CALLERS", ()), inputs.KEY, "CALLERS")


def patterns_of_inputs(inputs, record, library: str) -> list[Hints]:
    """The JIT pattern of every call of the inputs (SHAPES and CALLERS), on meta tensors, in
    dispatch order."""
    import torch

    if library not in inputs.DTYPES:
        raise UserError(f"--inputs: DTYPES has no entry for {library}")
    meta = _MetaTorch(torch)
    dtype = getattr(torch, inputs.DTYPES[library])
    patterns = set()
    for call in pattern_calls(inputs):
        kw = call.kwargs(inputs.KEY)
        try:
            values = inputs.make_args(meta, dtype, **kw)
        except Exception as e:  # the user's make_args: say which call, not where in torch
            raise UserError(f"--inputs: make_args({', '.join(f'{k}={v!r}' for k, v in kw.items())}) "
                            f"failed on meta tensors: {type(e).__name__}: {e}") from None
        patterns.add(of_call(record, values))
    return dispatch_order(patterns | {()}, record.c_args)


def bzl_text(patterns: Sequence[Hints], library: str, inputs_name: str,
             specialization_algos: dict[str, list[int]] | None = None) -> str:
    lines = [f'"""Generated by python3 -m triton_aot.tuning.call_hints from {inputs_name}: the hint',
             f"patterns Triton's JIT would specialise {library}'s tuning calls and callers on, most specific",
             "first, then the generic variant. Do not edit: tools/tune rewrites it, and the build",
             'fails when the tuning table holds a pattern that is missing here."""',
             "", "SPECIALIZATIONS = ["]
    lines += [f'    "{spelling(p)}",' for p in patterns]
    lines.append("]")
    if specialization_algos is not None:
        lines += ["", "# The algos NAME_auto can launch through each pattern, by the tuning table",
                  "# (triton_aot.tuning.tuning_reach); the generic variant has every algo.",
                  "SPECIALIZATION_ALGOS = {"]
        # strings: the rule's attribute is a string_list_dict
        lines += [f'    "{p}": [' + ", ".join(f'"{i}"' for i in a) + "],"
                  for p, a in specialization_algos.items()]
        lines.append("}")
    return "\n".join(lines) + "\n"


def _define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("inputs", None, "The library's tuning_inputs file.", flag_values=fv)
    flags.DEFINE_string("record", None, "One variant record of the library (its C arguments).",
                        flag_values=fv)
    flags.DEFINE_string("library", None, "The library's C name (the DTYPES entry).",
                        flag_values=fv)
    flags.DEFINE_string("out_bzl", None, "The .bzl to write (SPECIALIZATIONS).", flag_values=fv)
    flags.DEFINE_string("tuning", None, "The library's tuning table: also write the algos each "
                        "pattern keeps (SPECIALIZATION_ALGOS).", flag_values=fv)
    flags.DEFINE_integer("tuning_default_algo", 0, "The library's tuning_default_algo.",
                         flag_values=fv)


def _run(fv: flags.FlagValues, rest: list[str]) -> None:
    from triton_aot.contract import record_reader

    cli.require(fv, "inputs", "record", "library", "out_bzl")
    record = record_reader.read_json(Path(fv.record).read_text(encoding="utf-8"))
    inputs = load_inputs(Path(fv.inputs))
    patterns = patterns_of_inputs(inputs, record, fv.library)
    algos = None
    if fv.tuning:
        from triton_aot.contract import tuning_table as tuning
        from triton_aot.tuning import tuning_reach
        algos = tuning_reach.specialization_algos(tuning.read_table(fv.tuning), [
            spelling(p) for p in patterns], fv.tuning_default_algo)
    Path(fv.out_bzl).write_text(bzl_text(patterns, fv.library, Path(fv.inputs).name, algos),
                                encoding="utf-8")


TOOL = cli.Tool(
    module="triton_aot.tuning.call_hints",
    usage="python3 -m triton_aot.tuning.call_hints --inputs=TUNING_INPUTS.py --record=VARIANT.json "
          "--library=C_NAME --out_bzl=NAME.tuning_hints.bzl",
    define_flags=_define_flags,
    run=_run,
)


def main(argv=None) -> int:
    return cli.main(TOOL, argv)


if __name__ == "__main__":
    sys.exit(main())
