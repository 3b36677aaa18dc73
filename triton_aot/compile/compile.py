"""`python -m triton_aot.compile.compile`: one kernel specialisation -> variant record (JSON), cubin and
IR, and optionally a standalone variant C/H (upstream compile.py style).

Flags are documented in docs/design.md; the command-line convention (flag files, errors, exit
codes) is triton_aot.core.cli's. `--persistent_worker` serves Bazel's JSON worker protocol
(worker.py), one fresh flag set per request.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence, TextIO

from absl import flags

from triton_aot.compile import environment
from triton_aot.contract.variant import (Arg, AutotuneRecord, LaunchConfig, ResetRegion, Target,
                                         VariantRecord)
from triton_aot.core import abi, cli, targets
from triton_aot.core.atomic_write import write_atomic
from triton_aot.core.build_terms import in_build_terms
from triton_aot.core.errors import UserError, flag_error

if TYPE_CHECKING:
    from triton_aot.compile.triton_adapter import CompiledVariant
    from triton_aot.core.grid import Grid
    from triton_aot.core.binding import BoundSignature

OUTPUT_FLAGS = ("out_c", "out_h", "out_json", "out_ptx", "out_ttir", "out_ttgir", "out_llir",
                "out_cubin", "out_sass", "out_amdgcn", "out_hsaco")
# Outputs only one backend has (the image flag names the record's image) are
# targets.BACKENDS' to say.
# and exactly one of --kernel_path / --kernel_module
REQUIRED_FLAGS = ("kernel_name", "signature", "grid", "target", "symbol")
# --out_params alone: import the kernel and stop (a library's one import check)
IMPORT_CHECK_FLAGS = ("kernel_name", "target")


def define_flags(fv: flags.FlagValues) -> None:
    """All flags of the tool, defined on `fv` (a fresh FlagValues per invocation)."""
    s, i, b = flags.DEFINE_string, flags.DEFINE_integer, flags.DEFINE_boolean
    s("kernel_path", None, "Python file defining the @triton.jit kernel.", flag_values=fv)
    s("kernel_module", None, "Installed module defining the kernel, as in an import statement "
      "(e.g. liger_kernel.ops.rms_norm); instead of --kernel_path.", flag_values=fv)
    s("kernel_name", None, "Name of the @triton.jit function in --kernel_path.", flag_values=fv)
    s("signature", None, "One comma-separated entry per kernel parameter (upstream syntax): "
      "'*fp16:16, i32, BLOCK, 64'. An identifier entry is a constexpr whose value comes "
      "from --constexprs; None is the JIT's None argument (a constexpr). Trailing constexprs "
      "may be left out: they take their --constexprs value, their @triton.heuristics value or "
      "their Python default.", flag_values=fv)
    s("hints", "", "Extra hints by parameter name: 'x_ptr:16 n:16 stride:1'.", flag_values=fv)
    s("constexprs", "", "Constexpr values, Python spellings: "
      "'BLOCK=128,DTYPE=tl.float16,ACTIVATION=\'relu\''.", flag_values=fv)
    s("grid", None, "1 to 3 grid expressions over integer arguments: 'cdiv(n, 128), 1, 1'; "
      "also min(a, b), max(a, b), NUM_SMS and --launch_args.", flag_values=fv)
    s("launch_args", "", "Integers the grid uses that the kernel does not take, C API parameters "
      "after the kernel's arguments: 'n_rows: i32, tiles: i64'.", flag_values=fv)
    i("maxnreg", None, "Register cap per thread (ptxas .maxnreg), CUDA only.", flag_values=fv)
    flags.DEFINE_multi_string(
        "reset_to_zero", [], "Zero memory before each launch (Triton's reset_to_zero / "
        "pre_hook=init_to_zero): NAME=EXTENTS, NAME a pointer argument, EXTENTS 'count' (1-D) or "
        "'rows, cols, row_stride' (2-D, elements) in the grid's language; repeatable, e.g. "
        "--reset_to_zero='c_ptr=M, N, stride_cm'. CUDA only.", flag_values=fv)
    s("algo_targets", "", "The targets this variant's algo is restricted to ('cuda:90,cuda:100'; "
      "must include --target); the link tool then allows the algo to lack the others.",
      flag_values=fv)
    # Defaults as upstream triton/tools/compile.py's, so its command lines keep their meaning.
    i("num_warps", 1, "Warps per CTA (power of two, 1..32).", flag_values=fv)
    i("num_stages", 3, "Software pipelining stages.", flag_values=fv)
    i("num_ctas", 1, "CTAs per cluster (sm_90+ for > 1).", flag_values=fv)
    b("launch_cooperative_grid", False, "Launch as a cooperative grid.", flag_values=fv)
    b("launch_pdl", False, "Launch with programmatic dependent launch.", flag_values=fv)
    b("enable_fp_fusion", True, "Let LLVM and ptxas contract a * b + c into fma (Triton's "
      "default); --noenable_fp_fusion compiles as a launch with enable_fp_fusion=False does.",
      flag_values=fv)
    b("embed_ptx", False, "Embed the PTX in the C file too (JIT fallback for newer GPUs).",
      flag_values=fv)
    b("export_symbols", False, "Give the variant's C functions default visibility (hidden "
      "otherwise).", flag_values=fv)
    s("template_dir", None, "Directory of the C templates (default: $RULES_TRITON_TEMPLATE_DIR "
      "or the templates/ next to triton_aot).", flag_values=fv)
    s("target", None, "Compilation target: cuda:80, cuda:90, hip:gfx942, ...", flag_values=fv)
    s("symbol", None, "C symbol of the variant launcher.", flag_values=fv)
    i("algo_index", None, "Index of this variant's algorithm in the library.", lower_bound=0,
      flag_values=fv)
    i("specialization_index", None, "Index of this variant's hint pattern among the library's "
      "specializations (carried to the link's library description).", lower_bound=0,
      flag_values=fv)
    for name in OUTPUT_FLAGS:
        s(name, None, f"Write the {name[4:]} output to this file.", flag_values=fv)
    flags.DEFINE_multi_string("import_path", [], "Extra sys.path root for imports of the "
                              "kernel file (repeatable).", flag_values=fv)
    s("out_params", None, "Write the kernel's parameters (JSON) after importing it. Alone (no "
      "other output), the tool only imports the kernel: the rule runs this once per library, "
      "so an import failure is reported once, before any variant compiles.", flag_values=fv)
    s("library_targets", "", "With --out_params alone: every target of the library, comma "
      "separated (cuda:80,cuda:90), each checked as --target is, so that a wrong one is refused "
      "once, before any variant compiles.", flag_values=fv)
    environment.define_action_flags(fv)
    b("persistent_worker", False, "Run as a Bazel persistent worker (JSON protocol); given "
      "at start-up, not per request.", flag_values=fv)


@dataclass(frozen=True)
class ToolArgs:
    """Parsed flag values (plain data, detached from absl)."""

    kernel_path: Optional[str]
    kernel_module: Optional[str]
    kernel_name: str
    signature: str
    hints: str
    constexprs: str
    grid: str
    launch_args: str
    maxnreg: Optional[int]
    reset_to_zero: tuple
    algo_targets: str
    num_warps: int
    num_stages: int
    num_ctas: int
    launch_cooperative_grid: bool
    launch_pdl: bool
    embed_ptx: bool
    export_symbols: bool
    template_dir: Optional[str]
    target: str
    symbol: str
    algo_index: Optional[int]
    specialization_index: Optional[int]
    outputs: dict  # flag name -> path, only the given ones
    import_paths: tuple
    verbose: bool
    out_params: Optional[str] = None
    bazel_target: Optional[str] = None
    env_fingerprint: Optional[str] = None
    library_targets: str = ""
    enable_fp_fusion: bool = True


def to_tool_args(fv: flags.FlagValues) -> ToolArgs:
    """Parsed flags -> plain data, detached from absl."""
    outputs = {name: getattr(fv, name) for name in OUTPUT_FLAGS if getattr(fv, name)}
    required = IMPORT_CHECK_FLAGS if fv.out_params and not outputs else REQUIRED_FLAGS
    missing = [f"--{name}" for name in required if getattr(fv, name) is None]
    if fv.kernel_path is None and fv.kernel_module is None:
        missing.insert(0, "--kernel_path (or --kernel_module)")
    if fv.kernel_path is not None and fv.kernel_module is not None:
        raise UserError("--kernel_module: given together with --kernel_path; pass one of them")
    if missing:
        raise UserError(f"missing required flag(s): {', '.join(missing)}")
    return ToolArgs(
        kernel_path=fv.kernel_path, kernel_module=fv.kernel_module, kernel_name=fv.kernel_name, signature=fv.signature,
        hints=fv.hints or "", constexprs=fv.constexprs or "", grid=fv.grid,
        launch_args=fv.launch_args or "", maxnreg=fv.maxnreg,
        reset_to_zero=tuple(fv.reset_to_zero), algo_targets=fv.algo_targets or "",
        num_warps=fv.num_warps, num_stages=fv.num_stages, num_ctas=fv.num_ctas,
        launch_cooperative_grid=fv.launch_cooperative_grid, launch_pdl=fv.launch_pdl,
        embed_ptx=fv.embed_ptx, export_symbols=fv.export_symbols,
        template_dir=fv.template_dir or None, target=fv.target,
        symbol=fv.symbol, algo_index=fv.algo_index,
        specialization_index=fv.specialization_index,
        outputs=outputs, import_paths=tuple(fv.import_path), verbose=fv.verbose,
        out_params=fv.out_params, bazel_target=fv.bazel_target,
        env_fingerprint=fv.env_fingerprint, library_targets=fv.library_targets or "",
        enable_fp_fusion=fv.enable_fp_fusion)


def check_import(args: ToolArgs) -> None:
    """Imports the kernel for `args.target` and writes its parameters (--out_params); with
    --signature (and --constexprs), also binds them to the kernel's parameters, so that a
    signature every variant shares is refused once, here, rather than by every variant. The
    library's targets (--library_targets) are checked here too, against the targets table, and
    against the signature's host tensor descriptors (TMA)."""
    from triton_aot.core.signature import parse_constexprs, parse_signature
    from triton_aot.compile.triton_adapter import parse_target

    library = [_library_target(t, parse_target) for t in args.library_targets.split(",")
               if t.strip()]
    with _kernel(args, parse_target(args.target)) as kernel:
        if args.signature:
            sig = _bind(args, parse_signature(args.signature), {},
                        parse_constexprs(args.constexprs), kernel)
            for target in library:
                _check_tensordesc_target(sig, target, "library_targets")
        write_atomic(args.out_params, _params_json(kernel))


def _library_target(text: str, parse_target):
    """One entry of --library_targets, refused in its own flag's name."""
    try:
        return parse_target(text)
    except UserError as e:
        if e.message.startswith("--target"):
            raise UserError("--library_targets" + e.message[len("--target"):]) from None
        raise


def _bind(args: ToolArgs, entries, hints: dict, constexprs: dict, kernel):
    """The signature bound to the kernel's parameters, before heuristics run."""
    from triton_aot.compile import decorators
    from triton_aot.core.binding import bind
    from triton_aot.compile.kernel_loader import kernel_wrappers

    return bind(entries, kernel.params, hints, constexprs, args.kernel_name,
                defaults=decorators.param_defaults(kernel.fn),
                deferred=decorators.heuristic_names(kernel_wrappers(kernel)))


def _kernel(args: ToolArgs, target):
    from triton_aot.compile.build_env import kernel_for_target
    return kernel_for_target(target, args.kernel_path, args.kernel_name, args.import_paths,
                             args.kernel_module, args.bazel_target)


def _params_json(kernel) -> bytes:
    import json
    params = [{"name": p.name, "constexpr": p.is_constexpr} for p in kernel.params]
    record = {"kernel": kernel.name, "file": kernel.file_name, "params": params}
    return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()


# --------------------------------------------------------------------------- the work

def run(args: ToolArgs) -> None:
    """Compiles and writes the requested outputs; raises UserError on any input problem."""
    if args.env_fingerprint:
        environment.check(args.env_fingerprint)
    if args.out_params and not args.outputs:
        check_import(args)
        return
    request = _check_request(args)
    result, kernel = _compile(request)
    files = _output_files(request.args, result, kernel)
    for flag, path in [*request.args.outputs.items()] + (
            [("out_params", args.out_params)] if args.out_params else []):
        write_atomic(path, files[flag])


@dataclass(frozen=True)
class _Request:
    """A compile request whose flags passed every check that needs neither triton nor the
    kernel (those come first, so that a wrong flag is reported fast)."""

    args: ToolArgs
    target: Target
    opts: object  # triton_adapter.CompileOptions
    algo_targets: tuple | None
    entries: tuple
    hints: dict
    constexprs: dict


def _check_request(args: ToolArgs) -> _Request:
    from triton_aot.core.signature import parse_constexprs, parse_hints, parse_signature
    from triton_aot.compile.triton_adapter import CompileOptions, check_options, parse_target

    if not args.outputs:
        raise UserError("no output requested; pass at least one of "
                        + ", ".join(f"--{f}" for f in OUTPUT_FLAGS + ("out_params",)))
    try:
        abi.check_c_identifier(args.symbol, "--symbol")
    except UserError:
        raise flag_error("symbol", f"{args.symbol!r} is not a valid C identifier",
                         "use letters, digits and _ (not starting with a digit)") from None
    target = parse_target(args.target)
    opts = CompileOptions(args.num_warps, args.num_stages, args.num_ctas,
                          args.launch_cooperative_grid, args.launch_pdl, args.maxnreg,
                          args.enable_fp_fusion)
    check_options(opts, target)
    _check_backend_flags(args, target)
    if args.reset_to_zero and not target.row.reset_to_zero:
        # The HIP launcher has no memset path yet (and the fake HIP runtime no memset records to
        # test one against): refused rather than silently not zeroed.
        raise flag_error("reset_to_zero", f"is CUDA only for now (target {target})",
                         "zero the output before calling a hip library, or build this algo "
                         "for cuda targets")
    return _Request(args, target, opts, _algo_targets(args.algo_targets, target, parse_target),
                    tuple(parse_signature(args.signature)), parse_hints(args.hints),
                    parse_constexprs(args.constexprs))


def _compile(request: _Request) -> tuple["_WithRecord", object]:
    """Imports the kernel (for the target), binds the signature, applies the kernel's
    decorators, compiles; returns the compiled variant with its record, and the kernel."""
    from triton_aot.core.grid import parse_grid, parse_launch_args, parse_reset_to_zero
    from triton_aot.compile import decorators
    from triton_aot.compile.kernel_loader import kernel_wrappers
    from triton_aot.core.binding import with_values
    from triton_aot.compile.triton_adapter import check_options, compile_kernel

    args, target, opts = request.args, request.target, request.opts
    with _kernel(args, target) as kernel:
        wrappers = kernel_wrappers(kernel)
        sig = _bind(args, request.entries, request.hints, request.constexprs, kernel)
        _check_tensordesc_target(sig, target)
        # @triton.heuristics, for this variant: they see the launch options as in the JIT
        # (inside an autotuner, a config's) and may set them
        options = {"num_warps": opts.num_warps, "num_stages": opts.num_stages,
                   "num_ctas": opts.num_ctas}
        if opts.maxnreg is not None:
            options["maxnreg"] = opts.maxnreg
        # which autotune config the algo is: by what it set, before heuristics change options
        autotune = decorators.autotune_info(wrappers, sig, dict(options))
        found = decorators.apply_heuristics(
            wrappers, sig, explicit=[a.name for a in sig.args if a.value is not None],
            options=options, kernel_name=args.kernel_name,
            hints_text=" ".join(f"{a.name}:{a.hint}" for a in sig.args if a.hint))
        sig = with_values(sig, found.constexprs)
        heuristics = tuple(found.constexprs) + tuple(found.options)
        algo_opts = opts
        if found.options:
            args = dataclasses.replace(args, **{k: v for k, v in found.options.items()})
            opts = dataclasses.replace(opts, **found.options)
            check_options(opts, target)
        launch_args = parse_launch_args(args.launch_args, sig)
        grid = parse_grid(args.grid, sig, launch_args)
        reset_to_zero = parse_reset_to_zero(args.reset_to_zero, sig, launch_args,
                                            args.algo_index)
        if grid.device_attrs and not target.row.grid_device_attrs:
            raise flag_error("grid", f"{', '.join(grid.device_attrs)} is not supported for hip "
                             f"targets yet (target {target})", "write the grid without it")
        compiled = compile_kernel(kernel, sig, target, opts,
                                  want_sass="out_sass" in args.outputs)

    record = build_record(args, kernel.file_name, target, sig, grid, compiled, launch_args,
                          request.algo_targets, autotune, heuristics,
                          algo_opts if algo_opts != opts else None, reset_to_zero)
    if target.is_hip:
        check_hsaco(record, compiled.cubin)
    return _WithRecord(compiled, record, args), kernel


@dataclass(frozen=True)
class _WithRecord:
    """A compiled variant, its record, and the flags after heuristics changed them."""

    compiled: "CompiledVariant"
    record: VariantRecord
    args: ToolArgs


def _output_files(args: ToolArgs, result: _WithRecord, kernel) -> dict[str, bytes]:
    """The bytes of every output flag, by flag name."""
    compiled, record = result.compiled, result.record
    backend = record.target.row
    files: dict[str, bytes] = {}
    if {"out_c", "out_h"} & set(args.outputs):
        if not backend.standalone_c:
            raise flag_error("out_c", "the standalone variant C is CUDA only",
                             "link hip variants with python -m triton_aot.emit_c.link")
        from triton_aot.emit_c import c_variant
        try:
            c_text, h_text = c_variant.render(record, compiled.cubin,
                                              compiled.ptx if result.args.embed_ptx else None,
                                              template_dir=args.template_dir)
        except UserError as e:
            raise UserError(f"--out_c/--out_h: C generation failed: {e}") from e
        files["out_c"], files["out_h"] = c_text.encode(), h_text.encode()
    files["out_json"] = record.to_json().encode()
    files[f"out_{backend.image}"] = compiled.cubin
    for name in ("ptx", "ttir", "ttgir", "llir", "sass", "amdgcn"):
        text = getattr(compiled, name)
        if text is not None:
            files[f"out_{name}"] = text.encode()
    if "out_ttir" in args.outputs and "out_ttir" not in files:
        raise flag_error("out_ttir", "Gluon kernels have no TTIR stage", "drop --out_ttir")
    if args.out_params:
        files["out_params"] = _params_json(kernel)
    return files


def check_hsaco(record: VariantRecord, image: bytes) -> None:
    """The hsaco's kernel descriptor agrees with what the launcher passes: the entry point
    exists and its kernarg segment is exactly the launcher's arguments plus the two scratch
    pointers (a mismatch would make the GPU read arguments from the wrong offsets)."""
    from triton_aot.compile import hsaco
    kds = hsaco.kernel_descriptors(image)
    kd = kds.get(record.kernel_name)
    if kd is None:
        raise UserError(f"internal error: the hsaco has no kernel {record.kernel_name!r} "
                        f"(it has {sorted(kds)})")
    want = hsaco.kernarg_bytes([a.type for a in record.launcher_args])
    if kd.kernarg_size != want:
        raise UserError(f"internal error: {record.kernel_name} takes {kd.kernarg_size} bytes of "
                        f"kernel arguments but the launcher passes {want}")
    # LDS: the launcher asks for `shared` bytes of dynamic LDS (as Triton's HIP launcher does),
    # on top of the descriptor's static LDS; together they must fit the arch's LDS.
    limit = hsaco.lds_bytes(str(record.target.arch))
    total = kd.group_segment_fixed_size + record.shared
    if total > limit:
        raise UserError(f"{record.kernel_name} with {record.constexpr_summary()} "
                        f"num_stages={record.launch.num_stages} needs {total} bytes of LDS "
                        f"({kd.group_segment_fixed_size} static + {record.shared} dynamic) but "
                        f"{record.target.arch} has {limit}; use smaller blocks or fewer stages for "
                        "this target")


def _check_tensordesc_target(sig, target, flag: str = "target") -> None:
    """Host tensor descriptors are launched through TMA, which sm_90 introduced."""
    descs = [a.name for a in sig.args if a.type.is_tensordesc]
    if descs and not target.has_tma:
        newer = f"cuda:{targets.TMA_FROM} or newer"
        whom = f"build the library for {newer} only" if flag == "library_targets" \
            else f"compile it for {newer}"
        raise flag_error(flag, f"{target} has no TMA, but {', '.join(descs)} "
                         f"{'is a host tensor descriptor' if len(descs) == 1 else 'are host tensor descriptors'} "
                         "(tensordesc<...>), which the launcher encodes as a CUtensorMap",
                         f"{whom} (or pass plain pointers)")


def _algo_targets(text: str, target, parse_target) -> tuple[Target, ...] | None:
    """--algo_targets: the targets, which must include --target."""
    if not text.strip():
        return None
    parsed = []
    for entry in text.split(","):
        try:
            t = parse_target(entry)
        except UserError as e:
            raise flag_error("algo_targets", f"entry {entry.strip()!r}: {e.message}",
                             "list targets like cuda:90, separated by commas") from None
        if t in parsed:
            raise flag_error("algo_targets", f"{t} is listed twice", "list each target once")
        parsed.append(t)
    if target not in parsed:
        raise flag_error("algo_targets", f"--target {target} is not one of "
                         f"{', '.join(map(str, parsed))}",
                         "compile a restricted algo only for the targets it lists")
    return tuple(parsed)


def _check_backend_flags(args: ToolArgs, target) -> None:
    """Outputs that only the other backend has are an error, not silently skipped."""
    given = set(args.outputs) | ({"embed_ptx"} if args.embed_ptx else set())
    others = targets.backend_only_flags(target)
    wrong = [flag for flag in OUTPUT_FLAGS + ("embed_ptx",) if flag in others]
    for flag in wrong:
        if flag in given:
            raise flag_error(flag, f"--{flag} does not apply to target {target}",
                             "hip targets write --out_hsaco/--out_amdgcn, cuda targets "
                             "--out_cubin/--out_ptx/--out_sass")


def _relative_to_record(args: ToolArgs, flag: str) -> str | None:
    """Where the record's reader finds output `flag`: relative to the record's folder, so the
    record holds no absolute path and moves with its images."""
    path = args.outputs.get(flag)
    if path is None or "out_json" not in args.outputs:
        return None
    base = os.path.dirname(os.path.abspath(args.outputs["out_json"]))
    return os.path.relpath(os.path.abspath(path), base)


def build_record(args: ToolArgs, kernel_file: str, target, sig: "BoundSignature",
                 grid: "Grid", compiled: "CompiledVariant",
                 launch_args: Sequence = (), algo_targets: tuple | None = None,
                 autotune=None, heuristics: tuple = (), algo_opts=None,
                 reset_to_zero: Sequence = ()) -> VariantRecord:
    arg_records = []
    tma = iter(compiled.tma)
    for a in sig.args:
        if a.is_constexpr:
            arg_records.append(Arg(a.name, "constexpr", None, a.value.value, a.value.repr))
        elif a.type.is_tensordesc:
            arg_records.append(Arg(a.name, a.type, None, tma=next(tma)))
        else:
            arg_records.append(Arg(a.name, a.type, a.hint))
    return VariantRecord(
        symbol=args.symbol,
        kernel_name=compiled.entry_name,
        kernel_file=kernel_file,
        target=target,
        algo_index=args.algo_index,
        specialization_index=args.specialization_index,
        args=tuple(arg_records),
        launch=LaunchConfig(compiled.num_warps, args.num_stages, compiled.num_ctas,
                            args.launch_cooperative_grid, args.launch_pdl,
                            getattr(args, "maxnreg", None), args.enable_fp_fusion),
        shared=compiled.shared,
        global_scratch=(compiled.global_scratch_size, compiled.global_scratch_align),
        profile_scratch=(compiled.profile_scratch_size, compiled.profile_scratch_align),
        grid=grid.source,
        grid_c=grid.c,
        triton_version=compiled.triton_version,
        cubin_file=_relative_to_record(args, f"out_{target.row.image}"),
        cubin_sha256=hashlib.sha256(compiled.cubin).hexdigest(),
        cubin_size=len(compiled.cubin),
        ptx_file=_relative_to_record(args, "out_ptx") if args.embed_ptx else None,
        ptx_embedded=bool(args.embed_ptx),
        export_symbols=bool(args.export_symbols),
        launch_args=tuple(Arg(a.name, a.type) for a in launch_args),
        algo_targets=algo_targets,
        autotune=(None if autotune is None else
                  AutotuneRecord(tuple(autotune.key), autotune.config)),
        heuristics=tuple(heuristics),
        algo_launch=(None if algo_opts is None else LaunchConfig(
            algo_opts.num_warps, algo_opts.num_stages, algo_opts.num_ctas,
            args.launch_cooperative_grid, args.launch_pdl, algo_opts.maxnreg,
            args.enable_fp_fusion)),
        reset_to_zero=tuple(ResetRegion(r.name, r.source, r.c) for r in reset_to_zero),
    )


# --------------------------------------------------------------------------- entry points


def _run(fv: flags.FlagValues, _: list[str]) -> None:
    try:
        run(to_tool_args(fv))
    except UserError as e:
        if not fv.bazel_target:
            raise
        # a build's action: the error names the target and its attributes, not this tool's flags
        raise UserError(in_build_terms(e.message, fv.bazel_target)) from e


TOOL = cli.Tool(
    module="triton_aot.compile.compile",
    usage="python -m triton_aot.compile.compile --kernel_path=K.py --kernel_name=NAME --signature=... "
          "--grid=... --target=cuda:SM --symbol=SYM --out_json=F.json --out_cubin=F.cubin ...",
    define_flags=define_flags,
    run=_run,
)


def run_command_line(argv: Sequence[str], err: TextIO) -> int:
    """Parses `argv` (without program name), runs, reports to `err`; returns the exit code."""
    return cli.run_command_line(TOOL, argv, err)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--persistent_worker" in argv:
        from triton_aot.compile import worker
        from triton_aot.compile.request_key import request_key

        # warm in the worker process, each request in a child of its key (see worker.py)
        return worker.serve_tool(TOOL.module, argv, lambda a: run_command_line(a, sys.stderr),
                                 worker.compile_tool_warm_up, request_key,
                                 output_flags=OUTPUT_FLAGS + ("out_params",))
    return cli.main(TOOL, argv)


if __name__ == "__main__":
    sys.exit(main())
