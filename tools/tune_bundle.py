#!/usr/bin/env python3
"""Tuning bundles: a triton_kernel_library with a `tuning_key`, packed for the tuning command on
the GPU machine (`python3 -m triton_aot.tuning.tune BUNDLE`; docs/tuned_dispatch.md).

Two callers:
  - tools/gpu (this repository: `tools/gpu pack tune`, `tools/tune LABEL... [FLAGS]`) imports
    pack_tuning;
  - `bazel run @rules_triton//tools:tune --@rules_triton//tools:tune_library=//pkg:lib -- DIR
    [FLAGS]` (any workspace that depends on rules_triton) runs this file through tools/tune.bzl's
    launcher, with the library's `tuning` output group and the tuner's sources as runfiles: it
    writes DIR/<c_name>/ (the bundle) and DIR/triton_aot/ (the tuning command, so the GPU machine
    needs no rules_triton checkout), and NAME.tuning_hints.bzl beside the library's table.

FLAGS are the tuning command's own (triton_aot.tuning.tune_flags: --model_config, --layers,
--batch, --missing_only, --gpus, ...): checked here, before anything is packed, and written into
the bundle's tune.sh, the one command the GPU machine runs.

A bundle: pack.json (format rules_triton.tune_pack.v2: label, where the library description is,
the shared object, the inputs file, the table's path from the workspace root), library.json (the
library description the link step wrote: C name, C API, algos, tuning key; triton_aot.contract.
library), the library as a shared object with the runtime, records/ (variant records), cubins/, inputs.py (the `tuning_inputs` file), table.json
(the current table, when there is one), model_config.json (the config.json of --model_config),
tune.sh (the tuning command with the flags it was packed with: `sh BUNDLE/tune.sh [--out=...]`
from anywhere on the GPU machine) and STALE when the library's specializations changed with this
pack (build and pack it again before tuning).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

# The library description's one reader and the tuning flags: from this checkout (tools/gpu) or
# from the runfiles (`bazel run`, where main() puts the tuner's sources on the path first).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODEL_CONFIG = "model_config.json"  # the bundle's copy of --model_config
SCRIPT = "tune.sh"  # the bundle's tuning command


class BundleError(Exception):
    pass


def _copy(src: Path, dest_dir: Path, name: str | None = None) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / (name or src.name)
    shutil.copyfile(src, dest)
    dest.chmod(0o755 if src.suffix == ".so" else 0o644)
    return dest


def _specializations(text: str):
    names: dict = {}
    exec(text, {}, names)  # the generated .bzl is Python syntax
    return names.get("SPECIALIZATIONS")


def tune_command(bundle: str, flags) -> str:
    """One line: the tuning command of the bundle at `bundle` (a shell word) with `flags`
    (tune_flags.TuneFlags), the model's config read from the bundle's copy."""
    model = [f"--model_config={bundle}/{MODEL_CONFIG}"] if flags.model_config else []
    rest = [shlex.quote(a) for a in dataclasses.replace(flags, model_config=None).argv()]
    return " ".join(["python3 -m triton_aot.tuning.tune", bundle] + model + rest)


def _script(flags) -> str:
    return "\n".join([
        "#!/bin/sh",
        "# This bundle's tuning command, with the flags it was packed with: run it on the GPU",
        "# machine (python3 with torch and absl-py, the CUDA driver) from anywhere; arguments",
        "# go to it (e.g. --out=table.json). The tuning command's sources are those beside the",
        "# bundle (`bazel run @rules_triton//tools:tune` copies them) or the checkout it runs in.",
        "set -eu",
        'b=$(cd "$(dirname "$0")" && pwd)',
        'PYTHONPATH="$(dirname "$b")${PYTHONPATH:+:$PYTHONPATH}" exec '
        + tune_command('"$b"', flags) + ' "$@"',
        ""])


def check_flags(flags, key=None) -> None:
    """The tuning flags, refused as a BundleError (one line naming the flag and the fix) when no
    GPU run could take them; `key`: the library's tuning key, None before it is built."""
    from triton_aot.core.errors import UserError
    from triton_aot.tuning import tune_flags
    try:
        tune_flags.check(flags, key)
    except UserError as e:
        raise BundleError(e.message) from None


def pack_tuning(label: str, files: list[Path], dest_root: Path, workspace: Path | None,
                table_prefix: str = "", note=None, flags=None) -> Path:
    """Copies a library's `tuning` output group into dest_root/<c_name>/ with pack.json, and
    writes its tuning command with `flags` (tune_flags.TuneFlags; None: the inputs' SHAPES).

    workspace: the source folder the table's path (the rule's, plus table_prefix) is relative
    to; NAME.tuning_hints.bzl is written beside the table there (None: not written). Returns the
    bundle's folder."""
    from triton_aot.tuning.tune_flags import TuneFlags
    note = note or (lambda msg: print(msg, file=sys.stderr))
    flags = flags or TuneFlags()
    so = [f for f in files if f.suffix == ".so"]
    from triton_aot.contract.library import LibraryError, read_library
    description = [f for f in files if f.name.endswith(".library.json")]
    table = [f for f in files if f.name.endswith(".tuning.json")]
    inputs = [f for f in files if f.suffix == ".py"]
    records = [f for f in files if f.suffix == ".json" and f not in table and f not in description]
    hints_bzl = [f for f in files if f.name.endswith(".tuning_hints.bzl")]
    if not description:
        raise BundleError(f"{label}: it has no tuning_key: set tuning_key (the integer arguments that choose the algo)")
    if len(so) != 1 or not records:
        raise BundleError(f"{label}: its tuning output group lacks the shared library or the records")
    if not inputs:
        raise BundleError(f"{label}: no tuning_inputs file: set tuning_inputs on the library "
                          "(see examples/kernels/matmul_tuning.py)")
    try:
        library = read_library(description[0])
    except LibraryError as e:
        raise BundleError(f"{label}: {e.message}") from e
    if library.tuning is None:
        raise BundleError(f"{label}: it has no tuning_key: set tuning_key (the integer arguments that choose the algo)")
    try:
        check_flags(flags, library.tuning.key)
    except BundleError as e:
        raise BundleError(f"{label}: {e}") from None
    name = library.name
    table = [f for f in table if f.name == Path(library.tuning.table).name] or table
    table_path = (Path(table_prefix) / library.tuning.table).as_posix() if table_prefix else library.tuning.table
    dest = dest_root / name
    shutil.rmtree(dest, ignore_errors=True)
    _copy(so[0], dest)
    for r in records:
        _copy(r, dest / "records")
    for c in files:
        if c.suffix == ".cubin":
            _copy(c, dest / "cubins")
    _copy(inputs[0], dest, "inputs.py")
    _copy(description[0], dest, "library.json")
    if table:
        _copy(table[0], dest, "table.json")
    if flags.model_config:
        _copy(Path(flags.model_config), dest, MODEL_CONFIG)
    (dest / SCRIPT).write_text(_script(flags))
    (dest / SCRIPT).chmod(0o755)
    if hints_bzl and workspace is not None and not table_path.startswith("../"):
        # The specializations the tuning calls need (triton_aot.tuning.call_hints), beside the table,
        # where the BUILD file loads them: when they change, the library must be built again.
        place = workspace / Path(table_path).parent / hints_bzl[0].name
        text = hints_bzl[0].read_text()
        old = place.read_text() if place.exists() else None
        if old != text:
            place.write_text(text)
            note(f"wrote {place}")
        if old is None or _specializations(old) != _specializations(text):
            (dest / "STALE").write_text(str(place) + "\n")
    (dest / "pack.json").write_text(json.dumps({
        "format": "rules_triton.tune_pack.v2", "label": label, "library": "library.json",
        "so": so[0].name, "inputs": "inputs.py", "table": table_path},
        indent=1) + "\n")
    return dest


def main(argv: list[str]) -> int:
    """`bazel run @rules_triton//tools:tune ... -- DIR`: see the module docstring."""
    from triton_aot.core.errors import UserError
    from triton_aot.tuning import tune_flags
    ap = argparse.ArgumentParser(
        prog="bazel run @rules_triton//tools:tune --@rules_triton//tools:tune_library=LABEL --",
        description="Packs the library's tuning bundle into DIR for the GPU machine.",
        epilog="the tuning command's flags, written into the bundle's tune.sh:\n"
        + tune_flags.describe(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runfiles", type=Path, required=True, help=argparse.SUPPRESS)
    ap.add_argument("--manifest", type=Path, required=True, help=argparse.SUPPRESS)
    ap.add_argument("dir", type=Path, help="the folder to write (relative to where bazel runs); "
                    "then the tuning command's flags (--model_config=config.json, --layers=NxK,..., "
                    "--batch=LO:HI, --missing_only, --gpus=N|all, ...), written into the bundle's "
                    "tune.sh")
    try:
        flags, rest = tune_flags.parse(argv)
    except UserError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    a = ap.parse_args(rest)
    cwd = Path(os.environ.get("BUILD_WORKING_DIRECTORY", "."))
    if flags.model_config:  # from where `bazel run` was run
        flags = dataclasses.replace(flags, model_config=str(cwd / flags.model_config))
    try:
        check_flags(flags)
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    lines = [ln.split("\t") for ln in a.manifest.read_text().splitlines() if ln]
    label = next((ln[1] for ln in lines if ln[0] == "label"), "?")
    label = label[2:] if label.startswith("@@//") else label  # the main repository's
    errors = [ln[1] for ln in lines if ln[0] == "error"]
    if errors:
        print(f"error: {errors[0]}", file=sys.stderr)
        return 2
    files = [a.runfiles / ln[1] for ln in lines if ln[0] == "tuning"]
    tuner = [(a.runfiles / ln[1], ln[2]) for ln in lines if ln[0] == "tuner"]
    roots = {str(src)[:-len(rel)] for src, rel in tuner if str(src).endswith(rel)}
    sys.path[:0] = sorted(roots)  # the tuner's sources, the library description's reader among them
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    dest = a.dir if a.dir.is_absolute() else cwd / a.dir
    dest.mkdir(parents=True, exist_ok=True)
    try:
        bundle = pack_tuning(label, files, dest, Path(workspace) if workspace else None,
                             flags=flags)
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    # The tuning command itself, so that the GPU machine needs python3, torch and absl-py only.
    shutil.rmtree(dest / "triton_aot", ignore_errors=True)
    for src, rel in tuner:
        _copy(src, dest / Path(rel).parent, Path(rel).name)
    print(f"packed {label} into {bundle}")
    if (bundle / "STALE").exists():
        print(f"the library's specializations changed ({(bundle / 'STALE').read_text().strip()}): "
              "run this command again, so that the bundle is built with them", file=sys.stderr)
        return 3
    pack = json.loads((bundle / "pack.json").read_text())
    print(f"""On the GPU machine (python3 with torch and absl-py, the CUDA driver; no Bazel), carry
{dest} there (as DIR) and run

    sh DIR/{bundle.name}/{SCRIPT} --out=table.json

then copy table.json to {pack['table']} in this workspace and commit it: the next build
compiles it into {bundle.name}_auto. (From a checkout of this workspace, without --out, the
table goes to {pack['table']} itself.) {SCRIPT} runs
PYTHONPATH=DIR {tune_command("DIR/" + bundle.name, flags)}""")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
