"""The flags of the tuning command that the build machine takes too, defined once.

`python3 -m triton_aot.tuning.tune BUNDLE FLAGS` (the GPU machine) defines them as absl flags;
`tools/tune LABEL FLAGS` and `bazel run @rules_triton//tools:tune ... -- DIR FLAGS` (the build
machine, where neither absl nor a GPU is at hand) read them with `parse`, check them with
`check` before anything is built or packed, copy the model's config.json into the bundle and
write them into the bundle's tuning command (tools/tune_bundle.py):

    TuneFlags                       the flags, one typed field each (type, default, help)
    define(fv)                      as absl flags, for the tuning command
    from_absl(fv)                   the parsed absl flags as a TuneFlags
    parse(args)                     (TuneFlags, the other arguments), without absl
    describe()                      the flags' help, for the build machine's tools
    TuneFlags.argv()                back to arguments: those not at their default, in field order
    check(flags, key)               the model to tune (layers, batch sizes), or None for SHAPES;
                                    every refusal one UserError naming the flag and the fix

Only what the user chooses is here; where the table goes (--out) and the shards' internal flags
belong to the tuning command alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Optional, Sequence

from triton_aot.core.errors import UserError
from triton_aot.tuning import model_shapes

MODEL_KEY = ("M", "N", "K")


def _flag(kind: type, default, help_text: str, lower_bound: int | None = None):
    return field(default=default,
                 metadata={"kind": kind, "help": help_text, "lower_bound": lower_bound})


@dataclass(frozen=True)
class TuneFlags:
    reps: int = _flag(int, 10, "Timed batches per algo and shape.", 1)
    budget_s: Optional[float] = _flag(float, None, "Stop measuring new shapes after this many "
                                      "seconds.")
    shapes: Optional[str] = _flag(str, None, "Only these shapes, e.g. 4096x4096x4096,1x4096x4096; "
                                  "the table keeps this GPU's other points.")
    missing_only: bool = _flag(bool, False, "Only the calls whose (shape, variant) the table has "
                               "no point for on this GPU (new SHAPES entries, or a run cut short "
                               "by --budget_s); the table keeps its other points.")
    layers: Optional[str] = _flag(str, None, "Tune a model's linear layers instead of SHAPES: "
                                  "their weights' NxK (torch.nn.Linear: y = x @ W.t()), e.g. "
                                  "4096x4096,1024x4096,14336x4096,4096x14336.")
    model_config: Optional[str] = _flag(str, None, "Tune the linear layers of the model of this "
                                        "Hugging Face config.json (q, k/v, qkv, o, gate/up, "
                                        "gate_up, down, MoE experts, lm_head) instead of SHAPES.")
    batch: str = _flag(str, "1:8192", "The batch sizes (M) of --layers/--model_config: LO:HI "
                       "(--batch_count sizes log-spaced) or a list 1,16,300.")
    batch_count: int = _flag(int, 20, "How many batch sizes LO:HI gives.", 1)
    gpus: str = _flag(str, "all", "How many of the host's GPUs to tune on (one process each, "
                      "the calls split between them, the results merged): a number or 'all' "
                      "(every visible GPU).")

    def argv(self) -> list[str]:
        """The flags not at their default, as `--name=value` (`--name` for a boolean)."""
        out = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            if f.metadata["kind"] is bool:
                out.append(f"--{f.name}" if value else f"--no{f.name}")
            else:
                out.append(f"--{f.name}={value}")
        return out


_FIELDS = {f.name: f for f in fields(TuneFlags)}


def define(fv) -> None:
    """The flags as absl flags in `fv` (the tuning command's FlagValues)."""
    from absl import flags  # the GPU machine's; the build machine's python3 may lack absl

    for f in fields(TuneFlags):
        kind, help_text = f.metadata["kind"], f.metadata["help"]
        if kind is bool:
            flags.DEFINE_boolean(f.name, f.default, help_text, flag_values=fv)
        elif kind is int:
            flags.DEFINE_integer(f.name, f.default, help_text,
                                 lower_bound=f.metadata["lower_bound"], flag_values=fv)
        elif kind is float:
            flags.DEFINE_float(f.name, f.default, help_text, flag_values=fv)
        else:
            flags.DEFINE_string(f.name, f.default, help_text, flag_values=fv)


def from_absl(fv) -> TuneFlags:
    return TuneFlags(**{name: getattr(fv, name) for name in _FIELDS})


def describe() -> str:
    """The flags and their help, for a build-machine tool's --help."""
    return "\n".join(f"  --{f.name}" + ("" if f.default in (None, False) else f" (default {f.default})")
                     + f": {f.metadata['help']}" for f in fields(TuneFlags))


def _value(name: str, text: str):
    f = _FIELDS[name]
    kind, lower = f.metadata["kind"], f.metadata["lower_bound"]
    if kind is bool:
        if text.lower() not in ("true", "false", "1", "0"):
            raise UserError(f"--{name}={text!r}: give --{name} or --no{name}")
        return text.lower() in ("true", "1")
    try:
        value = kind(text)
    except ValueError:
        raise UserError(f"--{name}={text!r}: give {'an integer' if kind is int else 'a number'}"
                        ) from None
    if lower is not None and value < lower:
        raise UserError(f"--{name}={text!r}: give at least {lower}")
    return value


def parse(args: Sequence[str]) -> tuple[TuneFlags, list[str]]:
    """The tuning flags among `args` (`--name=value`, `--name value`, `--name`/`--noname` for a
    boolean) and the arguments that are not tuning flags, in their order."""
    values: dict = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        name, eq, text = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        negated = name.startswith("no") and name[2:] in _FIELDS and _FIELDS[name[2:]].metadata["kind"] is bool
        if name not in _FIELDS and not negated:
            rest.append(arg)
            continue
        if negated:
            if eq:
                raise UserError(f"{arg}: give --{name} alone")
            values[name[2:]] = False
        elif _FIELDS[name].metadata["kind"] is bool and not eq:
            values[name] = True
        else:
            if not eq:
                if i == len(args):
                    raise UserError(f"--{name} needs a value: --{name}=VALUE")
                text, i = args[i], i + 1
            values[name] = _value(name, text)
    return TuneFlags(**values), rest


@dataclass(frozen=True)
class Model:
    """The linear layers to tune and the batch sizes (M) to tune them at."""
    layers: tuple[model_shapes.Layer, ...]
    batch_sizes: tuple[int, ...]


def gpu_count(spec: str) -> int | None:
    """--gpus as a number; None for 'all' (every visible GPU, counted where they are)."""
    if spec == "all":
        return None
    if not spec.isdigit() or int(spec) < 1:
        raise UserError(f"--gpus={spec!r}: give a number of GPUs or 'all'")
    return int(spec)


def shape_keys(spec: str) -> set[tuple[int, ...]]:
    """--shapes: the keys of the calls to keep."""
    try:
        keys = {tuple(int(v) for v in s.split("x")) for s in spec.split(",") if s.strip()}
    except ValueError:
        keys = set()
    if not keys:
        raise UserError(f"--shapes={spec!r}: give the key values of each shape joined by x, "
                        "e.g. 4096x4096x4096,1x4096x4096")
    return keys


def check(flags: TuneFlags, key: Sequence[str] | None) -> Model | None:
    """Refuses what no GPU run could take (one UserError naming the flag and the fix), reading
    --model_config; the model to tune, None when the inputs' SHAPES are tuned. `key`: the
    library's tuning key (None: not known yet, before the library is built)."""
    gpu_count(flags.gpus)
    if flags.shapes is not None:
        shape_keys(flags.shapes)
    if not flags.layers and not flags.model_config:
        return None
    if flags.layers and flags.model_config:
        raise UserError("give --layers or --model_config, not both")
    if key is not None and tuple(key) != MODEL_KEY:
        raise UserError(f"--layers/--model_config tune a matmul's linear layers: the tuning "
                        f"key must be M, N, K (y[M, N] = x[M, K] @ W.t()), not "
                        f"{', '.join(key)}")
    if flags.layers:
        layers = model_shapes.parse_layers(flags.layers)
    else:
        path = Path(flags.model_config)
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise UserError(f"--model_config={path}: {e.strerror}; give the path of the "
                            "model's Hugging Face config.json") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise UserError(f"--model_config={path}: not JSON ({e}); give the model's Hugging "
                            "Face config.json") from None
        layers = model_shapes.layers_of_config(cfg, f"--model_config={path}")
    ms = model_shapes.batch_sizes(flags.batch, flags.batch_count)
    return Model(tuple(layers), tuple(ms))
