"""`python -m triton_aot.compile`: one kernel specialisation -> cubin/IR + metadata JSON + C/H.

Flags are documented in docs/design.md. Every flag set is parsed into a fresh absl
FlagValues (never the global FLAGS), so the persistent worker (`--persistent_worker`, see
worker.py) can run many requests in one process without state leaking between them.

Arguments may come from files: `--flagfile=PATH` (absl format: one flag per line, `#`
comments) or `@PATH` (Bazel "multiline" param file: one argument per line).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, TextIO

from absl import flags

from triton_aot import abi
from triton_aot.errors import UserError, flag_error
from triton_aot.metadata import ArgInfo, TargetInfo, VariantMetadata

if TYPE_CHECKING:
    from triton_aot.compiler import CompiledVariant, Target
    from triton_aot.grid import Grid
    from triton_aot.signature import BoundSignature

OUTPUT_FLAGS = ("out_c", "out_h", "out_json", "out_ptx", "out_ttir", "out_ttgir", "out_llir",
                "out_cubin", "out_sass")
REQUIRED_FLAGS = ("kernel_path", "kernel_name", "signature", "grid", "num_warps", "num_stages",
                  "target", "symbol")


def define_flags(fv: flags.FlagValues) -> None:
    """All flags of the tool, defined on `fv` (a fresh FlagValues per invocation)."""
    s, i, b = flags.DEFINE_string, flags.DEFINE_integer, flags.DEFINE_boolean
    s("kernel_path", None, "Python file defining the @triton.jit kernel.", flag_values=fv)
    s("kernel_name", None, "Name of the @triton.jit function in --kernel_path.", flag_values=fv)
    s("signature", None, "One comma-separated entry per kernel parameter (upstream syntax): "
      "'*fp16:16, i32, BLOCK, 64'. An identifier entry is a constexpr whose value comes "
      "from --constexprs.", flag_values=fv)
    s("hints", "", "Extra hints by parameter name: 'x_ptr:16 n:16 stride:1'.", flag_values=fv)
    s("constexprs", "", "Constexpr values: 'BLOCK=128,DTYPE=tl.float16'.", flag_values=fv)
    s("grid", None, "1 to 3 grid expressions over integer arguments: 'cdiv(n, 128), 1, 1'.",
      flag_values=fv)
    i("num_warps", None, "Warps per CTA (power of two, 1..32).", flag_values=fv)
    i("num_stages", None, "Software pipelining stages.", flag_values=fv)
    i("num_ctas", 1, "CTAs per cluster (sm_90+ for > 1).", flag_values=fv)
    b("launch_cooperative_grid", False, "Launch as a cooperative grid.", flag_values=fv)
    b("launch_pdl", False, "Launch with programmatic dependent launch.", flag_values=fv)
    b("embed_ptx", False, "Embed the PTX in the C file too (JIT fallback for newer GPUs).",
      flag_values=fv)
    b("export_symbols", False, "Give the variant's C functions default visibility (hidden "
      "otherwise).", flag_values=fv)
    s("template_dir", None, "Directory of the C templates (default: $RULES_TRITON_TEMPLATE_DIR "
      "or the templates/ next to triton_aot).", flag_values=fv)
    s("target", None, "Compilation target: cuda:80, cuda:90, ...", flag_values=fv)
    s("symbol", None, "C symbol of the variant launcher.", flag_values=fv)
    i("algo_index", None, "Index of this variant's algorithm in the library.", lower_bound=0,
      flag_values=fv)
    for name in OUTPUT_FLAGS:
        s(name, None, f"Write the {name[4:]} output to this file.", flag_values=fv)
    flags.DEFINE_multi_string("import_path", [], "Extra sys.path root for imports of the "
                              "kernel file (repeatable).", flag_values=fv)
    b("verbose", False, "Print tracebacks with errors.", flag_values=fv)
    b("persistent_worker", False, "Run as a Bazel persistent worker (JSON protocol).",
      flag_values=fv)


@dataclass(frozen=True)
class ToolArgs:
    """Parsed flag values (plain data, detached from absl)."""

    kernel_path: str
    kernel_name: str
    signature: str
    hints: str
    constexprs: str
    grid: str
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
    outputs: dict  # flag name -> path, only the given ones
    import_paths: tuple
    verbose: bool


def expand_param_files(argv: Sequence[str]) -> list[str]:
    """Expands `@PATH` arguments; `--flagfile=` is left to absl.

    One argument per line: Bazel's "multiline" param file format, and also its default
    "shell" format, whose lines are single-quoted (shell-escaped) when they need to be.
    """
    out = []
    for arg in argv:
        if not (arg.startswith("@") and len(arg) > 1):
            out.append(arg)
            continue
        try:
            text = Path(arg[1:]).read_text(encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot read param file {arg[1:]!r}: {e.strerror}") from None
        for line in text.splitlines():
            if line.startswith("'"):
                try:
                    words = shlex.split(line)
                except ValueError:
                    words = []
                if len(words) != 1:
                    raise UserError(f"param file {arg[1:]!r}: cannot unquote line {line!r}")
                line = words[0]
            if line:
                out.append(line)
    return out


def parse_args(argv: Sequence[str]) -> ToolArgs:
    """argv without the program name."""
    fv = flags.FlagValues()
    define_flags(fv)
    try:
        rest = fv(["triton_aot.compile"] + expand_param_files(argv))
    except flags.Error as e:
        raise UserError(f"{e}; see `python -m triton_aot.compile --help`") from None
    if len(rest) > 1:
        raise UserError(f"unexpected positional argument {rest[1]!r}; all inputs are flags "
                        "(e.g. --kernel_path=FILE)")
    missing = [f"--{name}" for name in REQUIRED_FLAGS if getattr(fv, name) is None]
    if missing:
        raise UserError(f"missing required flag(s): {', '.join(missing)}")
    outputs = {name: getattr(fv, name) for name in OUTPUT_FLAGS if getattr(fv, name)}
    return ToolArgs(
        kernel_path=fv.kernel_path, kernel_name=fv.kernel_name, signature=fv.signature,
        hints=fv.hints or "", constexprs=fv.constexprs or "", grid=fv.grid,
        num_warps=fv.num_warps, num_stages=fv.num_stages, num_ctas=fv.num_ctas,
        launch_cooperative_grid=fv.launch_cooperative_grid, launch_pdl=fv.launch_pdl,
        embed_ptx=fv.embed_ptx, export_symbols=fv.export_symbols,
        template_dir=fv.template_dir or None, target=fv.target,
        symbol=fv.symbol, algo_index=fv.algo_index,
        outputs=outputs, import_paths=tuple(fv.import_path), verbose=fv.verbose)


def help_text() -> str:
    fv = flags.FlagValues()
    define_flags(fv)
    return ("usage: python -m triton_aot.compile --kernel_path=K.py --kernel_name=NAME "
            "--signature=... --grid=... --num_warps=N --num_stages=N --target=cuda:SM "
            "--symbol=SYM --out_json=F.json ...\n\n" + fv.get_help() + "\n")


# --------------------------------------------------------------------------- the work

_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _check_symbol(symbol: str) -> None:
    if not _C_IDENT.match(symbol) or symbol in abi.C_RESERVED:
        raise flag_error("symbol", f"{symbol!r} is not a valid C identifier",
                         "use letters, digits and _ (not starting with a digit)")


def run(args: ToolArgs) -> None:
    """Compiles and writes the requested outputs; raises UserError on any input problem."""
    from triton_aot.compiler import (CompileOptions, check_options, compile_kernel,
                                     hermetic_env, parse_target)
    from triton_aot.grid import parse_grid
    from triton_aot.kernel_loader import load_kernel
    from triton_aot.signature import bind, parse_constexprs, parse_hints, parse_signature

    # cheap checks first: they need neither triton nor the kernel
    if not args.outputs:
        raise UserError("no output requested; pass at least one of "
                        + ", ".join(f"--{f}" for f in OUTPUT_FLAGS))
    _check_symbol(args.symbol)
    target = parse_target(args.target)
    opts = CompileOptions(args.num_warps, args.num_stages, args.num_ctas,
                          args.launch_cooperative_grid, args.launch_pdl)
    check_options(opts, target)
    entries = parse_signature(args.signature)
    hints = parse_hints(args.hints)
    constexprs = parse_constexprs(args.constexprs)
    render_variant = _codegen() if {"out_c", "out_h"} & set(args.outputs) else None

    with hermetic_env(), load_kernel(args.kernel_path, args.kernel_name,
                                     args.import_paths) as kernel:
        sig = bind(entries, kernel.params, hints, constexprs, args.kernel_name)
        grid = parse_grid(args.grid, sig)
        compiled = compile_kernel(kernel, sig, target, opts,
                                  want_sass="out_sass" in args.outputs)

    meta = build_metadata(args, kernel.file_name, target, sig, grid, compiled)
    files: dict[str, bytes] = {}
    if render_variant is not None:
        try:
            c_text, h_text = render_variant(meta.to_dict(), compiled.cubin,
                                            compiled.ptx if args.embed_ptx else None,
                                            template_dir=args.template_dir)
        except (ValueError, OSError) as e:  # codegen.CodegenError, unreadable templates
            raise UserError(f"--out_c/--out_h: C generation failed: {e}") from e
        files["out_c"], files["out_h"] = c_text.encode(), h_text.encode()
    files["out_json"] = meta.to_json().encode()
    files["out_cubin"] = compiled.cubin
    for name in ("ptx", "ttir", "ttgir", "llir", "sass"):
        text = getattr(compiled, name)
        if text is not None:
            files[f"out_{name}"] = text.encode()
    if "out_ttir" in args.outputs and "out_ttir" not in files:
        raise flag_error("out_ttir", "Gluon kernels have no TTIR stage", "drop --out_ttir")
    for flag, path in args.outputs.items():
        write_atomic(path, files[flag])


def _codegen():
    try:
        from triton_aot.codegen import render_variant
    except ImportError as e:
        raise UserError(f"--out_c/--out_h: C generation (triton_aot.codegen) is unavailable: "
                        f"{e}") from e
    return render_variant


def build_metadata(args: ToolArgs, kernel_file: str, target: "Target", sig: "BoundSignature",
                   grid: "Grid", compiled: "CompiledVariant") -> VariantMetadata:
    arg_infos = []
    for a in sig.args:
        if a.is_constexpr:
            arg_infos.append(ArgInfo(a.name, "constexpr", True, value=a.value.value,
                                     value_repr=a.value.repr))
        else:
            arg_infos.append(ArgInfo(a.name, a.type, False, ctype=abi.c_type(a.type).ctype,
                                     hint=a.hint))
    return VariantMetadata(
        symbol=args.symbol,
        kernel_name=compiled.entry_name,
        kernel_file=kernel_file,
        target=TargetInfo(target.backend, target.arch, target.warp_size),
        algo_index=args.algo_index,
        args=tuple(arg_infos),
        constexprs={a.name: a.value.repr for a in sig.args if a.is_constexpr},
        num_warps=compiled.num_warps,
        num_stages=args.num_stages,
        num_ctas=compiled.num_ctas,
        launch_cooperative_grid=args.launch_cooperative_grid,
        launch_pdl=args.launch_pdl,
        shared=compiled.shared,
        global_scratch_size=compiled.global_scratch_size,
        global_scratch_align=compiled.global_scratch_align,
        profile_scratch_size=compiled.profile_scratch_size,
        profile_scratch_align=compiled.profile_scratch_align,
        grid=grid.source,
        grid_c=grid.c,
        triton_version=compiled.triton_version,
        cubin_sha256=hashlib.sha256(compiled.cubin).hexdigest(),
        cubin_size=len(compiled.cubin),
        ptx_embedded=bool(args.embed_ptx),
        export_symbols=bool(args.export_symbols),
    )


def write_atomic(path: str, data: bytes) -> None:
    """Write-then-rename, so that a failed or interrupted run never leaves a partial file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------- entry points


def run_command_line(argv: Sequence[str], err: TextIO) -> int:
    """Parses `argv` (without program name), runs, reports to `err`; returns the exit code."""
    verbose = "--verbose" in argv
    try:
        args = parse_args(argv)
        verbose = args.verbose
        run(args)
        return 0
    except UserError as e:
        if verbose:
            traceback.print_exc(file=err)
        err.write(f"error: {e.message}\n")
    except Exception as e:  # a bug in this tool or in triton: still one message, exit 1
        if verbose:
            traceback.print_exc(file=err)
        err.write(f"error: internal error in triton_aot: {type(e).__name__}: {e}"
                  + ("" if verbose else " (rerun with --verbose for the traceback)") + "\n")
    err.flush()
    return 1


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    sys.dont_write_bytecode = True
    if "--help" in argv or "-h" in argv or "--helpfull" in argv:
        sys.stdout.write(help_text())
        return 0
    if "--persistent_worker" in argv:
        from triton_aot import worker
        startup = [a for a in argv if a != "--persistent_worker"]
        def handle(request_args):
            return run_command_line(startup + request_args, sys.stderr)
        # warm in the worker process, each request in a disposable child (see worker.py)
        return worker.serve(handle, warm_up=worker.compile_tool_warm_up(handle))
    return run_command_line(argv, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
