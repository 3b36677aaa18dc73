"""The library description (format rules_triton.library.v2): what the link step built, for the
stages after it. The torch-op generator and the tuner read a library through this one record,
never through its header's text, its symbol names or its variant records.

    {
      "format": "rules_triton.library.v2",
      "name": "matmul",                      # the C API prefix (c_name)
      "header": "matmul.h",                  # basename of the public header
      "backend": "cuda",                     # or "hip"
      "functions": [                         # the launching C API, in the header's order
        {"name": "matmul", "entry": "algo", "params": [
           {"name": "stream", "c_type": "CUstream", "kernel_param": null, "type": null},
           {"name": "a_ptr", "c_type": "CUdeviceptr", "kernel_param": "a_ptr",
            "type": {"kind": "pointer", "elem": "fp16", "const": false}},
           ..., {"name": "algo_id", "c_type": "int", "kernel_param": null, "type": null}]},
        {"name": "matmul_default", "entry": "default", ...}, {"name": "matmul_auto", ...}],
      "algos": [{"index": 0, "info": "BLOCK_M=128 ... num_warps=8", "fingerprint": "3f1c..."}],
      "specializations": [[["a_ptr", 16], ["M", 16]], []],   # hint patterns, by index
      "variants": [{"symbol": "matmul_a0_s0_sm90", "algo": 0, "specialization": 0,
                    "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}, ...],
      "tuning": {"key": ["M", "N", "K"], "default_algo": 0, "label": "//kernels:matmul",
                 "table": "kernels/matmul.tuning.json"}            # or null: no NAME_auto
    }

A parameter's `name` is its C name in the header (abi.c_param_name: `trt_` + a name C cannot
take), `kernel_param` the kernel parameter it carries (several C values for a tensor
descriptor), `type` that parameter's signature type (core/arg_type.py's JSON form; a variant's
`target` is core/target.py's). `entry` says which function it is: "algo"
(NAME(stream, args..., algo_id)), "default" (NAME_default) or "auto" (NAME_auto, the tuned
dispatch). The link tool writes it (`--out_library`); `read_library` is its one reader.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from triton_aot.core.arg_type import ArgType
from triton_aot.core.errors import UserError
from triton_aot.core import target as target_grammar
from triton_aot.core.signature import parse_type
from triton_aot.core.target import Target

FORMAT = "rules_triton.library.v2"
ENTRIES = ("algo", "default", "auto")
BACKENDS = ("cuda", "hip")


class LibraryError(UserError):
    """A library description that is not one this rules_triton writes."""


@dataclass(frozen=True)
class Param:
    """One C parameter of a launching function."""

    name: str  # its C name in the header
    c_type: str  # "CUstream", "CUdeviceptr", "int32_t", "int", ...
    kernel_param: str | None  # the kernel parameter it carries; None: the stream or algo_id
    type: ArgType | None  # that kernel parameter's signature type ("*fp16", "tensordesc<...>")

    def __post_init__(self):
        if self.type is not None:  # a type given as text (a hand-built library) is parsed once
            object.__setattr__(self, "type", parse_type(self.type, f"parameter {self.name!r}"))


@dataclass(frozen=True)
class Function:
    """One launching function of the C API."""

    name: str
    entry: str  # one of ENTRIES
    params: tuple[Param, ...]


@dataclass(frozen=True)
class Algo:
    index: int  # algo_id
    info: str  # NAME_get_algo_info(index)
    fingerprint: str  # what makes it this algo (tuning_table.fingerprint)


@dataclass(frozen=True)
class Variant:
    symbol: str
    algo: int
    specialization: int  # index into Library.specializations
    target: Target

    def __post_init__(self):
        if not isinstance(self.target, Target):  # a hand-built library's "cuda:90"
            object.__setattr__(self, "target", target_grammar.parse(self.target))


@dataclass(frozen=True)
class Tuning:
    """NAME_auto's settings, as the rule has them (what the tuning command needs)."""

    key: tuple[str, ...]  # the integer C API arguments that choose the algo
    default_algo: int
    label: str | None  # the library's Bazel label (the retune command's argument)
    table: str | None  # where the table lives in its workspace (also before it exists)


Hints = tuple[tuple[str, int], ...]  # (argument, 16 or 1): hint_patterns' form


@dataclass(frozen=True)
class Library:
    name: str
    header: str
    backend: str
    functions: tuple[Function, ...]
    algos: tuple[Algo, ...]
    specializations: tuple[Hints, ...]
    variants: tuple[Variant, ...]
    tuning: Tuning | None

    def function(self, entry: str) -> Function | None:
        """The function of an entry kind ("algo", "default", "auto"), or None without one."""
        return next((f for f in self.functions if f.entry == entry), None)

    def to_json(self) -> str:
        data = {"format": FORMAT, **asdict(self)}
        for f, function in zip(data["functions"], self.functions):
            for p, param in zip(f["params"], function.params):
                p["type"] = param.type.to_json() if param.type is not None else None
        return json.dumps(data, indent=1, sort_keys=False) + "\n"


def read_library(path: str | Path) -> Library:
    """The description at `path`, checked; LibraryError (one line naming the file) when it is
    not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LibraryError(f"{path}: cannot read the library description: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else None
        raise LibraryError(f"{path}: format {got!r} is not {FORMAT!r}: not a library "
                           "description of this rules_triton (rebuild the library)")
    try:
        return _from_dict(data)
    except (KeyError, TypeError, ValueError) as e:
        what = f"lacks {e.args[0]!r}" if isinstance(e, KeyError) else str(e)
        raise LibraryError(f"{path}: malformed library description: {what}") from None


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{what} {v!r} is not an integer >= 0")
    return v


def _str(v: Any, what: str, optional: bool = False) -> str | None:
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise ValueError(f"{what} {v!r} is not a string")
    return v


def _type(v: Any) -> ArgType | None:
    if v is None:
        return None
    try:
        return ArgType.from_json(v, "parameter type")
    except UserError as e:
        raise ValueError(str(e)) from None


def _target(v: Any) -> Target:
    try:
        return Target.from_dict(v)
    except UserError as e:
        raise ValueError(str(e)) from None


def _from_dict(d: dict) -> Library:
    if d["backend"] not in BACKENDS:
        raise ValueError(f"backend {d['backend']!r} is not one of {', '.join(BACKENDS)}")
    functions = []
    for f in d["functions"]:
        if f["entry"] not in ENTRIES:
            raise ValueError(f"function entry {f['entry']!r} is not one of {', '.join(ENTRIES)}")
        params = tuple(Param(_str(p["name"], "parameter name"), _str(p["c_type"], "c_type"),
                             _str(p["kernel_param"], "kernel_param", True),
                             _type(p["type"])) for p in f["params"])
        functions.append(Function(_str(f["name"], "function name"), f["entry"], params))
    algos = tuple(Algo(_int(a["index"], "algo index"), _str(a["info"], "algo info"),
                       _str(a["fingerprint"], "fingerprint")) for a in d["algos"])
    if [a.index for a in algos] != list(range(len(algos))):
        raise ValueError(f"algo indices {[a.index for a in algos]} are not 0..N-1")
    specializations = tuple(
        tuple((_str(name, "hint argument"), hint) for name, hint in pattern)
        for pattern in d["specializations"])
    for pattern in specializations:
        if any(hint not in (1, 16) for _, hint in pattern):
            raise ValueError(f"hint pattern {pattern!r} has a hint other than 1 or 16")
    variants = tuple(Variant(_str(v["symbol"], "symbol"), _int(v["algo"], "variant algo"),
                             _int(v["specialization"], "specialization"),
                             _target(v["target"])) for v in d["variants"])
    for v in variants:
        if v.algo >= len(algos) or v.specialization >= len(specializations):
            raise ValueError(f"variant {v.symbol} names algo {v.algo} or specialization "
                             f"{v.specialization}, which the library does not have")
    tuning = None
    if d["tuning"] is not None:
        t = d["tuning"]
        tuning = Tuning(tuple(_str(k, "tuning key") for k in t["key"]),
                        _int(t["default_algo"], "default_algo"),
                        _str(t["label"], "tuning label", True), _str(t["table"], "table", True))
    return Library(_str(d["name"], "name"), _str(d["header"], "header"), d["backend"],
                   tuple(functions), algos, specializations, variants, tuning)
