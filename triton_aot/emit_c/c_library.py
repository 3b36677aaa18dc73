"""A kernel library's C file and public header, from the link tool's plan: every variant's
launcher, each distinct image embedded once, one selector per (algo, target), and the
link.py-compatible API (NAME, NAME_default, load_NAME, unload_NAME, NAME_get_num_algos,
NAME_get_algo_info). One translation unit per library; the runtime is compiled separately."""

from __future__ import annotations

import os
from dataclasses import dataclass

from triton_aot.contract import hint_patterns, library, tuning_table
from triton_aot.contract import tuning_table as tuning
from triton_aot.contract.variant import VariantRecord
from triton_aot.core import c_syntax
from triton_aot.core.c_syntax import CCode
from triton_aot.core.errors import UserError
from triton_aot.core.targets import arch_name
from triton_aot.emit_c import c_parts
from triton_aot.emit_c.c_parts import Image
from triton_aot.emit_c.c_render import Templates

STATIC = CCode("static ")


@dataclass(frozen=True)
class Variant:
    """A variant record with the images it names, as the link tool read them."""

    record: VariantRecord
    path: str
    cubin: Image
    ptx: Image | None

    @property
    def label(self) -> str:
        return f"{self.record.symbol} ({os.path.basename(self.path)})"


@dataclass(frozen=True)
class TargetSlot:
    arch: int | str  # SM number, or the gfx name of a hip target
    has_ptx: bool  # the dispatcher may fall back to this target's PTX


@dataclass(frozen=True)
class Algo:
    info: str
    variants: tuple[tuple[Variant, ...], ...]  # per target (plan order), dispatch order

    def variants_any(self) -> Variant:
        """One variant of the algo (they share constexprs and launch config)."""
        return next(v for per_target in self.variants for v in per_target)


@dataclass(frozen=True)
class TunedDispatch:
    """NAME_auto: the algo from a tuning table by the key arguments and the device's SM."""

    key: tuple[str, ...]  # integer C API arguments
    default_algo: int
    table: tuning.Table | None


@dataclass(frozen=True)
class LibraryPlan:
    name: str
    header: str  # basename of the public header
    targets: tuple[TargetSlot, ...]  # ascending arch
    algos: tuple[Algo, ...]  # algo_id order
    tuned: TunedDispatch | None = None

    @property
    def first(self) -> VariantRecord:
        return self.all_variants()[0].record

    def all_variants(self) -> list[Variant]:
        return [v for algo in self.algos for per_target in algo.variants for v in per_target]


def _selector_body(plan: LibraryPlan, variants: tuple[Variant, ...],
                   backend: c_parts.Backend = c_parts.CUDA) -> CCode:
    rargs = plan.first.c_args
    lines, used = [], set()
    for v in variants:
        rec = v.record
        kargs = rec.launcher_c_args
        call = (f"trt_dispatch_{c_syntax.ident(rec.symbol, 'symbol')}(trt_driver_table, "
                f"trt_context_key_, {c_parts.call_args(kargs, c_parts.stream_name(rargs))});")
        used.update(c_parts.c_param_names(kargs))
        hinted = [(c_syntax.param(name), hint) for name, hint in rec.hint_conditions]
        used.update(name for name, _ in hinted)
        # a pointer type (hipDeviceptr_t): its address is tested as an integer
        pointers = (set() if backend.pointer_is_integer
                    else {c_syntax.param(a.name) for a in rargs if a.is_pointer})
        conds = [(f"((uintptr_t){name} % 16 == 0)" if name in pointers else f"({name} % 16 == 0)")
                 if hint == 16 else f"({name} == 1)" for name, hint in hinted]
        if conds:
            lines.append(f"  if ({' && '.join(conds)})\n    return {call}\n")
        else:
            lines.append(f"  return {call}\n")
            break  # unconditional: later variants are unreachable (the link tool orders them)
    else:
        lines.append(f"  return {backend.invalid_value}; /* no variant's hints hold */\n")
    unused = [f"  (void){name};\n" for name in c_parts.c_param_names(rargs) if name not in used]
    return CCode("".join(unused + lines))


# The lookup's memo: one 64-bit word, the query's exact inputs (the SM, the call's hint class + 1,
# then each key's lead9, which is below 2**14 for any int64) above the answer's 8 bits. It fits
# up to 3 keys, SMs below 2**10, 15 hint classes and algo indices below 256; other libraries scan
# every time.
_MEMO_KEY_BITS, _MEMO_MAX_KEYS, _MEMO_SM_BITS, _MEMO_CLASS_BITS = 14, 3, 10, 4


def _memo_parts(num_keys: int, num_algos: int, sms: list[int], num_classes: int
                ) -> dict[str, CCode]:
    """The tuned lookup's memo of its last answer (tuned_table.c.tmpl): a serving loop calls
    NAME_auto with the same shape again and again, and the memo turns the nearest-points scan
    (every tuned point of the SM) into one compare. Racing threads store whole words (relaxed
    atomics: the word publishes nothing else), so a reader sees some query's right answer for
    exactly that query, or a miss."""
    if (num_keys > _MEMO_MAX_KEYS or num_algos > 256 or num_classes >= 1 << _MEMO_CLASS_BITS
            or any(sm >= 1 << _MEMO_SM_BITS for sm in sms)):
        return {k: CCode("") for k in ("memo_decl", "memo_locals", "memo_check", "memo_store")}
    shift = _MEMO_KEY_BITS * _MEMO_MAX_KEYS
    tag = " | ".join([f"((uint64_t)trt_sm << {shift + _MEMO_CLASS_BITS})",
                      f"((uint64_t)(trt_class + 1) << {shift})"] + [
        f"((uint64_t)trt_q[{i}] << {_MEMO_KEY_BITS * (_MEMO_MAX_KEYS - 1 - i)})"
        for i in range(num_keys)])
    return {
        "memo_decl": CCode(
            "/* The last answer: (SM, hint class + 1, each key's lead9) << 8 | algo; 0 until the\n"
            " * first lookup (an SM is never 0). Exact: the answer depends on nothing else. */\n"
            "static uint64_t trt_tuned_memo;\n\n"),
        "memo_locals": CCode("\n  uint64_t trt_tag, trt_memo;"),
        "memo_check": CCode(
            f"    trt_tag = {tag};\n"
            "    trt_memo = __atomic_load_n(&trt_tuned_memo, __ATOMIC_RELAXED);\n"
            "    if (trt_memo >> 8 == trt_tag) return (int)(trt_memo & 0xFFu);\n"),
        "memo_store": CCode(
            "    __atomic_store_n(&trt_tuned_memo, trt_tag << 8 | (uint64_t)trt_best, "
            "__ATOMIC_RELAXED);\n"),
    }


def _class_body(classes: list[str], pointers: set[str]) -> CCode:
    """The if-chain of trt_tuned_class: each pattern's conditions, as the selectors test them."""
    lines = []
    for i, pattern in enumerate(classes):
        conds = []
        for token in pattern.split():
            arg, _, hint = token.partition(":")
            arg = c_syntax.param(arg)
            if hint == "1":
                conds.append(f"({arg} == 1)")
            elif arg in pointers:
                conds.append(f"((uintptr_t){arg} % 16 == 0)")
            else:
                conds.append(f"({arg} % 16 == 0)")
        lines.append(f"  if ({' && '.join(conds) or '1'}) return {i};\n")
    return CCode("".join(lines) + "  return -1;\n")


@dataclass
class _TunedRows:
    """The tuned table's C rows per device: points (features, class, winner), slowdowns, the
    classes' allowed algos, the device index, and the header comment's notes."""
    rows: list
    slow_rows: list
    allowed_rows: list
    devices: list
    notes: list
    lead_rows: list  # per point: its keys' lead9 (for the waves)
    num_sms: list  # per device: tuning_table.Waves.num_sms, 0 without waves
    wave_tiles: tuple  # per algo: tuning_table.Waves.tiles (same on every device)


def _grids(plan: LibraryPlan) -> list:
    """Each algo's launch grid (its variants share it), None for an algo without variants."""
    return [next((v.record.grid for per_target in a.variants for v in per_target), None)
            for a in plan.algos]


def _tuned_rows(tuned, num_algos: int, classes: list, grids: list) -> _TunedRows:
    out = _TunedRows([], [], [], [], [], [], [], ())
    table = tuned.table
    for dev in (table.devices if table else ()):
        dev_rows = tuning.rows_of(table, dev)
        if not dev_rows:
            continue
        waves = tuning.waves_of(table, dev, grids)
        out.num_sms.append(waves.num_sms if waves else 0)
        out.wave_tiles = out.wave_tiles or (waves.tiles if waves else ())
        out.devices.append(f"    {{{dev.sm}, {len(out.rows)}, {len(dev_rows)}}}, /* "
                           f"{c_syntax.comment(dev.name)} */\n")
        for p, r in zip([q for q in dev.points if q.winner is not None], dev_rows):
            out.rows.append(f"    {{{', '.join(map(str, r.feats))}, {r.hint_class}, {r.winner}}}, "
                            f"/* {', '.join(f'{k}={v}' for k, v in zip(tuned.key, p.key))} */\n")
            out.slow_rows.append(f"    {{{', '.join(map(str, r.slow))}}},\n")
            out.lead_rows.append(f"    {{{', '.join(map(str, r.leads))}}},\n")
        for algos in tuning.class_algos(table, dev):
            out.allowed_rows.append("    {" + ", ".join("1" if a in algos else "0"
                                                        for a in range(num_algos)) + "},\n")
        winners = sorted({r.winner for r in dev_rows})
        out.notes.append(f" *   sm_{dev.sm} ({c_syntax.comment(dev.name)}): {len(dev_rows)} tuned "
                         f"point(s), algos {', '.join(map(str, winners))}\n")
        if waves:
            bound = [str(a) for a, t in enumerate(waves.tiles) if t]
            out.notes.append(f" *     waves over its {waves.num_sms} SMs for the SM-bound algos "
                             f"{', '.join(bound)}\n")
    if not out.notes:
        out.notes.append(" *   (no tuned device: every call launches the default algo)\n")
    if classes:
        out.notes.append(" *   hint classes, in the order the call's is found (the first whose hints "
                         "hold):\n" + "".join(f" *     {i}: {c_syntax.comment(c or '(no hints)')}\n"
                                               for i, c in enumerate(classes)))
    return out


def _tuned_tables(t: Templates, tuned, keys: list, num_algos: int, classes: list,
                  r: _TunedRows) -> CCode:
    """The C of trt_tuned_algo: the table's nearest-points vote, or the default algo."""
    nk = len(keys)
    key_params = CCode(", ".join(f"int64_t {k}" for k in keys))
    if not r.rows:
        unused = "".join(f"  (void){k};\n" for k in keys)
        return CCode(f"static int trt_tuned_algo(int trt_sm, int trt_class, {key_params}) {{\n"
                     f"  (void)trt_sm;\n  (void)trt_class;\n{unused}"
                     f"  return {tuned.default_algo};\n}}\n")
    table = tuned.table
    model = tuning.model_for(nk)
    feats = model.features_of(nk)
    class_dist = tuning.class_distances(table) if table else ((0,),)
    return t.render("tuned_table.c.tmpl", num_rows=len(r.rows), row_len=len(feats) + 2,
                    num_keys=nk, num_feats=len(feats), winner_col=len(feats) + 1,
                    rows=CCode("".join(r.rows)),
                    class_dist_rows=CCode("".join(
                        "    {" + ", ".join(map(str, row)) + "},\n" for row in class_dist)),
                    model_comment=CCode(_MODEL_COMMENTS[model.gemm]),
                    tile_helpers=CCode(_TILE_HELPERS if any(
                        term.tile for f in feats for term in f.terms) else ""),
                    feature_lines=_feature_lines(feats),
                    slow_rows=CCode("".join(r.slow_rows)), num_algos=num_algos,
                    allowed_rows=CCode("".join(r.allowed_rows)),
                    num_allowed=len(r.allowed_rows), num_class_slots=len(classes) + 1,
                    num_devices=len(r.devices), device_rows=CCode("".join(r.devices)),
                    log2_frac=CCode(",".join(
                        "\n    " * (i % 16 == 0) + f" {v}"[i % 16 == 0:]
                        for i, v in enumerate(tuning.LOG2_FRAC)) + "\n"),
                    key_leads=CCode("".join(f"    trt_q[{i}] = trt_lead9({k});\n"
                                            for i, k in enumerate(keys))),
                    **_wave_parts(r, num_algos, nk),
                    **_memo_parts(nk, num_algos, [d.sm for d in table.devices],
                                  len(classes)),
                    neighbours=model.neighbours,
                    class_token_penalty=model.class_token_penalty,
                    no_class_penalty=model.no_class_penalty,
                    distance_bias=model.distance_bias, weight=tuning.WEIGHT,
                    slow_cap=tuning.SLOW_CAP,
                    default_algo=tuned.default_algo, key_params=key_params)


_MODEL_COMMENTS = {
    False: "log2_q8 of each key value, then the sums of the first 2, 3, ... of those: the log2 "
           "of the leading keys' products",
    True: "of the (M, N, K) key, weighted: N and K, the output M * N, the aspect N / K, and the "
          "number of 64 x 64 and of 128 x 128 output tiles",
}

_TILE_HELPERS = """\
/* The value a lead keeps (the bits below its leading 9 cleared; >= 1). */
static int64_t trt_kept_value(int32_t lead) {
  int e = lead >> 8;
  int64_t m = 256 | (lead & 0xFF);
  return e >= 8 ? m << (e - 8) : m >> (8 - e);
}

/* log2 in 1/256 octaves of the number of tiles of `tile` that cover the value a lead keeps. */
static int32_t trt_tiles_log2_q8(int32_t lead, int64_t tile) {
  return trt_log2_of_lead(trt_lead9((trt_kept_value(lead) - 1) / tile + 1));
}

"""


def _wave_parts(r: _TunedRows, num_algos: int, num_keys: int) -> dict:
    """The C of tuning_table.Waves: tables and helper, the call's excess per algo, the vote's
    correction; empty where no algo is SM-bound (the vote is the slowdowns' alone)."""
    if not r.wave_tiles:
        return {"wave_tables": CCode(""), "wave_locals": CCode(""), "wave_query": CCode(""),
                "wave_vote": CCode("")}
    tiles = ", ".join("{%d, %d}" % (t or (0, 0)) for t in r.wave_tiles)
    tables = (
        "/* Per algo: the tile (rows, columns) of an algo whose programs the SM count bounds\n"
        " * (grid min(NUM_SMS, cdiv(M, rows) * cdiv(N, columns))), {0, 0} for the others; per\n"
        " * device: the SM count its points were timed with (0: not recorded); per point: its\n"
        " * keys' leads (tuning_table.Waves). */\n"
        f"static const int32_t trt_wave_tile[{num_algos}][2] = {{{tiles}}};\n"
        f"static const int64_t trt_wave_num_sms[{len(r.num_sms)}] = "
        f"{{{', '.join(map(str, r.num_sms))}}};\n"
        f"static const int32_t trt_tuned_leads[{len(r.lead_rows)}][{num_keys}] = {{\n"
        + "".join(r.lead_rows) + "};\n\n"
        "/* log2 in 1/256 octaves of whole waves * SMs / max(tiles, SMs) of this tile over the\n"
        " * output of keys with these leads (tuning_table.wave_excess). */\n"
        "static int32_t trt_wave_excess(const int32_t *trt_tile, const int32_t *trt_lead,\n"
        "                               int64_t trt_sms) {\n"
        "  int64_t trt_rows = (trt_kept_value(trt_lead[0]) - 1) / trt_tile[0] + 1;\n"
        "  int64_t trt_cols = (trt_kept_value(trt_lead[1]) - 1) / trt_tile[1] + 1;\n"
        "  int64_t trt_count, trt_waves;\n"
        f"  if (trt_rows > {tuning.TILE_COUNT_CAP}) trt_rows = {tuning.TILE_COUNT_CAP};\n"
        f"  if (trt_cols > {tuning.TILE_COUNT_CAP}) trt_cols = {tuning.TILE_COUNT_CAP};\n"
        "  trt_count = trt_rows * trt_cols;\n"
        "  trt_waves = (trt_count + trt_sms - 1) / trt_sms;\n"
        "  return trt_log2_of_lead(trt_lead9(trt_waves * trt_sms)) -\n"
        "         trt_log2_of_lead(trt_lead9(trt_count > trt_sms ? trt_count : trt_sms));\n"
        "}\n\n")
    query = (
        "      trt_sms = trt_wave_num_sms[trt_dv];\n"
        f"      for (trt_a = 0; trt_a < {num_algos}; ++trt_a)\n"
        "        trt_xq[trt_a] = trt_sms > 0 && trt_wave_tile[trt_a][0] > 0 ?\n"
        "            trt_wave_excess(trt_wave_tile[trt_a], trt_q, trt_sms) : 0;\n")
    vote = (
        "        if (trt_sms > 0)\n"
        f"          for (trt_a = 0; trt_a < {num_algos}; ++trt_a)\n"
        "            if (trt_wave_tile[trt_a][0] > 0)\n"
        "              trt_score[trt_a] += trt_w * (trt_xq[trt_a] - trt_wave_excess(\n"
        "                  trt_wave_tile[trt_a], trt_tuned_leads[trt_tuned_devices[trt_dv].first +\n"
        "                                                        trt_near[trt_i]], trt_sms));\n")
    return {"wave_tables": CCode(tables),
            "wave_locals": CCode(f"\n    int32_t trt_xq[{num_algos}];\n    int64_t trt_sms;"),
            "wave_query": CCode(query), "wave_vote": CCode(vote)}


def _feature_lines(feats) -> CCode:
    """The C of tuning_table.features for a query whose leads are in trt_q."""
    lines = []
    for i, f in enumerate(feats):
        expr = ""
        for j, term in enumerate(f.terms):
            value = (f"trt_log2_of_lead(trt_q[{term.key}])" if term.tile == 0
                     else f"trt_tiles_log2_q8(trt_q[{term.key}], {term.tile})")
            expr += ("-" if term.sign < 0 else "") + value if j == 0 else (
                f" {'-' if term.sign < 0 else '+'} {value}")
        lines.append(f"    trt_f[{i}] = {expr if f.weight == 1 else f'{f.weight} * ({expr})'};\n")
    return CCode("".join(lines))


def _render_tuned(t: Templates, plan: LibraryPlan, name: CCode, params: CCode,
                  call_args: CCode) -> tuple[CCode, CCode, CCode]:
    """(C, header declarations, header comment) of NAME_auto and NAME_auto_algo."""
    tuned = plan.tuned
    if tuned is None:
        return CCode(""), CCode(""), CCode("")
    keys = [c_syntax.param(k) for k in tuned.key]
    num_algos = len(plan.algos)
    classes = tuning.classes(tuned.table) if tuned.table else []
    rows = _tuned_rows(tuned, num_algos, classes, _grids(plan))
    tables = _tuned_tables(t, tuned, keys, num_algos, classes, rows)
    key_params = CCode(", ".join(f"int64_t {k}" for k in keys))
    rargs = plan.first.c_args
    pointers = {c_syntax.param(a.name) for a in rargs if a.is_pointer}
    args_params = CCode(params.split(", ", 1)[1])  # NAME_auto's parameters after the stream
    arg_names = [n for _, n in c_parts.c_params(rargs)]
    used = {c_syntax.param(tok.partition(":")[0]) for c in classes for tok in c.split()}
    class_params = CCode(", ".join(p for p, n in zip(args_params.split(", "), arg_names)
                                   if n in used) or "void")
    class_args = CCode(", ".join(n for n in arg_names if n in used))
    c = t.render("tuned.c.tmpl", name=name, params=params, call_args=call_args,
                 tables=tables, key_params=key_params, args_params=args_params,
                 class_params=class_params, class_args=class_args,
                 class_body=_class_body(classes, pointers),
                 auto_algo_unused=CCode("".join(f"  (void){n};\n" for n in arg_names
                                                if n not in used and n not in keys)),
                 key_args=CCode(", ".join(f"(int64_t){k}" for k in keys)),
                 key_names=CCode(", ".join(keys)), num_targets=len(plan.targets),
                 num_algos=num_algos)
    h = t.render("tuned.h.tmpl", name=name, params=params, args_params=args_params,
                 key_names=CCode(", ".join(keys)), default_algo=tuned.default_algo)
    comment = CCode(f" *\n * Tuned dispatch {name}_auto (key {', '.join(keys)}; default algo "
                    f"{tuned.default_algo}):\n" + "".join(rows.notes))
    return c, h, comment


@dataclass
class _Embedded:
    """What the library embeds: each distinct image once and each distinct kernel (image and
    launch description) once, in first-use order (the plan's order is deterministic)."""

    images: dict[str, Image]
    image_users: dict[str, list[str]]  # image id -> the variants (symbols) that use it
    kernels: dict[tuple, tuple[CCode, Variant, list[str]]]  # key -> (id, first user, users)
    kernel_of: dict[str, CCode]  # symbol -> kernel id

    @property
    def merged(self) -> list[list[str]]:
        return [users for users in self.image_users.values() if len(users) > 1]


def _embedded(plan: LibraryPlan) -> _Embedded:
    e = _Embedded({}, {}, {}, {})
    for v in plan.all_variants():
        for image, what in ((v.cubin, ""), (v.ptx, " (PTX)")):
            if image is not None:
                e.images.setdefault(image.id, image)
                e.image_users.setdefault(image.id, []).append(v.record.symbol + what)
        key = c_parts.kernel_key(v.record, v.cubin, v.ptx)
        if key not in e.kernels:
            e.kernels[key] = (CCode(f"k{len(e.kernels)}"), v, [])
        e.kernels[key][2].append(v.record.symbol)
        e.kernel_of[v.record.symbol] = e.kernels[key][0]
    return e


def _selectors(t: Templates, plan: LibraryPlan, name: CCode, params: CCode,
               backend: c_parts.Backend) -> tuple[CCode, CCode]:
    """One selector per (algo, target) and the trt_selectors table's rows (NULL where the algo
    is restricted to other targets, --algo_targets)."""
    selectors, rows = [], []
    for ai, algo in enumerate(plan.algos):
        names = []
        for target, variants in zip(plan.targets, algo.variants):
            if not variants:
                names.append("NULL")
                continue
            tag = CCode(backend.target_tag(target.arch))
            selectors.append(t.render("selector.c.tmpl", name=name, algo_id=ai, tag=tag,
                                      params=params, status_type=CCode(backend.status_type),
                                      body=_selector_body(plan, variants, backend)))
            names.append(f"trt_select_{name}_a{ai}_{tag}")
        rows.append(f"    {{{', '.join(names)}}},\n")
    return c_syntax.join(selectors), CCode("".join(rows))


def _target_kernels(plan: LibraryPlan, e: _Embedded, backend: c_parts.Backend
                    ) -> tuple[CCode, CCode]:
    """The kernels each target loads (load_NAME): one NULL-terminated list per target, and the
    lists' names in target order."""
    lists, names = [], []
    for ti, target in enumerate(plan.targets):
        kids: list[str] = []
        for algo in plan.algos:
            for v in algo.variants[ti]:
                kid = e.kernel_of[v.record.symbol]
                if kid not in kids:
                    kids.append(kid)
        list_name = f"trt_kernels_{backend.target_tag(target.arch)}"
        names.append(list_name)
        lists.append(f"static trt_kernel *const {list_name}[] = {{"
                     + "".join(f"&trt_kernel_{k}, " for k in kids) + "NULL};\n")
    return CCode("".join(lists)), CCode(", ".join(names))


def _target_rows(plan: LibraryPlan, backend: c_parts.Backend) -> CCode:
    return CCode("".join(
        f"    {{{backend.arch_c(tg.arch)}, {int(tg.has_ptx)}}}, /* "
        f"{arch_name(tg.arch)}{' (+PTX fallback)' if tg.has_ptx else ''} */\n"
        for tg in plan.targets))


def _comments(plan: LibraryPlan, merged: list[list[str]], backend: c_parts.Backend
              ) -> dict[str, CCode]:
    """The C file's and the header's comments: images embedded once, targets, and every algo's
    variants in dispatch order per target."""
    what = backend.image_word
    merge_c = "".join(f"\n * Identical {what}s embedded once: {', '.join(users)}."
                      for users in merged)
    merge_h = "".join(f" *   {what} shared by: {', '.join(users)}\n" for users in merged)
    if merge_h:
        merge_h = f" *\n * Variants whose {what}s are identical (embedded and loaded once):\n" + merge_h
    target_lines = [f" *   {arch_name(target.arch)}{' (+PTX fallback)' if target.has_ptx else ''}\n"
                    for target in plan.targets]
    algo_lines = []
    for ai, algo in enumerate(plan.algos):
        algo_lines.append(f" *   {ai}: {c_syntax.comment(algo.info)}\n")
        for target, variants in zip(plan.targets, algo.variants):
            if not variants:
                algo_lines.append(f" *       {arch_name(target.arch)}  (none: this algo is not "
                                  "compiled for it; returns the no-binary error)\n")
            for v in variants:
                algo_lines.append(f" *       {arch_name(target.arch)}  {v.record.symbol}  "
                                  f"{c_syntax.comment(v.record.hint_summary())}\n")
    # symbols are checked C identifiers
    return dict(merge_note=CCode(merge_c), merge_lines=CCode(merge_h),
                target_lines=CCode("".join(target_lines)), algo_lines=CCode("".join(algo_lines)))


def render(plan: LibraryPlan, *, template_dir: str | os.PathLike | None = None
           ) -> tuple[str, str, list[list[str]]]:
    """(C text, H text, merged): `merged` lists the groups of variants whose identical cubins
    are embedded once."""
    t = Templates(template_dir)
    name = c_syntax.ident(plan.name, "--name")
    first = plan.first
    rargs = first.c_args  # kernel arguments, then launch arguments
    backend = c_parts.backend_of(first)
    stream = c_parts.stream_name(rargs)
    algo_name = CCode("trt_algo_id" if "algo_id" in c_parts.c_param_names(rargs) else "algo_id")
    params = c_parts.param_list(rargs, stream, backend)
    call_args = c_parts.call_args(rargs, stream)
    e = _embedded(plan)
    if plan.tuned is not None and not backend.tuned_dispatch:
        raise UserError(f"tuned dispatch (NAME_auto) is not supported for {backend.name} "
                        "targets yet")
    tuned_c, tuned_h, tuned_lines = _render_tuned(t, plan, name, params, call_args)
    selectors, selector_rows = _selectors(t, plan, name, params, backend)
    target_kernel_lists, target_kernel_list_names = _target_kernels(plan, e, backend)
    values = dict(
        backend.values(),
        **_comments(plan, e.merged, backend),
        tuned=tuned_c,
        tuned_decls=tuned_h,
        tuned_lines=tuned_lines,
        name=name,
        guard=CCode(f"RULES_TRITON_{name.upper()}_H_"),
        header=c_syntax.string_body(os.path.basename(plan.header)),
        kernel_name=c_syntax.ident(first.kernel_name, "kernel_name"),
        kernel_file=c_syntax.comment(os.path.basename(first.kernel_file)),
        num_algos=len(plan.algos),
        num_targets=len(plan.targets),
        num_variants=len(plan.all_variants()),
        num_images=len(e.images),
        images=c_syntax.join([c_parts.render_image(t, img, e.image_users[iid])
                              for iid, img in e.images.items()], "\n"),
        kernels=c_syntax.join([c_parts.render_kernel(t, kid, v.record, v.cubin, v.ptx, users)
                               for kid, v, users in e.kernels.values()], "\n"),
        launchers=c_syntax.join([
            c_parts.render_launcher(t, v.record, e.kernel_of[v.record.symbol], STATIC)
            for v in plan.all_variants()], "\n"),
        selector_param_types=CCode(", ".join(
            ["const trt_driver *", "unsigned long long", backend.stream_type]
            + [ctype for ctype, _ in c_parts.c_params(rargs, backend)])),
        selectors=selectors,
        selector_rows=selector_rows,
        target_rows=_target_rows(plan, backend),
        target_kernel_lists=target_kernel_lists,
        target_kernel_list_names=target_kernel_list_names,
        all_kernels=CCode("".join(f"&trt_kernel_{kid}, " for kid, _, _ in e.kernels.values())),
        algo_info_rows=CCode("".join(f'    "{c_syntax.string_body(a.info)}",\n'
                                     for a in plan.algos)),
        params=params,
        call_args=call_args,
        algo_name=algo_name,
    )
    return (t.render("library.c.tmpl", **values), t.render("library.h.tmpl", **values),
            e.merged)


def _api_params(plan: LibraryPlan) -> tuple[list[library.Param], library.Param]:
    """(the C parameters NAME, NAME_default and NAME_auto share, NAME's algo_id parameter), as
    render() declares them in the header."""
    rargs = plan.first.c_args
    backend = c_parts.backend_of(plan.first)
    stream = c_parts.stream_name(rargs)
    carried = [a for a in rargs for _ in a.c_params]  # the kernel parameter of each C value
    params = [library.Param(str(stream), backend.stream_type, None, None)]
    params += [library.Param(str(name), ctype, a.name, a.type)
               for (ctype, name), a in zip(c_parts.c_params(rargs, backend), carried)]
    algo_name = "trt_algo_id" if "algo_id" in c_parts.c_param_names(rargs) else "algo_id"
    return params, library.Param(algo_name, "int", None, None)


def describe(plan: LibraryPlan, specialization_of: dict[str, int],
             tuning: library.Tuning | None) -> library.Library:
    """The library description of what render() writes (contract.library): its launching
    functions, algos, specializations (hint patterns by index) and variants.
    `specialization_of`: each variant's specialization index, by symbol."""
    params, algo_id = _api_params(plan)
    functions = [library.Function(plan.name, "algo", tuple(params + [algo_id])),
                 library.Function(f"{plan.name}_default", "default", tuple(params))]
    if plan.tuned is not None:
        functions.append(library.Function(f"{plan.name}_auto", "auto", tuple(params)))
    patterns: dict[int, hint_patterns.Hints] = {}
    variants = []
    for index, algo in enumerate(plan.algos):
        for per_target in algo.variants:
            for v in per_target:
                spec = specialization_of[v.record.symbol]
                patterns.setdefault(spec, hint_patterns.of_record(v.record))
                variants.append(library.Variant(v.record.symbol, index, spec, v.record.target))
    return library.Library(
        name=plan.name,
        header=os.path.basename(plan.header),
        backend=plan.first.target.backend,
        functions=tuple(functions),
        algos=tuple(library.Algo(i, a.info, tuning_table.record_fingerprint(a.variants_any().record))
                    for i, a in enumerate(plan.algos)),
        specializations=tuple(patterns[i] for i in sorted(patterns)),
        variants=tuple(variants),
        tuning=tuning)
