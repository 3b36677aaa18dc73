"""The one module that talks to Triton: targets and options as Triton takes them, and
triton.compile for one specialisation, hermetically and without a GPU. Differences between
Triton versions (metadata fields, options) are handled here and nowhere else.

Hermeticity/determinism:
- Triton reads many environment variables (TRITON_*, MLIR_*, LLVM_*, PTXAS_OPTIONS, ...) that
  change the generated code or write dumps; they are removed for the duration of a compile.
- Its cache, home, dump and override directories, HOME and the temp dir all point into a
  fresh private directory that is deleted afterwards: nothing is read from or written to the
  user's ~/.triton, and no cache hit can hide a change.
- TRITON_DISABLE_LINE_INFO=1: no debug locations, so no absolute source paths in any output
  (outputs are byte-identical across checkout paths and cache directories).
- Options that Triton would otherwise take from the environment are passed explicitly.
Never touches triton.runtime.driver: the target is explicit (GPUTarget), not queried.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from triton_aot.compile.disasm import disassemble
from triton_aot.compile.kernel_loader import LoadedKernel
from triton_aot.contract.variant import MAXNREG_MAX, MAXNREG_MIN, TmaInfo
from triton_aot.core import launch_options, targets
from triton_aot.core import target as target_grammar
from triton_aot.core.target import Target, hip_warp_size  # noqa: F401 (the compile stage's)
from triton_aot.core.binding import BoundSignature
from triton_aot.core.errors import UserError, flag_error
from triton_aot.core.signature import ConstValue

# --------------------------------------------------------------------------- target/options


# The targets table itself (which SMs each triton compiles for) is triton_aot/core/targets.py.
SUPPORTED_ARCHS = frozenset(targets.CUDA_ARCHS)
SUPPORTED_HIP_ARCHS = frozenset(targets.HIP_ARCHS)


def installed_triton_version() -> str:
    """The installed triton's version, without importing it (parse_target runs before)."""
    from importlib import metadata
    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        import triton
        return triton.__version__


def supported_archs(version: str | None = None) -> frozenset:
    """The SMs this triton version compiles for (targets.cuda_archs)."""
    return targets.cuda_archs(version or installed_triton_version())


def parse_target(text: str) -> Target:
    """`--target` (core/target.py's grammar), for the installed triton's archs."""
    return target_grammar.parse(text, installed_triton_version())


@dataclass(frozen=True)
class CompileOptions:
    num_warps: int
    num_stages: int
    num_ctas: int = 1
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    maxnreg: int | None = None
    enable_fp_fusion: bool = True


def check_options(opts: CompileOptions, target: Target) -> None:
    """Checks what triton would assert on, with messages that name the flag."""
    if opts.num_warps not in (1, 2, 4, 8, 16, 32):
        raise flag_error("num_warps", f"{opts.num_warps} is not a power of two from 1 to 32",
                         "use e.g. 4 or 8")
    if opts.num_stages < 1:
        raise flag_error("num_stages", f"{opts.num_stages} is less than 1", "use e.g. 3")
    if opts.num_ctas not in (1, 2, 4, 8, 16):
        raise flag_error("num_ctas", f"{opts.num_ctas} is not 1, 2, 4, 8 or 16")
    if opts.maxnreg is not None and not MAXNREG_MIN <= opts.maxnreg <= MAXNREG_MAX:
        raise flag_error("maxnreg", f"{opts.maxnreg} is not a register count from {MAXNREG_MIN} "
                         f"to {MAXNREG_MAX}", "use e.g. 128 or 168")
    if not target.row.cuda_launch_options:
        # the options the table marks CUDA only, when set to anything but their default
        for o in launch_options.OPTIONS:
            if o.cuda_only and getattr(opts, o.name) != o.default:
                raise flag_error(o.name, f"the HIP launcher of rules_triton does not support "
                                 f"--{o.name} (target {target})",
                                 f"drop --{o.name} for hip targets")
        return
    by_name = launch_options.BY_NAME
    if opts.num_ctas > 1 and target.arch < by_name["num_ctas"].min_cuda_arch:
        raise flag_error("num_ctas", f"num_ctas={opts.num_ctas} needs sm_90 or newer but "
                         f"--target is {target}", "use --num_ctas=1 or a cuda:90+ target")
    if opts.launch_pdl and target.arch < by_name["launch_pdl"].min_cuda_arch:
        raise flag_error("launch_pdl", f"programmatic dependent launch needs sm_90 or newer but "
                         f"--target is {target}", "drop --launch_pdl or use a cuda:90+ target")


# --------------------------------------------------------------------------- environment

_ENV_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "NVPTX_", "AMDGCN_", "PROTON_")
_ENV_NAMES = ("PTXAS_OPTIONS", "DISABLE_PTXAS_OPT", "DISABLE_LLVM_OPT", "DISABLE_MMA_V3",
              "DISABLE_MMA_V5", "USE_IR_LOC", "ALLOW_LHS_TMEM_LAYOUT_CONVERSION")


@contextlib.contextmanager
def hermetic_env() -> Iterator[Path]:
    """A private scratch dir for one compile; process environment restored afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="triton_aot_"))
    saved_env = dict(os.environ)
    saved_tempdir = tempfile.tempdir
    try:
        for key in list(os.environ):
            if key.startswith(_ENV_PREFIXES) or key in _ENV_NAMES:
                del os.environ[key]
        dirs = {name: scratch / name for name in ("cache", "home", "dump", "override", "tmp")}
        for d in dirs.values():
            d.mkdir()
        os.environ.update({
            "TRITON_CACHE_DIR": str(dirs["cache"]),
            "TRITON_HOME": str(dirs["home"]),
            "TRITON_DUMP_DIR": str(dirs["dump"]),
            "TRITON_OVERRIDE_DIR": str(dirs["override"]),
            "TRITON_DISABLE_LINE_INFO": "1",
            "HOME": str(dirs["home"]),
            "XDG_CACHE_HOME": str(dirs["home"] / ".cache"),
            "TMPDIR": str(dirs["tmp"]),
        })
        # ptxas/cuobjdump inputs go through tempfile, which caches the temp dir
        tempfile.tempdir = str(dirs["tmp"])
        yield scratch
    finally:
        tempfile.tempdir = saved_tempdir
        os.environ.clear()
        os.environ.update(saved_env)
        shutil.rmtree(scratch, ignore_errors=True)


# --------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class CompiledVariant:
    entry_name: str  # cubin/hsaco entry point
    cubin: bytes  # the image: cubin, or hsaco for hip targets
    ptx: str | None  # None for hip
    ttir: str | None  # None for Gluon kernels
    ttgir: str
    llir: str
    sass: str | None  # only when asked for (runs cuobjdump from the triton wheel)
    amdgcn: str | None  # hip only: the AMDGCN assembly
    num_warps: int  # as compiled (warp specialisation may change the requested value)
    num_ctas: int
    shared: int
    global_scratch_size: int
    global_scratch_align: int
    profile_scratch_size: int
    profile_scratch_align: int
    triton_version: str
    tma: tuple[TmaInfo, ...] = ()  # one per host tensor descriptor argument, in order


def python_value(value: ConstValue) -> Any:
    """A constexpr value as the Python object Triton takes (dtypes are tl.dtype objects)."""
    if value.kind == "dtype":
        import triton.language as tl
        dtype = getattr(tl, value.value[3:], None)
        if not isinstance(dtype, tl.dtype):
            raise UserError(f"{value.repr} is not a dtype of this triton version")
        return dtype
    return value.value


def triton_inputs(sig: BoundSignature) -> tuple[dict, dict, dict]:
    """(signature, constexprs, attrs) for triton.compiler.ASTSource."""
    signature, constexprs, attrs = {}, {}, {}
    for a in sig.args:
        if a.is_constexpr:
            signature[a.name] = "constexpr"
            constexprs[a.name] = python_value(a.value)
        elif a.is_one:
            # as upstream and the JIT do: a value-1 integer becomes a constant of the kernel
            signature[a.name] = "constexpr"
            constexprs[a.name] = 1
        else:
            signature[a.name] = str(a.type)  # triton takes the plain spelling
            if a.hint == 16:
                attrs[(a.index, )] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


# The triton releases tools/version_matrix passes with (docs/triton_versions.md); the same range
# as rules/private/repositories/python_env.bzl's SUPPORTED_TRITON.
SUPPORTED_TRITON = ((3, 5), (3, 9))


def check_triton_version(version: str) -> None:
    """Refuses a triton outside the tested range, naming the range (not a confusing failure later)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    (lo, hi) = SUPPORTED_TRITON
    if not m or not lo <= (int(m.group(1)), int(m.group(2))) <= hi:
        raise UserError(f"triton {version} is not supported: rules_triton supports triton "
                        f"{lo[0]}.{lo[1]} to {hi[0]}.{hi[1]} (tools/locks/ has one lock file each)")


class _AstWithNum(types.ModuleType):
    """The `ast` module as triton 3.5's code generator expects it on Python >= 3.14: with
    `ast.Num` (removed in 3.14), which it builds for the implicit start and step of
    `range(n)` / `range(a, b)` loops. Everything else is the real `ast`."""

    def __init__(self) -> None:
        super().__init__("ast")
        self.Num = lambda n, **kw: ast.Constant(value=n, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(ast, name)


@contextlib.contextmanager
def _ast_num_for_code_generator() -> Iterator[None]:
    """triton 3.5 on Python >= 3.14: its code generator alone sees an `ast` with `Num`
    (3.6 and newer build ast.Constant); the real `ast` module is never changed."""
    from triton.compiler import code_generator
    their_ast = getattr(code_generator, "ast", None)
    if their_ast is not ast or hasattr(ast, "Num"):
        yield
        return
    code_generator.ast = _AstWithNum()
    try:
        yield
    finally:
        code_generator.ast = their_ast


def _backend_options(backend, opts: CompileOptions, target: Target, version: str):
    """The backend's options object for `opts`, every default fixed (none from the environment)."""
    # CUDAOptions.maxnreg: the PTX .maxnreg directive (parse_options drops unknown keys, so a
    # triton without it is detected below)
    extra = {} if opts.maxnreg is None else {"maxnreg": opts.maxnreg}
    try:
        options = backend.parse_options({**extra,
            "num_warps": opts.num_warps,
            "num_stages": opts.num_stages,
            "num_ctas": opts.num_ctas,
            "launch_cooperative_grid": opts.launch_cooperative_grid,
            "launch_pdl": opts.launch_pdl,
            # the JIT's default is knobs.language.default_fp_fusion (TRITON_DEFAULT_FP_FUSION):
            # here the algo's, never the environment's
            "enable_fp_fusion": opts.enable_fp_fusion,
            # defaults that triton would otherwise take from the environment at import time
            "ptx_options": "",
            # the launch-time options the build fixes (the capture refuses other values)
            **launch_options.COMPILED_AS,
        })
    except (AssertionError, ValueError) as e:
        raise UserError(f"--num_warps/--num_stages/--num_ctas: triton rejects the options: {e}")
    if opts.maxnreg is not None and getattr(options, "maxnreg", None) != opts.maxnreg:
        raise flag_error("maxnreg", f"triton {version} has no maxnreg option for "
                         f"{target}", "drop --maxnreg or use a triton that has it")
    return options


def compile_kernel(kernel: LoadedKernel, sig: BoundSignature, target: Target,
                   opts: CompileOptions, want_sass: bool = False) -> CompiledVariant:
    """Must run inside hermetic_env() (and inside load_kernel())."""
    import triton
    check_triton_version(triton.__version__)
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource, make_backend

    gpu_target = GPUTarget(target.backend, target.arch, target.warp_size)
    signature, constexprs, attrs = triton_inputs(sig)
    source_cls = ASTSource
    if getattr(kernel.fn, "is_gluon", lambda: False)():
        from triton.experimental.gluon._runtime import GluonASTSource
        source_cls = GluonASTSource  # @gluon.jit kernels start at TTGIR (no TTIR stage)
    src = source_cls(kernel.fn, signature, constexprs, attrs)
    backend = make_backend(gpu_target)
    options = _backend_options(backend, opts, target, triton.__version__)

    # triton 3.5 has no instrumentation_mode knob (added in 3.6)
    has_mode = hasattr(knobs.compilation, "instrumentation_mode")
    saved_mode = knobs.compilation.instrumentation_mode if has_mode else None
    if has_mode:
        knobs.compilation.instrumentation_mode = ""
    # triton prints PTX and ptxas logs to stdout on failure; stdout may be the worker's
    # protocol channel, so keep it clean (the exception carries the log)
    try:
        with contextlib.redirect_stdout(io.StringIO()), _ast_num_for_code_generator():
            compiled = triton.compile(src, target=gpu_target, options=options.__dict__)
    except Exception as e:
        raise UserError(_describe_failure(e, kernel, target, sig)) from e
    finally:
        if has_mode:
            knobs.compilation.instrumentation_mode = saved_mode

    md = compiled.metadata
    if target.is_hip:
        image, ptx, amdgcn, sass = compiled.asm["hsaco"], None, compiled.asm["amdgcn"], None
        if int(md.warp_size) != target.warp_size:
            raise UserError(f"internal error: triton compiled {target} for a wavefront of "
                            f"{md.warp_size}, not {target.warp_size}")
    else:
        image, ptx, amdgcn = compiled.asm["cubin"], compiled.asm["ptx"], None
        sass = disassemble(image, flag="--out_sass") if want_sass else None
    return CompiledVariant(
        entry_name=md.name,
        cubin=image,
        ptx=ptx,
        amdgcn=amdgcn,
        ttir=compiled.asm.get("ttir"),
        ttgir=compiled.asm["ttgir"],
        llir=compiled.asm["llir"],
        sass=sass,
        num_warps=int(md.num_warps),
        num_ctas=int(md.num_ctas),
        shared=int(md.shared or 0),
        global_scratch_size=int(getattr(md, "global_scratch_size", 0) or 0),
        global_scratch_align=int(getattr(md, "global_scratch_align", 1) or 1),
        profile_scratch_size=int(getattr(md, "profile_scratch_size", 0) or 0),
        profile_scratch_align=int(getattr(md, "profile_scratch_align", 1) or 1),
        triton_version=triton.__version__,
        tma=tma_infos(getattr(md, "tensordesc_meta", None), sig, target),
    )


# --------------------------------------------------------------------------- tensor descriptors

# Triton's device-side TMA element type -> the host CUtensorMapDataType its launcher passes to
# cuTensorMapEncodeTiled (backends/nvidia/driver.py TMA_DTYPE_DEVICE_TO_HOST, the same in
# 3.5-3.9; tests/compile/test_version_compat.py compares it with the installed triton's).
TMA_DTYPE_DEVICE_TO_HOST = {**{i: i for i in range(16)}, 8: 10, 9: 8, 10: 9}


def tma_infos(meta: Any, sig: BoundSignature, target: Target) -> tuple[TmaInfo, ...]:
    """How the launcher encodes each host tensor descriptor, from triton.compile's
    `metadata.tensordesc_meta` (one dict per descriptor argument, in order).

    Version differences (docs/design.md, "Host tensor descriptors"):
    - 3.5-3.8: {swizzle, elem_size, elem_type, block_size, fp4_padded}; 3.9 adds is_im2col.
    - The kernel's parameters for a descriptor are the same in 3.5-3.9 when it is lowered to TMA
      (metadata present): a 128-byte CUtensorMap (.param .align 64), then the shape as i32 and
      the strides as i64, one per dimension. Without metadata (below sm_90) it is decomposed
      into a pointer, shape and strides twice and padding flags (3.9 adds round_f32_to_tf32),
      which rules_triton does not launch: descriptors need cuda:90 or newer.
    - 3.9's TensorDescriptor(round_f32_to_tf32=True) switches fp32 to TFLOAT32 at launch; the
      C API has no such flag (TensorDescriptor's default, False, is what is encoded).
    """
    descs = [a for a in sig.args if a.type.is_tensordesc]
    if not descs:
        return ()
    if not target.has_tma or not meta or len(meta) != len(descs):
        raise UserError(f"internal error: triton lowered {len(meta or ())} of the {len(descs)} "
                        f"tensor descriptor(s) to TMA for {target}; rules_triton launches host "
                        "descriptors through TMA only (cuda:90 or newer)")
    infos = []
    for a, m in zip(descs, meta):
        if m.get("fp4_padded") or m.get("is_im2col"):
            raise UserError(f"tensor descriptor {a.name!r}: triton lowered it as "
                            f"{'fp4-padded' if m.get('fp4_padded') else 'im2col'}, which the "
                            "rules_triton launcher does not encode; use a plain tiled descriptor")
        infos.append(TmaInfo(data_type=TMA_DTYPE_DEVICE_TO_HOST[int(m["elem_type"])],
                             elem_size=int(m["elem_size"]), swizzle=int(m["swizzle"]),
                             box=tuple(int(b) for b in m["block_size"])))
    return tuple(infos)


# --------------------------------------------------------------------------- errors


def _describe_failure(e: Exception, kernel: LoadedKernel, target: Target,
                      sig: BoundSignature | None = None) -> str:
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import PTXASError

    values = [f"{a.name}={a.value.repr}" for a in (sig.args if sig else ()) if a.is_constexpr]
    with_ = f" with {', '.join(values)}" if values else ""

    context = f"(compiling kernel {kernel.name!r} from {kernel.file_name} for {target}{with_})"
    chain = _chain(e)
    comp = [x for x in chain if isinstance(x, CompilationError)]
    if comp:
        inner = comp[-1]
        after = chain[chain.index(inner) + 1:]
        message = inner.error_message or (f"{type(after[0]).__name__}: {after[0]}"
                                          if after else "compilation error")
        where, excerpt = _locate(inner)
        return f"{where}{message} {context}{excerpt}"
    ptxas = [x for x in chain if isinstance(x, PTXASError)]
    if ptxas:
        log = (ptxas[0].error_message or "").strip()
        return f"ptxas failed to assemble the generated PTX {context}:\n{log}"
    return f"triton failed {context}: {type(e).__name__}: {e}"


def _chain(e: BaseException) -> list[BaseException]:
    out = []
    while e is not None and e not in out:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _locate(err: Any) -> tuple[str, str]:
    """`file.py:LINE:COL: ` and an indented source excerpt for a CompilationError."""
    node = err.node
    lineno = getattr(node, "lineno", None)
    if lineno is None or not err.src:
        return "", ""
    fn = _find_jit_by_source(err.src)
    lines = err.src.split("\n")
    line_text = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    col = getattr(node, "col_offset", 0) or 0
    excerpt = f"\n    {line_text}\n    {' ' * col}^"
    if fn is None:
        return f"line {lineno} of the kernel function: ", excerpt
    file_name, begin = _jit_fn_file_line(fn)
    return f"{os.path.basename(file_name)}:{begin + lineno - 1}:{col + 1}: ", excerpt


def _find_jit_by_source(src: str) -> Any:
    import sys
    import warnings
    from triton.runtime.jit import JITCallable
    # isinstance() on every module global reads deprecated attributes too (torch's
    # distributed.reduce_op warns); an error message must not come with their warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in list(sys.modules.values()):
            for value in list(getattr(module, "__dict__", {}).values()):
                if isinstance(value, JITCallable) and value.src == src:
                    return value
    return None


def _jit_fn_file_line(fn: Any) -> tuple[str, int]:
    """(file, line of the `def`) of a JIT function: triton <= 3.8 has get_jit_fn_file_line,
    3.9 removed it and records the def line on the function."""
    try:
        from triton.runtime.jit import get_jit_fn_file_line
    except ImportError:
        return fn.__code__.co_filename if hasattr(fn, "__code__") else fn.fn.__code__.co_filename, \
            int(getattr(fn, "def_file_line_number", None) or fn.fn.__code__.co_firstlineno)
    return get_jit_fn_file_line(fn)
