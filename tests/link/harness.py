"""Test helpers: fabricate variant metadata, render + link + compile libraries, run C programs
against the fake driver.

Nothing here depends on where the checkout lives.  Tools and inputs can be injected (Bazel passes
them in the sandbox); otherwise they are found or built:

  RULES_TRITON_CC             C compiler (default: cc on PATH)
  RULES_TRITON_CXX            C++ compiler (default: c++ / g++ on PATH)
  RULES_TRITON_CUDA_INCLUDE   directory holding cuda.h (default: the installed triton package's
                              backends/nvidia/include, found without importing triton)
  RULES_TRITON_FAKE_CUDA_DIR  directory holding a prebuilt fake libcuda.so.1 (default: built from
                              tests/fake_cuda/fake_cuda.c into a temporary directory)
  RULES_TRITON_TEMPLATE_DIR   template directory (read by triton_aot.emit_c.c_render itself)
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE_SRC_DIR = HERE.parent / "fake_cuda"
PROGS = HERE / "progs"
REPO_ROOT = HERE.parent.parent  # for PYTHONPATH of the link tool subprocess

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from triton_aot.contract import record_reader, variant as record_mod  # noqa: E402
from triton_aot.core import abi, signature  # noqa: E402
from triton_aot.core import target as target_grammar  # noqa: E402
from triton_aot.emit_c import c_variant  # noqa: E402

RUNTIME_DIR = REPO_ROOT / "runtime"  # trt_runtime.c/.h: compiled into every library

# Strict flags for everything generated: it must stay warning-free for users who build -Werror.
C_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow",
           "-Wstrict-prototypes", "-Wmissing-prototypes"]
CXX_FLAGS = ["-x", "c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow"]
LINK_LIBS = ["-ldl", "-lpthread"]


def _which(env: str, *names: str) -> str:
    if os.environ.get(env):
        return os.environ[env]
    for n in names:
        found = shutil.which(n)
        if found:
            return found
    raise RuntimeError(f"no {'/'.join(names)} on PATH; set {env}")


def cc() -> str:
    return _which("RULES_TRITON_CC", "cc", "gcc", "clang")


def cxx() -> str:
    return _which("RULES_TRITON_CXX", "c++", "g++", "clang++")


def cuda_include() -> str:
    if os.environ.get("RULES_TRITON_CUDA_INCLUDE"):
        given = os.environ["RULES_TRITON_CUDA_INCLUDE"]
        # Bazel passes the header itself ($(rootpath ...)); the compiler wants its directory.
        return str(Path(given).parent) if given.endswith(".h") else given
    spec = importlib.util.find_spec("triton")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("cannot find cuda.h: install triton or set RULES_TRITON_CUDA_INCLUDE")
    inc = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "include"
    if not (inc / "cuda.h").is_file():
        raise RuntimeError(f"no cuda.h in {inc}; set RULES_TRITON_CUDA_INCLUDE")
    return str(inc)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, errors="replace",
                       **kw)
    if p.returncode != 0:
        raise AssertionError(f"command failed ({p.returncode}): {' '.join(map(str, cmd))}\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


def build_fake_cuda(out_dir: Path, *, with_ctx_id: bool = True) -> Path:
    """Directory with libcuda.so.1 (the fake). Honours RULES_TRITON_FAKE_CUDA_DIR for the
    default flavour."""
    if with_ctx_id and os.environ.get("RULES_TRITON_FAKE_CUDA_DIR"):
        return Path(os.environ["RULES_TRITON_FAKE_CUDA_DIR"])
    out_dir.mkdir(parents=True, exist_ok=True)
    defines = [] if with_ctx_id else ["-DFAKE_CUDA_NO_CTX_GET_ID"]
    run([cc(), "-shared", "-fPIC", "-O1", *C_FLAGS, *defines, f"-I{cuda_include()}",
         "-Wl,-soname,libcuda.so.1", "-o", out_dir / "libcuda.so.1",
         FAKE_SRC_DIR / "fake_cuda.c", "-lpthread"])
    return out_dir


# ---- metadata -------------------------------------------------------------------------------

PARAM_SIZE = {"i1": 1, "i8": 1, "u1": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2,
              "i32": 4, "u32": 4, "fp32": 4, "i64": 8, "u64": 8, "fp64": 8}


def type_json(ty: str) -> dict:
    """A type's record form (core/arg_type.py's JSON), from its --signature spelling."""
    return signature.parse_type(ty, "test type").to_json()


def arg(name: str, ty: str, hint: int | None = None) -> dict:
    return {"name": name, "type": type_json(ty), "ctype": abi.c_type(ty).ctype, "hint": hint}


def tensordesc(name: str, dtype: str, block: list[int], *, data_type: int, elem_size: int,
               swizzle: int, box: list[int] | None = None) -> dict:
    """A host tensor descriptor argument with the TMA encoding triton.compile would record."""
    return {"name": name, "type": type_json(f"tensordesc<{dtype}[{', '.join(map(str, block))}]>"),
            "tma": {"data_type": data_type, "elem_size": elem_size, "swizzle": swizzle,
                    "box": list(box or block)}}


def constexpr(name: str, value) -> dict:
    return {"name": name, "type": {"kind": "constexpr"}, "value": value,
            "value_repr": repr(value)}


def variant(symbol: str, args: list[dict], *, kernel_name: str = "k", arch: int = 90,
            algo_index: int | None = None, num_warps: int = 4, num_stages: int = 3,
            num_ctas: int = 1, cooperative: bool = False, pdl: bool = False, shared: int = 0,
            global_scratch: tuple[int, int] = (0, 1), profile_scratch: tuple[int, int] = (0, 1),
            grid_c=("1", "1", "1"), grid: tuple[str, str, str] | None = None,
            ptx_embedded: bool = False,
            launch_args: list[tuple[str, str]] | None = None, maxnreg: int | None = None,
            algo_targets: list[str] | None = None) -> dict:
    meta = {
        "format": record_mod.FORMAT,
        "symbol": symbol,
        "kernel_name": kernel_name,
        "kernel_file": f"{kernel_name}.py",
        "target": {"backend": "cuda", "arch": arch, "warp_size": 32},
        "algo_index": algo_index,
        "args": args,
        "num_warps": num_warps, "num_stages": num_stages, "num_ctas": num_ctas,
        "launch_cooperative_grid": cooperative, "launch_pdl": pdl,
        "shared": shared,
        "global_scratch_size": global_scratch[0], "global_scratch_align": global_scratch[1],
        "profile_scratch_size": profile_scratch[0], "profile_scratch_align": profile_scratch[1],
        "grid": list(grid or grid_c), "grid_c": list(grid_c),
        "triton_version": "3.6.0",
        "cubin_file": f"{symbol}.cubin", "cubin_sha256": "0" * 64, "cubin_size": 0,
        "ptx_embedded": ptx_embedded, "ptx_file": f"{symbol}.ptx" if ptx_embedded else None,
    }
    if launch_args:
        meta["launch_args"] = [{"name": n, "type": type_json(t), "ctype": abi.c_type(t).ctype}
                               for n, t in launch_args]
    if maxnreg is not None:
        meta["maxnreg"] = maxnreg
    if algo_targets is not None:
        meta["algo_targets"] = [target_grammar.parse(t).to_dict() for t in algo_targets]
    return meta


def launcher_args(meta: dict) -> list[dict]:
    """The kernel's parameters as the record says (constexprs and :1 arguments dropped)."""
    return [{"name": a.name, "type": a.type} for a in record_reader.read(meta).launcher_args]


def render_variant(meta: dict, cubin: bytes, ptx: str | None, **kw) -> tuple[str, str]:
    """A standalone variant's C/H from a metadata dict (validated as the compile tool would)."""
    return c_variant.render(record_reader.read(meta), cubin, ptx, **kw)


def write_record(out_dir: Path, meta: dict, cubin: bytes | None = None,
                 ptx: str | None = None, name: str | None = None) -> Path:
    """A record and the images it names, as the compile tool writes them (fake images unless
    given)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / (name or f"{meta['symbol']}.json")
    path.write_text(json.dumps(meta, indent=1))
    if meta.get("cubin_file"):
        (out_dir / meta["cubin_file"]).write_bytes(cubin if cubin is not None else fake_image(meta))
    if meta.get("ptx_file"):
        (out_dir / meta["ptx_file"]).write_bytes(
            (ptx or fake_image(meta, "ptx").decode()).encode())
    return path


def fake_image(meta: dict, kind: str = "cubin", tag: str | None = None) -> bytes:
    """A fake driver image naming the variant, its target and its kernel parameter sizes."""
    sizes = []
    for a in record_reader.read(meta).launcher_args:
        if a.is_tensordesc:  # the CUtensorMap, the shape as i32, the strides as i64
            sizes += [128] + [4] * a.type.rank + [8] * a.type.rank
        else:
            sizes.append(8 if a.is_pointer else PARAM_SIZE[a.type])
    sizes += [8, 8]
    tag = tag or (meta["symbol"] + (".ptx" if kind == "ptx" else ""))
    return (f"TRTFAKE1 tag={tag} kind={kind} sm={meta['target']['arch']} "
            f"name={meta['kernel_name']} params={','.join(map(str, sizes))}\n").encode()


# ---- building -------------------------------------------------------------------------------


@dataclass
class Library:
    dir: Path
    name: str
    sources: list[Path] = field(default_factory=list)
    so: Path | None = None

    @property
    def header(self) -> Path:
        return self.dir / f"{self.name}.h"


def link_tool(args: list[str], check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    p = subprocess.run([sys.executable, "-m", "triton_aot.emit_c.link", *args], capture_output=True,
                       text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"link failed: {p.stderr}")
    return p


def generate(out_dir: Path, name: str, metas: list[dict], *, images: dict | None = None,
             embed_ptx_fallback: bool = False, link_flags: tuple = ()) -> Library:
    """Writes every variant's record and images (fake images unless `images` maps symbol ->
    (cubin, ptx)) and links the library. Returns the library's sources (its C file and the
    runtime)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = Library(out_dir, name)
    jsons = []
    for meta in metas:
        cubin, ptx = (images or {}).get(meta["symbol"], (None, None))
        jsons.append(str(write_record(out_dir, meta, cubin, ptx)))
    flags = [f"--name={name}", f"--out_c={out_dir / name}.c", f"--out_h={out_dir / name}.h"]
    if embed_ptx_fallback:
        flags.append("--embed_ptx_fallback")
    link_tool(flags + list(link_flags) + sorted(jsons))
    lib.sources += [out_dir / f"{name}.c", RUNTIME_DIR / "trt_runtime.c"]
    return lib


def compile_library(lib: Library, *, cplusplus: bool = False, extra: tuple = ()) -> Path:
    """Compiles the generated sources into lib<name>.so (objects first, so each TU is checked
    with the strict flags), linking nothing CUDA."""
    objs = []
    for src in lib.sources:
        obj = lib.dir / (src.stem + (".cc.o" if cplusplus else ".o"))
        flags = CXX_FLAGS if cplusplus else C_FLAGS
        run([cxx() if cplusplus else cc(), *flags, "-O2", "-fPIC", *extra,
             f"-I{cuda_include()}", f"-I{lib.dir}", f"-I{RUNTIME_DIR}", "-c", src, "-o", obj])
        objs.append(obj)
    so = lib.dir / (f"lib{lib.name}{'_cc' if cplusplus else ''}.so")
    run([cxx() if cplusplus else cc(), "-shared", *extra, "-o", so, *objs, *LINK_LIBS])
    lib.so = so
    return so


def build(out_dir: Path, name: str, metas: list[dict], **kw) -> Library:
    lib = generate(out_dir, name, metas, **kw)
    compile_library(lib)
    return lib


def compile_program(lib: Library, prog: str, out: Path, *, cplusplus: bool = False,
                    with_fake: bool = True, fake_dir: Path | None = None,
                    extra: tuple = ()) -> Path:
    """Builds tests/link/progs/<prog> against the library (and the fake's control API)."""
    compiler = cxx() if cplusplus else cc()
    flags = CXX_FLAGS if cplusplus else C_FLAGS
    cmd = [compiler, *flags, "-O1", *extra, f"-I{cuda_include()}", f"-I{lib.dir}", f"-I{FAKE_SRC_DIR}",
           f"-I{PROGS}", f"-DLIB_HEADER=\"{lib.header.name}\"", PROGS / prog, "-x", "none", "-o", out,
           str(lib.so), f"-Wl,-rpath,{lib.so.parent}"]
    if with_fake:
        cmd += [f"-L{fake_dir}", "-l:libcuda.so.1"]
    run(cmd + ["-lpthread"])
    return out


def run_program(exe: Path, args=(), *, fake_dir: Path | None, check: bool = True,
                timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if fake_dir is not None:
        env["LD_LIBRARY_PATH"] = str(fake_dir)
    p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{exe.name} {' '.join(map(str, args))} failed ({p.returncode}):\n"
                             f"{p.stdout}\n{p.stderr}")
    return p
