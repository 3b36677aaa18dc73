"""rules_triton link tool: variant records -> one library C file and its public header.

    python -m triton_aot.emit_c.link --name=NAME --out_c=F.c --out_h=F.h [--embed_ptx_fallback]
        [--tuning_key=M,N,K [--tuning=TABLE.json] [--tuning_default_algo=I]] REC.json...

Reads the variant records (triton_aot.contract.variant; never parses C) and the images they name (cubin,
and PTX where embedded, relative to each record's folder), groups the variants into algos (same
constexprs and launch config) and targets, checks the set, orders it deterministically and
renders the library (triton_aot.emit_c.c_library): each distinct image is embedded once. With
--tuning_key it also renders NAME_auto, the tuned dispatch (triton_aot.contract.tuning_table); a --tuning table
whose algos no longer match the library's is refused with the command that retunes it.

Ordering never depends on the order of the input files:
  * algos by algo_index (contiguous from 0), or without indices by a canonical key;
  * targets by ascending SM;
  * variants of one (algo, target): most hints first, ties broken by the hints themselves.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from absl import flags

from triton_aot.contract import hint_patterns, library
from triton_aot.contract import record_reader, tuning_table as tuning
from triton_aot.contract.variant import FORMAT, RecordError
from triton_aot.core import abi, cli
from triton_aot.core.errors import UserError
from triton_aot.core.targets import arch_name
from triton_aot.core.triton_types import INT_TYPES
from triton_aot.emit_c import c_library
from triton_aot.emit_c.c_library import Algo, LibraryPlan, TargetSlot, TunedDispatch, Variant
from triton_aot.emit_c.c_parts import Image


def define_flags(fv: flags.FlagValues) -> None:
    s = flags.DEFINE_string
    s("name", None, "C name of the library API (NAME, NAME_default, load_NAME, ...).",
      flag_values=fv)
    s("out_c", None, "Library C file to write.", flag_values=fv)
    s("out_h", None, "Public header to write (the C file includes it by basename).",
      flag_values=fv)
    flags.DEFINE_bool("embed_ptx_fallback", False,
                      "Let contexts whose GPU matches no cubin fall back to a target compiled "
                      "with --embed_ptx (PTX JIT-compiled by the driver).", flag_values=fv)
    s("tuning", None, "Tuning table (rules_triton.tuning.v1 JSON, triton_aot.contract.tuning_table) for "
      "NAME_auto; needs --tuning_key.", flag_values=fv)
    flags.DEFINE_list("tuning_key", [], "Integer arguments of the C API that key the tuned "
                      "dispatch, e.g. M,N,K: generates NAME_auto(stream, args...), which picks "
                      "the algo from --tuning (or --tuning_default_algo without a table).",
                      flag_values=fv)
    flags.DEFINE_integer("tuning_default_algo", 0, "The algo NAME_auto launches on a device or "
                         "shape the table does not cover.", flag_values=fv)
    flags.DEFINE_boolean("tuning_stale_ok", False, "A --tuning table that no longer matches "
                         "the algos is left out (NAME_auto launches --tuning_default_algo) "
                         "instead of failing: what tools/tune builds with, so that the command "
                         "the stale-table error names can run.", flag_values=fv)
    s("tuning_label", None, "The library's Bazel label, for the retune command in the stale-table "
      "error.", flag_values=fv)
    s("tuning_place", None, "Where the tuning table lives in its workspace, also before it "
      "exists (the library description tells the tuning command where to write it).",
      flag_values=fv)
    s("out_library", None, "The library description to write (contract.library: the C "
      "functions, algos, specializations and variants, for the torch ops and the tuner).",
      flag_values=fv)
    s("template_dir", None, "Directory holding the templates (default: "
      "$RULES_TRITON_TEMPLATE_DIR, else templates/ next to the triton_aot package).",
      flag_values=fv)


def load_variant(path: str) -> Variant:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    try:
        record = record_reader.read_json(text)
    except RecordError as e:
        if e.message.startswith("not valid JSON"):
            raise UserError(f"{path} is not valid JSON: {e.message[len('not valid JSON: '):]}") \
                from None
        if e.message.startswith("metadata format"):
            raise UserError(f"{path} is not a {FORMAT} variant metadata file (pass the "
                            "--out_json files of triton_aot.compile.compile)") from None
        raise UserError(f"{path}: {e.message}; regenerate it with triton_aot.compile.compile") from None
    except UserError as e:  # a name or type the record may not hold
        raise UserError(f"{path}: malformed variant metadata: {e.message}; regenerate it with "
                        "triton_aot.compile.compile") from None
    folder = Path(path).parent
    if record.cubin_file is None:
        raise UserError(f"{path}: the record names no cubin; compile the variant with "
                        "--out_cubin next to its --out_json")
    image = record.target.row.image
    cubin = _read_image(folder / record.cubin_file, path, image, f"--out_{image}")
    ptx = None
    if record.ptx_embedded:
        if record.ptx_file is None:
            raise UserError(f"{path}: ptx_embedded is true but the record names no PTX file; "
                            "compile the variant with --out_ptx next to its --out_json")
        ptx = _read_image(folder / record.ptx_file, path, "PTX", "--out_ptx")
        ptx = Image(ptx.data, "PTX")
    return Variant(record, path, cubin, ptx)


def _read_image(image_path: Path, record_path: str, what: str, flag: str) -> Image:
    try:
        data = image_path.read_bytes()
    except OSError as e:
        raise UserError(f"{record_path}: cannot read its {what} {image_path}: {e.strerror}; pass "
                        f"the {flag} file of each variant to the link step too") from None
    if not data:
        raise UserError(f"{record_path}: its {what} {image_path} is empty; recompile the variant")
    return Image(data, what)


def _fmt_sig(v: Variant) -> str:
    return "(" + ", ".join(f"{n}: {t}" for n, t in v.record.signature) + ")"


def _two_with_different(items: list, key: Callable):
    first = items[0]
    return first, next(x for x in items if key(x) != key(first))


def _order_algos(algos: dict[tuple, list[Variant]]) -> list[tuple[tuple, list[Variant]]]:
    indices = {}
    for config, members in algos.items():
        idx = {m.record.algo_index for m in members}
        if len(idx) > 1:
            a, b = _two_with_different(members, lambda m: m.record.algo_index)
            raise UserError(f"{a.label} and {b.label} are the same algo but have algo_index "
                            f"{a.record.algo_index} and {b.record.algo_index}")
        indices[config] = idx.pop()
    with_index = [c for c, i in indices.items() if i is not None]
    if not with_index:
        return sorted(algos.items(), key=lambda kv: kv[1][0].record.algo_sort_key())
    if len(with_index) != len(algos):
        a = algos[with_index[0]][0]
        b = next(algos[c][0] for c, i in indices.items() if i is None)
        raise UserError(f"{a.label} has an algo_index but {b.label} has none; give every algo "
                        "an index or none")
    seen: dict[int, tuple] = {}
    for config, idx in indices.items():
        if idx in seen:
            raise UserError(f"two algos share algo_index {idx}: {algos[seen[idx]][0].label} and "
                            f"{algos[config][0].label} differ in constexprs or launch config; "
                            "give each algo its own algo_index")
        seen[idx] = config
    if sorted(seen) != list(range(len(seen))):
        raise UserError(f"algo_index values {sorted(seen)} are not 0..{len(seen) - 1}; number "
                        "the algos 0..N-1 without gaps")
    return [(seen[i], algos[seen[i]]) for i in range(len(seen))]


def _algo_info(members: list[Variant]) -> str:
    """The algo's info string, then what @triton.heuristics set: the values when every variant
    got the same, else the names (values differ per specialization)."""
    info = members[0].record.algo_info()
    summaries = {m.record.heuristic_summary for m in members}
    if not members[0].record.heuristics:
        return info
    if len(summaries) == 1:
        return f"{info} heuristics: {summaries.pop()}"
    return f"{info} heuristics per variant: {','.join(members[0].record.heuristics)}"


def _declared_archs(members: list[Variant], archs: list) -> set | None:
    """The archs an algo is restricted to (its variants' algo_targets), None when unrestricted.
    Every variant of the algo must declare the same restriction, and each declared target must
    be one of the library's."""
    ref = members[0]
    for v in members:
        if v.record.algo_targets != ref.record.algo_targets:
            raise UserError(f"{ref.label} and {v.label} are the same algo but declare different "
                            f"algo targets ({ref.record.algo_targets} vs "
                            f"{v.record.algo_targets}); compile every variant of an algo with "
                            "the same --algo_targets")
    if ref.record.algo_targets is None:
        return None
    declared = set()
    for t in ref.record.algo_targets:
        arch = t.arch
        if arch not in archs:
            raise UserError(f"algo {ref.record.algo_info()!r} declares target {t} "
                            f"({ref.label}) but the library has no variant for it; compile "
                            "the algo for every target it declares")
        declared.add(arch)
    return declared


def _check_targets_complete(per_target: dict[int, dict[tuple, Variant]],
                            members: list[Variant], declared: set | None = None) -> None:
    """Every algo must have every target (or every target it declares, --algo_targets), with the
    same set of hint variants: otherwise a call that works on one GPU would fail on another."""
    all_hints: dict[tuple, Variant] = {}
    for slot in per_target.values():
        for hints, v in slot.items():
            all_hints.setdefault(hints, v)
    for arch, slot in per_target.items():
        if declared is not None and arch not in declared:
            continue  # a declared restriction: the dispatcher returns NO_BINARY_FOR_GPU there
        if not slot:
            example = members[0]
            raise UserError(f"algo {example.record.algo_info()!r} has no variant for {arch_name(arch)} "
                            f"({example.label} is its {example.record.target.name} variant); "
                            "compile every algo for every target")
        for hints, v in all_hints.items():
            if hints not in slot:
                raise UserError(f"{v.label} has no {arch_name(arch)} counterpart with the same hints "
                                f"(algo {v.record.algo_info()!r}); compile every "
                                "specialization for every target")


def _dispatch_order(v: Variant) -> tuple:
    hints = [h or 0 for _, h in v.record.hints]
    return (-sum(1 for h in hints if h), tuple(-h for h in hints), v.record.symbol)


def retune_hint(label: str | None) -> str:
    """The command that retunes a library (tools/tune packs it and prints the GPU-side step)."""
    return (f"retune: tools/tune {label or '<the library label>'} (on the build machine, in the "
            "library's workspace; then run the command it prints on the GPU machine and commit "
            "the table it writes)")


def check_table(table: tuning.Table, path: str, name: str, key: Sequence[str],
                algos: Sequence[Algo], label: str | None) -> None:
    """The table must describe this library: its name, key and algos (by fingerprint)."""
    hint = retune_hint(label)
    if table.library != name:
        raise UserError(f"--tuning {path} is the table of library {table.library!r}, not "
                        f"{name!r}; pass this library's own table, or {hint}")
    if list(table.key) != list(key):
        raise UserError(f"--tuning {path} is keyed by {', '.join(table.key)} but --tuning_key is "
                        f"{', '.join(key)}; {hint}")
    prints = [tuning.record_fingerprint(a.variants_any().record) for a in algos]
    if len(table.algos) != len(algos):
        raise UserError(f"--tuning {path} is stale: it was tuned for {len(table.algos)} algos, "
                        f"the library has {len(algos)}; {hint}")
    for i, (old, fp) in enumerate(zip(table.algos, prints)):
        if old.fingerprint != fp and old.info == algos[i].info:
            raise UserError(f"--tuning {path} is stale: algo {i} ('{old.info}') has fingerprint "
                            f"{fp} but was tuned with {old.fingerprint}; {hint}")
        if old.fingerprint != fp:
            raise UserError(f"--tuning {path} is stale: algo {i} is now '{algos[i].info}' but was "
                            f"tuned as '{old.info}'; {hint}")
    # Each point was timed with the variant of its call's hint pattern; a library without that
    # variant would launch another one there (call_hints: the specializations come from the
    # tuning calls).
    have = {hint_patterns.spelling(hint_patterns.of_record(v.record))
            for a in algos for per_target in a.variants for v in per_target}
    for dev in table.devices:
        for p in dev.points:
            if p.hints is not None and p.hints not in have:
                raise UserError(
                    f"--tuning {path}: the point {'x'.join(map(str, p.key))} (sm_{dev.sm}) was timed "
                    f"with hints '{p.hints or '(none)'}', which no specialization of {name} has: "
                    "add it to the library's specializations (tools/tune writes them into "
                    f"{name}.tuning_hints.bzl), or {hint}")


def plan_tuning(fv_tuning: str | None, key: Sequence[str], default_algo: int, label: str | None,
                name: str, ref: Variant, algos: Sequence[Algo],
                stale_ok: bool = False) -> TunedDispatch | None:
    if not key:
        if fv_tuning:
            raise UserError("--tuning needs --tuning_key (the integer arguments the table is "
                            "keyed by, e.g. --tuning_key=M,N,K)")
        return None
    if not ref.record.target.row.tuned_dispatch:
        raise UserError("--tuning_key: tuned dispatch (NAME_auto) is CUDA only for now; drop "
                        "tuning_key from this hip library")
    c_args = {a.name: a for a in ref.record.c_args}
    for k in key:
        a = c_args.get(k)
        if a is None or a.type not in INT_TYPES:
            ints = [a.name for a in ref.record.c_args if a.type in INT_TYPES]
            raise UserError(f"--tuning_key: {k!r} is not an integer argument of the C API; use "
                            f"some of {', '.join(ints) or '(none)'}")
    if len(set(key)) != len(key):
        raise UserError(f"--tuning_key: {', '.join(key)} names an argument twice")
    if not 0 <= default_algo < len(algos):
        raise UserError(f"--tuning_default_algo: {default_algo} is not an algo index "
                        f"(0..{len(algos) - 1})")
    table = None
    if fv_tuning:
        try:
            table = tuning.read_table(fv_tuning)
        except tuning.TableError as e:
            raise UserError(f"--tuning {fv_tuning}: {e}; fix it or {retune_hint(label)}") from None
        try:
            check_table(table, fv_tuning, name, key, algos, label)
        except UserError:
            if not stale_ok:
                raise
            table = None  # retuning: the table is rewritten from this library's algos
    return TunedDispatch(tuple(key), default_algo, table)


def build_plan(variants: Sequence[Variant], name: str, header: str,
               embed_ptx_fallback: bool, tuning_path: str | None = None,
               tuning_key: Sequence[str] = (), tuning_default_algo: int = 0,
               tuning_label: str | None = None, tuning_stale_ok: bool = False) -> LibraryPlan:
    if not variants:
        raise UserError("no variant metadata files given")
    abi.check_c_identifier(name, "--name")

    # Whole-library consistency: one kernel, one C signature, unique symbols.
    by_symbol: dict[str, Variant] = {}
    ref = variants[0]
    for v in variants:
        other = by_symbol.setdefault(v.record.symbol, v)
        if other is not v:
            raise UserError(f"duplicate symbol {v.record.symbol!r} in {other.path} and {v.path}; "
                            "give each variant its own --symbol")
        if v.record.kernel_name != ref.record.kernel_name:
            raise UserError(f"mixed kernel names: {ref.label} is {ref.record.kernel_name!r} but "
                            f"{v.label} is {v.record.kernel_name!r}; link each kernel separately")
        if v.record.signature != ref.record.signature:
            raise UserError(f"different argument lists: {ref.label} has {_fmt_sig(ref)} but "
                            f"{v.label} has {_fmt_sig(v)}; every variant of a library must come "
                            "from the same --signature")
        if v.record.launch_args != ref.record.launch_args:
            la = lambda r: "(" + ", ".join(f"{a.name}: {a.type}" for a in r.launch_args) + ")"
            raise UserError(f"different launch arguments: {ref.label} has {la(ref.record)} but "
                            f"{v.label} has {la(v.record)}; every variant of a library must be "
                            "compiled with the same --launch_args")

    # One backend per library: the C API's types are the backend's (docs/design.md).
    for v in variants:
        if v.record.target.row is not ref.record.target.row:
            raise UserError(f"mixed backends: {ref.label} targets {ref.record.target} but "
                            f"{v.label} targets {v.record.target}; a library is either CUDA or "
                            "HIP: link the cuda and hip variants into two libraries")
    if embed_ptx_fallback and not ref.record.target.row.embed_ptx:
        raise UserError("--embed_ptx_fallback is CUDA only; these variants target HIP")

    algos: dict[tuple, list[Variant]] = {}
    for v in variants:
        algos.setdefault(v.record.algo_config, []).append(v)
    archs = sorted({v.record.target.arch for v in variants})
    plan_algos = []
    for _, members in _order_algos(algos):
        per_target: dict[int, dict[tuple, Variant]] = {a: {} for a in archs}
        for v in members:
            slot = per_target[v.record.target.arch]
            other = slot.setdefault(v.record.hints, v)
            if other is not v:
                raise UserError(f"duplicate variants: {other.label} and {v.label} have the same "
                                f"algo, target {v.record.target.name} and hints; remove one, or "
                                "give them different hints")
        _check_targets_complete(per_target, members, _declared_archs(members, archs))
        plan_algos.append(Algo(
            info=_algo_info(members),
            variants=tuple(tuple(sorted(per_target[a].values(), key=_dispatch_order))
                           for a in archs)))

    targets = []
    for arch in archs:
        has_ptx = False
        if embed_ptx_fallback:
            vs = [v for v in variants if v.record.target.arch == arch]
            with_ptx = [v for v in vs if v.ptx is not None]
            without = [v for v in vs if v.ptx is None]
            if with_ptx and without:
                raise UserError(f"{arch_name(arch)} mixes PTX and no PTX: {with_ptx[0].label} embeds PTX "
                                f"but {without[0].label} does not; compile all of a target's "
                                "variants with or without --embed_ptx")
            has_ptx = bool(with_ptx)
        targets.append(TargetSlot(arch, has_ptx))
    if embed_ptx_fallback and not any(t.has_ptx for t in targets):
        raise UserError("--embed_ptx_fallback needs a target whose variants were compiled with "
                        "--embed_ptx; none was")
    tuned = plan_tuning(tuning_path, tuning_key, tuning_default_algo, tuning_label, name, ref,
                        plan_algos, tuning_stale_ok)
    return LibraryPlan(name, header, tuple(targets), tuple(plan_algos), tuned)


def specialization_indices(variants: Sequence[Variant]) -> dict[str, int]:
    """Each variant's specialization index, by symbol: the records' own (compiled with
    --specialization_index), or for records without one the index of their hint pattern in
    dispatch order."""
    given = [v for v in variants if v.record.specialization_index is not None]
    if given and len(given) != len(variants):
        a = given[0]
        b = next(v for v in variants if v.record.specialization_index is None)
        raise UserError(f"{a.label} has a specialization_index but {b.label} has none; compile "
                        "every variant with --specialization_index, or none")
    if not given:
        order = hint_patterns.dispatch_order({hint_patterns.of_record(v.record) for v in variants},
                                             variants[0].record.c_args)
        return {v.record.symbol: order.index(hint_patterns.of_record(v.record)) for v in variants}
    pattern_of: dict[int, Variant] = {}
    for v in variants:
        other = pattern_of.setdefault(v.record.specialization_index, v)
        if hint_patterns.of_record(other.record) != hint_patterns.of_record(v.record):
            raise UserError(f"{other.label} and {v.label} have specialization_index "
                            f"{v.record.specialization_index} but different hints; give each "
                            "hint pattern its own index")
    if sorted(pattern_of) != list(range(len(pattern_of))):
        raise UserError(f"specialization_index values {sorted(pattern_of)} are not "
                        f"0..{len(pattern_of) - 1}")
    return {v.record.symbol: v.record.specialization_index for v in variants}


def link(paths: Sequence[str], name: str, out_c: str, out_h: str, embed_ptx_fallback: bool,
         template_dir: str | None = None, verbose: bool = False, tuning_path: str | None = None,
         tuning_key: Sequence[str] = (), tuning_default_algo: int = 0,
         tuning_label: str | None = None, tuning_stale_ok: bool = False,
         out_library: str | None = None, tuning_place: str | None = None) -> list[list[str]]:
    variants = [load_variant(p) for p in paths]
    plan = build_plan(variants, name, os.path.basename(out_h), embed_ptx_fallback, tuning_path,
                      tuning_key, tuning_default_algo, tuning_label, tuning_stale_ok)
    c_text, h_text, merged = c_library.render(plan, template_dir=template_dir)
    outputs = [("out_c", out_c, c_text), ("out_h", out_h, h_text)]
    if out_library:
        tuning = None
        if plan.tuned is not None:
            tuning = library.Tuning(plan.tuned.key, plan.tuned.default_algo, tuning_label,
                                    tuning_place)
        description = c_library.describe(plan, specialization_indices(variants), tuning)
        outputs.append(("out_library", out_library, description.to_json()))
    for flag, path, text in outputs:
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        except OSError as e:
            raise UserError(f"--{flag}: cannot write {path}: {e.strerror}") from None
    if verbose:
        for users in merged:
            print(f"info: identical cubins embedded once: {', '.join(users)}", file=sys.stderr)
    return merged


def _run(fv: flags.FlagValues, paths: list[str]) -> None:
    cli.require(fv, "name")
    cli.require(fv, "out_c")
    cli.require(fv, "out_h")
    link(paths, fv.name, fv.out_c, fv.out_h, fv.embed_ptx_fallback, fv.template_dir,
         fv.verbose, fv.tuning, fv.tuning_key, fv.tuning_default_algo, fv.tuning_label,
         fv.tuning_stale_ok, fv.out_library, fv.tuning_place)


TOOL = cli.Tool(
    module="triton_aot.emit_c.link",
    usage="python -m triton_aot.emit_c.link --name=NAME --out_c=F.c --out_h=F.h "
          "[--out_library=F.library.json] [--embed_ptx_fallback] [--tuning_key=M,N,K [--tuning=T.json]] RECORD.json...",
    define_flags=define_flags,
    run=_run,
    positional=True,
)

if __name__ == "__main__":
    sys.exit(cli.main(TOOL))
