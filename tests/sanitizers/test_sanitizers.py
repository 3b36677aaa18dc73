"""The generated runtime under ThreadSanitizer and AddressSanitizer + UBSan, against the fake driver.

Libraries are generated the way the rules generate them (the link tool over variant records,
triton_aot.emit_c.link writing the library C, grids through triton_aot.core.grid), with fake driver images
instead of cubins. The library, the fake libcuda.so.1 and the test program are all built with
the sanitizer. Programs:

  race.c     32 threads calling first at once, three contexts on two devices, load/unload loops
             in two contexts while a third launches, unload in one context while another keeps
             launching, calls without a context (TSan; ASan+UBSan; and TSan against a driver
             without cuCtxGetId, where the cache key is the CUcontext pointer);
  grid_ub.c  grid arithmetic on extreme int64 arguments (ASan+UBSan).

Any sanitizer report fails the test (halt_on_error, exit code 66).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from triton_aot.contract import record_reader, variant
from triton_aot.core import abi
from triton_aot.core import binding as B
from triton_aot.core import grid as G
from triton_aot.core import signature as S
from triton_aot.emit_c import link

HERE = Path(__file__).absolute().parent
FAKE_SRC = HERE.parent / "fake_cuda"
RUNTIME_DIR = HERE.parent.parent / "runtime"

SANITIZERS = {
    "tsan": ["-fsanitize=thread"],
    "asan_ubsan": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                   "-fno-omit-frame-pointer"],
}
RUN_ENV = {
    "TSAN_OPTIONS": "halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4",
    "ASAN_OPTIONS": "halt_on_error=1 exitcode=66 detect_leaks=1 strict_string_checks=1 "
                    "detect_stack_use_after_return=1 check_initialization_order=1",
    "UBSAN_OPTIONS": "halt_on_error=1 print_stacktrace=1",
}
REPORT_MARKERS = ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:",
                  "ERROR: LeakSanitizer", "SUMMARY: ")


def cc() -> str:
    found = os.environ.get("RULES_TRITON_CC") or shutil.which("cc") or shutil.which("gcc")
    if not found:
        pytest.skip("no C compiler: set RULES_TRITON_CC")
    return found


def cuda_include() -> str:
    given = os.environ.get("RULES_TRITON_CUDA_INCLUDE")
    if given:
        return str(Path(given).parent) if given.endswith(".h") else given
    spec = importlib.util.find_spec("triton")
    return str(Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "include")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n"
                             f"{p.stdout[-3000:]}\n{p.stderr[-6000:]}")
    return p


# ----------------------------------------------------------------------------- libraries

PARAM_SIZE = {"i32": 4, "i64": 8}


def _variant(symbol, kernel, args, grid_text, *, arch, algo_index, num_warps=4, shared=0,
             scratch=(0, 1)):
    """Variant metadata with a grid from the real grid parser."""
    bound = B.BoundSignature(tuple(
        B.BoundArg(i, name, "constexpr", value=S.ConstValue("int", hint, str(hint)))
        if ty == "constexpr" else B.BoundArg(i, name, ty, hint=hint)
        for i, (name, ty, hint) in enumerate(args)))
    grid = G.parse_grid(grid_text, bound)
    meta_args = []
    for name, ty, hint in args:
        if ty == "constexpr":
            meta_args.append({"name": name, "type": {"kind": "constexpr"}, "value": hint,
                              "value_repr": str(hint)})
        else:
            meta_args.append({"name": name, "type": S.parse_type(ty, name).to_json(),
                              "hint": hint, "ctype": abi.c_type(ty).ctype})
    return {
        "format": variant.FORMAT, "symbol": symbol, "kernel_name": kernel,
        "kernel_file": f"{kernel}.py", "target": {"backend": "cuda", "arch": arch,
                                                 "warp_size": 32},
        "algo_index": algo_index, "args": meta_args,
        "constexprs": {a["name"]: a["value_repr"] for a in meta_args
                       if a["type"]["kind"] == "constexpr"},
        "num_warps": num_warps, "num_stages": 3, "num_ctas": 1,
        "launch_cooperative_grid": False, "launch_pdl": False, "shared": shared,
        "global_scratch_size": scratch[0], "global_scratch_align": scratch[1],
        "profile_scratch_size": 0, "profile_scratch_align": 1,
        "grid": list(grid.source), "grid_c": list(grid.c), "triton_version": "3.6.0",
        "cubin_file": f"{symbol}.cubin", "cubin_sha256": "0" * 64, "cubin_size": 0,
        "ptx_embedded": False, "ptx_file": None,
    }


def _fake_image(meta) -> bytes:
    sizes = [8 if a.type.startswith("*") else PARAM_SIZE[a.type]
             for a in record_reader.read(meta).launcher_args] + [8, 8]
    return (f"TRTFAKE1 tag={meta['symbol']} kind=cubin sm={meta['target']['arch']} "
            f"name={meta['kernel_name']} params={','.join(map(str, sizes))}\n").encode() + b"\0"


def add_variants():
    args = lambda hint: [("x", "*fp32", hint), ("y", "*fp32", hint),  # noqa: E731
                         ("out", "*fp32", hint), ("n", "i32", hint), ("BLOCK", "constexpr", 1024)]
    metas = []
    for arch in (80, 90):
        metas.append(_variant(f"add_a0_s0_sm{arch}", "add_kernel", args(16), "cdiv(n, 1024)",
                              arch=arch, algo_index=0))
        metas.append(_variant(f"add_a0_s1_sm{arch}", "add_kernel", args(None), "cdiv(n, 1024)",
                              arch=arch, algo_index=0))
        big = [a if a[0] != "BLOCK" else ("BLOCK", "constexpr", 256) for a in args(None)]
        metas.append(_variant(f"add_a1_s0_sm{arch}", "add_kernel", big, "cdiv(n, 256)",
                              arch=arch, algo_index=1, num_warps=2, shared=65536,
                              scratch=(512, 512)))
    return metas


def wide_variants():
    args = [("x", "*fp32", None), ("n", "i64", None), ("m", "i64", None)]
    return [_variant("wide_sm90", "wide_kernel", args, "n * m, cdiv(n, m) + n / m, -n / -m",
                     arch=90, algo_index=0)]


def generate(out: Path, name: str, metas: list) -> list:
    """Writes the records and images and links them; returns the library's .c and the
    runtime's."""
    out.mkdir(parents=True)
    jsons = []
    for meta in metas:
        (out / meta["cubin_file"]).write_bytes(_fake_image(meta))
        (out / f"{meta['symbol']}.json").write_text(json.dumps(meta))
        jsons.append(str(out / f"{meta['symbol']}.json"))
    link.link(jsons, name, str(out / f"{name}.c"), str(out / f"{name}.h"), False)
    return [out / f"{name}.c", RUNTIME_DIR / "trt_runtime.c"]


# ----------------------------------------------------------------------------- builds


def _sanitizer_works(flags, tmp: Path) -> str | None:
    src = tmp / "probe.c"
    src.write_text("int main(void) { return 0; }\n")
    p = subprocess.run([cc(), *flags, str(src), "-o", str(tmp / "probe")], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return f"{cc()} cannot build with {' '.join(flags)}: {p.stderr.strip()[-300:]}"
    return None


def build(tmp: Path, sanitizer: str, lib: str, prog: str, *, no_ctx_id=False) -> tuple:
    """(program, folder of the fake libcuda.so.1), everything built with the sanitizer."""
    flags = SANITIZERS[sanitizer]
    why = _sanitizer_works(flags, tmp)
    if why:
        pytest.skip(why)
    inc = cuda_include()
    common = ["-g", "-O1", *flags, f"-I{inc}"]
    fake = tmp / "fake"
    fake.mkdir()
    run([cc(), "-std=gnu11", "-shared", "-fPIC", *common, "-Wall", "-Wextra", "-Werror",
         *(["-DFAKE_CUDA_NO_CTX_GET_ID"] if no_ctx_id else []), "-Wl,-soname,libcuda.so.1",
         "-o", fake / "libcuda.so.1", FAKE_SRC / "fake_cuda.c", "-lpthread"])
    metas = {"add": add_variants, "wide": wide_variants}[lib]()
    gen = tmp / "gen"
    sources = generate(gen, lib, metas)
    objs = []
    for src in sources:
        obj = gen / (src.stem + ".o")  # never next to runtime/trt_runtime.c in the checkout
        # the flags triton_kernel_library compiles with, made strict
        run([cc(), "-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror", *common,
             f"-I{gen}", f"-I{RUNTIME_DIR}", "-c", src, "-o", obj])
        objs.append(obj)
    exe = tmp / prog.replace(".c", "")
    run([cc(), "-std=c11", *common, "-Wall", "-Wextra", "-Werror", f"-I{gen}", f"-I{FAKE_SRC}",
         HERE / prog, *objs, f"-L{fake}", "-l:libcuda.so.1", f"-Wl,-rpath,{fake}", "-ldl",
         "-lpthread", "-o", exe])
    return exe, fake


def run_sanitized(exe: Path, fake: Path, *args, timeout=600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("SAN_OPTIONS")}
    env.update(RUN_ENV, LD_LIBRARY_PATH=str(fake))
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def assert_clean(p: subprocess.CompletedProcess, expected_passes: list) -> None:
    report = p.stdout + p.stderr
    for marker in REPORT_MARKERS:
        assert marker not in p.stderr, f"sanitizer report:\n{report[-12000:]}"
    assert p.returncode == 0, f"exit code {p.returncode}:\n{report[-12000:]}"
    for name in expected_passes:
        assert f"PASS {name}\n" in p.stdout, report[-6000:]


RACE_SCENARIOS = ["first_call_32", "two_contexts_32", "load_unload_race", "unload_one_ctx",
                  "no_context"]


def _run_scenarios(exe: Path, fake: Path) -> None:
    # one process per scenario: fake_cuda_reset() hands out the same context ids and pointers
    # again, which the real driver never does, so scenarios must not share the caches
    for scenario in RACE_SCENARIOS:
        assert_clean(run_sanitized(exe, fake, scenario), [scenario])


@pytest.mark.parametrize("sanitizer", sorted(SANITIZERS))
def test_race_scenarios(sanitizer, tmp_path):
    exe, fake = build(tmp_path, sanitizer, "add", "race.c")
    _run_scenarios(exe, fake)


def test_race_scenarios_driver_without_ctx_get_id(tmp_path):
    """Pre-12.0 driver: the per-context cache is keyed by the CUcontext pointer."""
    exe, fake = build(tmp_path, "tsan", "add", "race.c", no_ctx_id=True)
    _run_scenarios(exe, fake)


def test_grid_arithmetic_on_extreme_arguments(tmp_path):
    exe, fake = build(tmp_path, "asan_ubsan", "wide", "grid_ub.c")
    assert_clean(run_sanitized(exe, fake), ["grid_extremes"])
