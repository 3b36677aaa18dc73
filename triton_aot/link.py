"""rules_triton link tool: variant JSONs -> one dispatcher C/H with the upstream-compatible API.

    python -m triton_aot.link --name=NAME --out_c=F.c --out_h=F.h [--embed_ptx_fallback] META.json...

Reads only the variant metadata JSON (never parses C headers), groups variants into algos (same
constexprs and launch config) and targets, validates the set, orders it deterministically and
renders templates/dispatcher.{c,h}.tmpl through triton_aot.codegen.

Ordering never depends on the order of the input files:
  * algos by algo_index (contiguous from 0), or without indices by a canonical key;
  * targets by ascending SM;
  * variants of one (algo, target): most hints first, ties broken by the hints themselves.

Errors: exit code 1 and one `error: ` line on stderr; a message about a conflict names both files.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Sequence

from absl import app, flags

from triton_aot import codegen

FLAGS = flags.FLAGS
flags.DEFINE_string("name", None, "C name of the dispatcher (NAME, NAME_default, load_NAME, ...).")
flags.DEFINE_string("out_c", None, "Dispatcher C file to write.")
flags.DEFINE_string("out_h", None, "Dispatcher header to write (the C file includes it by basename).")
flags.DEFINE_bool("embed_ptx_fallback", False,
                  "Let contexts whose GPU matches no cubin fall back to a target compiled with "
                  "--embed_ptx (PTX JIT-compiled by the driver).")
flags.DEFINE_string("template_dir", None,
                    "Directory holding the templates (default: $RULES_TRITON_TEMPLATE_DIR, else "
                    "templates/ next to the triton_aot package).")
flags.DEFINE_bool("verbose", False, "Show tracebacks on errors.")


class LinkError(Exception):
    """A problem with the set of variants; the message is shown to the user as is."""


@dataclass(frozen=True)
class Variant:
    meta: dict
    path: str

    @property
    def label(self) -> str:
        return f"{self.meta.get('symbol')} ({os.path.basename(self.path)})"

    @property
    def arch(self) -> int:
        return codegen.target_arch(self.meta)

    @property
    def hints(self) -> tuple:
        return tuple((a["name"], a.get("hint")) for a in codegen.runtime_args(self.meta))


def load_variant(path: str) -> Variant:
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except OSError as e:
        raise LinkError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise LinkError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != codegen.VARIANT_FORMAT:
        raise LinkError(f"{path} is not a {codegen.VARIANT_FORMAT} variant metadata file "
                        "(pass the --out_json files of triton_aot.compile)")
    for key in ("symbol", "kernel_name", "args", "target", "num_warps", "num_stages"):
        if key not in meta:
            raise LinkError(f"{path}: variant metadata lacks {key!r}")
    problem = _shape_problem(meta)
    if problem:
        raise LinkError(f"{path}: malformed variant metadata: {problem}; regenerate it with "
                        "triton_aot.compile")
    return Variant(meta, path)


def _shape_problem(meta: dict) -> str | None:
    """What is wrong with the JSON types of a variant's metadata, or None."""
    if not isinstance(meta["args"], list):
        return "'args' is not a list"
    for i, a in enumerate(meta["args"]):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            return f"args[{i}] is not an object with a string 'name'"
        if not a.get("constexpr") and not isinstance(a.get("type"), str):
            return f"args[{i}] ({a['name']}) has no string 'type'"
    if not isinstance(meta["target"], dict):
        return "'target' is not an object"
    for key in ("num_warps", "num_stages"):
        if isinstance(meta[key], bool) or not isinstance(meta[key], int):
            return f"{key!r} is not an integer"
    if not isinstance(meta["symbol"], str) or not isinstance(meta["kernel_name"], str):
        return "'symbol' and 'kernel_name' must be strings"
    return None


def _signature(meta: dict) -> list:
    return [(a["name"], "constexpr" if a.get("constexpr") else a.get("type")) for a in meta["args"]]


def algo_config(meta: dict) -> tuple:
    """What makes two variants the same algo: constexpr values and the launch config."""
    return (tuple((meta.get("constexprs") or {}).items()), meta["num_warps"], meta["num_stages"],
            meta.get("num_ctas", 1), bool(meta.get("launch_cooperative_grid")),
            bool(meta.get("launch_pdl")))


def _canonical_algo_key(meta: dict) -> tuple:
    """Order of algos without algo_index: numeric constexprs compare as numbers (BLOCK=64 before
    BLOCK=128), others by their repr, then the launch config."""
    values = []
    for a in meta["args"]:
        if a.get("constexpr"):
            v = a.get("value")
            if isinstance(v, (int, float)):
                values.append((a["name"], 0, float(v), ""))
            else:
                values.append((a["name"], 1, 0.0, str(a.get("value_repr", v))))
    return (tuple(values),) + algo_config(meta)[1:]


def _variant_order(v: Variant) -> tuple:
    hints = [h or 0 for _, h in v.hints]
    return (-sum(1 for h in hints if h), tuple(-h for h in hints), v.meta["symbol"])


def build_plan(variants: Sequence[Variant], name: str, header: str, embed_ptx_fallback: bool) -> dict:
    if not variants:
        raise LinkError("no variant metadata files given")
    codegen.c_identifier(name, "--name")

    # Whole-library consistency: one kernel, one C signature, unique symbols.
    by_symbol: dict[str, Variant] = {}
    ref = variants[0]
    for v in variants:
        other = by_symbol.setdefault(v.meta["symbol"], v)
        if other is not v:
            raise LinkError(f"duplicate symbol {v.meta['symbol']!r} in {other.path} and {v.path}; "
                            "give each variant its own --symbol")
        if v.meta["kernel_name"] != ref.meta["kernel_name"]:
            raise LinkError(f"mixed kernel names: {ref.label} is {ref.meta['kernel_name']!r} but "
                            f"{v.label} is {v.meta['kernel_name']!r}; link each kernel separately")
        if _signature(v.meta) != _signature(ref.meta):
            raise LinkError(f"different argument lists: {ref.label} has "
                            f"{_fmt_sig(ref.meta)} but {v.label} has {_fmt_sig(v.meta)}; every "
                            "variant of a library must come from the same --signature")
        codegen.target_arch(v.meta)  # raises on a non-CUDA target

    # Group into algos.
    algos: dict[tuple, list[Variant]] = {}
    for v in variants:
        algos.setdefault(algo_config(v.meta), []).append(v)
    ordered = _order_algos(algos)

    targets = sorted({v.arch for v in variants})
    plan_algos = []
    for config, members in ordered:
        per_target: dict[int, dict[tuple, Variant]] = {t: {} for t in targets}
        for v in members:
            slot = per_target[v.arch]
            other = slot.setdefault(v.hints, v)
            if other is not v:
                raise LinkError(f"duplicate variants: {other.label} and {v.label} have the same "
                                f"algo, target sm_{v.arch} and hints; remove one, or give them "
                                "different hints")
        _check_targets_complete(per_target, members)
        plan_algos.append({
            "info": codegen.algo_info(members[0].meta),
            "variants": [[v.meta for v in sorted(per_target[t].values(), key=_variant_order)]
                         for t in targets],
        })

    target_items = [{"arch": t, "has_ptx": False} for t in targets]
    if embed_ptx_fallback:
        for item in target_items:
            vs = [v for v in variants if v.arch == item["arch"]]
            with_ptx = [v for v in vs if v.meta.get("ptx_embedded")]
            without = [v for v in vs if not v.meta.get("ptx_embedded")]
            if with_ptx and without:
                raise LinkError(f"sm_{item['arch']} mixes PTX and no PTX: {with_ptx[0].label} "
                                f"embeds PTX but {without[0].label} does not; compile all of a "
                                "target's variants with or without --embed_ptx")
            item["has_ptx"] = bool(with_ptx)
        if not any(t["has_ptx"] for t in target_items):
            raise LinkError("--embed_ptx_fallback needs a target whose variants were compiled with "
                            "--embed_ptx; none was")

    return {
        "name": name,
        "header": header,
        "kernel_name": ref.meta["kernel_name"],
        "kernel_file": ref.meta.get("kernel_file", "?"),
        "targets": target_items,
        "algos": plan_algos,
    }


def _fmt_sig(meta: dict) -> str:
    return "(" + ", ".join(f"{n}: {t}" for n, t in _signature(meta)) + ")"


def _order_algos(algos: dict[tuple, list[Variant]]) -> list:
    indices = {}
    for config, members in algos.items():
        idx = {m.meta.get("algo_index") for m in members}
        if len(idx) > 1:
            a, b = _two_with_different(members, lambda m: m.meta.get("algo_index"))
            raise LinkError(f"{a.label} and {b.label} are the same algo but have algo_index "
                            f"{a.meta.get('algo_index')} and {b.meta.get('algo_index')}")
        indices[config] = idx.pop()
    with_index = [c for c, i in indices.items() if i is not None]
    if not with_index:
        keyed = sorted(algos.items(), key=lambda kv: _canonical_algo_key(kv[1][0].meta))
        return keyed
    if len(with_index) != len(algos):
        a = algos[with_index[0]][0]
        b = next(algos[c][0] for c, i in indices.items() if i is None)
        raise LinkError(f"{a.label} has an algo_index but {b.label} has none; give every algo "
                        "an index or none")
    seen: dict[int, tuple] = {}
    for config, idx in indices.items():
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise LinkError(f"{algos[config][0].label}: algo_index {idx!r} is not an integer")
        if idx in seen:
            raise LinkError(f"two algos share algo_index {idx}: {algos[seen[idx]][0].label} and "
                            f"{algos[config][0].label} differ in constexprs or launch config; "
                            "give each algo its own algo_index")
        seen[idx] = config
    if sorted(seen) != list(range(len(seen))):
        raise LinkError(f"algo_index values {sorted(seen)} are not 0..{len(seen) - 1}; number "
                        "the algos 0..N-1 without gaps")
    return [(seen[i], algos[seen[i]]) for i in range(len(seen))]


def _two_with_different(items, key):
    first = items[0]
    return first, next(x for x in items if key(x) != key(first))


def _check_targets_complete(per_target: dict[int, dict[tuple, Variant]], members) -> None:
    """Every algo must have every target, with the same set of hint variants: otherwise a call
    that works on one GPU would fail on another."""
    all_hints: dict[tuple, Variant] = {}
    for slot in per_target.values():
        for hints, v in slot.items():
            all_hints.setdefault(hints, v)
    for arch, slot in per_target.items():
        if not slot:
            example = members[0]
            raise LinkError(f"algo {codegen.algo_info(example.meta)!r} has no variant for "
                            f"sm_{arch} ({example.label} is its sm_{example.arch} variant); "
                            "compile every algo for every target")
        for hints, v in all_hints.items():
            if hints not in slot:
                raise LinkError(f"{v.label} has no sm_{arch} counterpart with the same hints "
                                f"(algo {codegen.algo_info(v.meta)!r}); compile every "
                                "specialization for every target")


def link(paths: Sequence[str], name: str, out_c: str, out_h: str, embed_ptx_fallback: bool,
         template_dir: str | None = None) -> None:
    variants = [load_variant(p) for p in paths]
    plan = build_plan(variants, name, os.path.basename(out_h), embed_ptx_fallback)
    c_text, h_text = codegen.render_dispatcher(plan, template_dir=template_dir)
    for flag, path, text in (("out_c", out_c, c_text), ("out_h", out_h, h_text)):
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        except OSError as e:
            raise LinkError(f"--{flag}: cannot write {path}: {e.strerror}") from None


def main(argv: list[str]) -> None:
    try:
        for flag in ("name", "out_c", "out_h"):
            if not getattr(FLAGS, flag):
                raise LinkError(f"--{flag} is required")
        link(argv[1:], FLAGS.name, FLAGS.out_c, FLAGS.out_h, FLAGS.embed_ptx_fallback,
             FLAGS.template_dir)
    except (LinkError, codegen.CodegenError) as e:
        if FLAGS.verbose:
            raise
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # a bug here: still one message and exit 1, like triton_aot.compile
        if FLAGS.verbose:
            raise
        print(f"error: internal error in triton_aot.link: {type(e).__name__}: {e} (rerun with "
              "--verbose for the traceback)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    app.run(main)
