"""Generated HIP libraries against the fake HIP runtime (tests/fake_hip): which hsaco is loaded
for which gfx arch, launch geometry and arguments, error paths, threads and devices; and the
minimal HIP declarations (runtime/trt_hip.h) against the HIP header shipped in the triton wheel."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

import harness
from harness import arg, constexpr, run

FAKE_HIP_SRC = harness.HERE.parent / "fake_hip"
HIP_ERROR_NO_DEVICE = 100
HIP_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302
HIP_ERROR_NO_BINARY_FOR_GPU = 209
HIP_C_FLAGS = harness.C_FLAGS + ["-D_GNU_SOURCE"]  # pthread_barrier_t in the test program

ARCHS = {"gfx90a": 64, "gfx942": 64, "gfx1100": 32}
SPECS = {"d16s1": dict(x=16, y=16, out=16, n=16, stride=1), "d16": dict(x=16, y=16, out=16, n=16),
         "gen": {}}
# algo -> (BLOCK, num_warps, specs, extra record fields)
ALGOS = {
    0: (128, 4, ["d16s1", "gen"], {}),
    1: (64, 2, ["d16"], {}),  # no generic variant: misaligned calls match nothing
    2: (32, 4, ["gen"], {"shared": 80 * 1024}),
    3: (16, 4, ["gen"], {"profile_scratch_size": 48, "profile_scratch_align": 512}),
}


def _args(block, x=None, y=None, out=None, n=None, stride=None):
    return [arg("x_ptr", "*fp32", x), arg("y_ptr", "*fp32", y), arg("out_ptr", "*fp32", out),
            arg("n", "i32", n), arg("stride", "i32", stride), constexpr("BLOCK", block)]


def hip_variants() -> list[dict]:
    metas = []
    for algo, (block, warps, specs, extra) in ALGOS.items():
        for spec in specs:
            for arch, warp in ARCHS.items():
                symbol = f"hadd_a{algo}_{spec}_{arch}"
                grid = f"trt_grid_cdiv((int64_t)n, (int64_t){block})"
                meta = harness.variant(symbol, _args(block, **SPECS[spec]), kernel_name="add_kernel",
                                       algo_index=algo, num_warps=warps, grid_c=(grid, "1", "1"))
                meta["target"] = {"backend": "hip", "arch": arch, "warp_size": warp}
                meta["cubin_file"] = f"{symbol}.hsaco"
                meta.update(extra)
                metas.append(meta)
    return metas


def hip_image(meta: dict) -> bytes:
    sizes = [8 if a["type"].startswith("*") else harness.PARAM_SIZE[a["type"]]
             for a in harness.launcher_args(meta)] + [8, 8]
    return (f"TRTFAKEHIP tag={meta['symbol']} arch={meta['target']['arch']} "
            f"name={meta['kernel_name']} params={','.join(map(str, sizes))}\n").encode()


def build_fake_hip(out_dir: Path, *defines: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    run([harness.cc(), "-shared", "-fPIC", "-O1", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
         *defines, "-Wl,-soname,libamdhip64.so", "-o", out_dir / "libamdhip64.so",
         FAKE_HIP_SRC / "fake_hip.c", "-lpthread"])
    return out_dir


@pytest.fixture(scope="module")
def hip_lib(tmp_path_factory):
    metas = hip_variants()
    out = tmp_path_factory.mktemp("hadd")
    lib = harness.generate(out, "hadd", metas,
                           images={m["symbol"]: (hip_image(m), None) for m in metas})
    lib.sources = [out / "hadd.c", harness.RUNTIME_DIR / "trt_hip_runtime.c"]
    harness.compile_library(lib, extra=("-D_GNU_SOURCE",))
    return lib


@pytest.fixture(scope="module")
def fake_hip(tmp_path_factory):
    return build_fake_hip(tmp_path_factory.mktemp("fake_hip"))


def _prog(lib, out: Path, *, fake: Path | None, cplusplus=False) -> Path:
    compiler = harness.cxx() if cplusplus else harness.cc()
    flags = (harness.CXX_FLAGS if cplusplus else HIP_C_FLAGS)
    cmd = [compiler, *flags, "-O1", f"-I{lib.dir}", f"-I{harness.RUNTIME_DIR}", f"-I{FAKE_HIP_SRC}",
           f"-DLIB_HEADER=\"{lib.header.name}\"", harness.PROGS / "hip_check.c", "-x", "none",
           "-o", out, str(lib.so), f"-Wl,-rpath,{lib.so.parent}"]
    cmd += [f"-L{fake}", "-l:libamdhip64.so"] if fake else ["-DHIP_CHECK_NO_FAKE"]
    run(cmd + ["-lpthread"])
    return out


@pytest.fixture(scope="module")
def prog(hip_lib, fake_hip, tmp_path_factory):
    return _prog(hip_lib, tmp_path_factory.mktemp("prog") / "hip_check", fake=fake_hip)


def _run(exe, *args, fake):
    p = harness.run_program(exe, args, fake_dir=fake, check=False)
    assert p.returncode == 0 and p.stdout == "OK\n", f"{p.stdout}\n{p.stderr}"


@pytest.mark.parametrize("device_arch,expected,block", [
    ("gfx942:sramecc+:xnack-", "hadd_a0_d16s1_gfx942", 256),
    ("gfx942", "hadd_a0_d16s1_gfx942", 256),
    ("gfx90a:sramecc-:xnack+", "hadd_a0_d16s1_gfx90a", 256),
    ("gfx1100", "hadd_a0_d16s1_gfx1100", 128),  # wave32: 4 warps x 32 lanes
    ("gfx908", str(HIP_ERROR_NO_BINARY_FOR_GPU), 0),  # no hsaco runs on another gfx arch
    ("gfx950", str(HIP_ERROR_NO_BINARY_FOR_GPU), 0),
    ("gfx94", str(HIP_ERROR_NO_BINARY_FOR_GPU), 0),  # a prefix of gfx942 is not gfx942
])
def test_hsaco_per_arch(prog, fake_hip, device_arch, expected, block):
    _run(prog, "arch", device_arch, expected, block, fake=fake_hip)


@pytest.mark.parametrize("mode", ["launch", "errors", "load_all", "threads", "devices"])
def test_modes(prog, fake_hip, mode):
    _run(prog, mode, fake=fake_hip)


def test_no_hip_runtime(hip_lib, tmp_path):
    exe = _prog(hip_lib, tmp_path / "nofake", fake=None)
    _run(exe, "expect", HIP_ERROR_NO_DEVICE, fake=tmp_path)  # an empty dir: nothing to dlopen


def test_missing_entry_point(hip_lib, tmp_path):
    fake = build_fake_hip(tmp_path / "noprops", "-DFAKE_HIP_NO_PROPS")
    exe = _prog(hip_lib, tmp_path / "noprops_prog", fake=fake)
    _run(exe, "expect", HIP_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, fake=fake)


def test_scratch_without_malloc_async(hip_lib, tmp_path):
    fake = build_fake_hip(tmp_path / "nomalloc", "-DFAKE_HIP_NO_MALLOC_ASYNC")
    exe = _prog(hip_lib, tmp_path / "nomalloc_prog", fake=fake)
    # the required entry points are there: everything but scratch works
    _run(exe, "launch", fake=fake)


def test_library_compiles_as_cxx(hip_lib, tmp_path):
    out = tmp_path / "hadd_cc.o"
    run([harness.cxx(), *harness.CXX_FLAGS, f"-I{hip_lib.dir}", f"-I{harness.RUNTIME_DIR}", "-c",
         hip_lib.dir / "hadd.c", "-o", out])
    run([harness.cxx(), *harness.CXX_FLAGS, f"-I{harness.RUNTIME_DIR}", "-c",
         harness.RUNTIME_DIR / "trt_hip_runtime.c", "-o", tmp_path / "rt.o"])


def test_generated_c_never_exits_or_prints(hip_lib):
    # every runtime source: the HIP runtime is the shared core (trt_core.inc) and its hooks
    text = (hip_lib.dir / "hadd.c").read_text() + "".join(
        p.read_text() for p in sorted(harness.RUNTIME_DIR.glob("trt_*"))
        if p.suffix in (".c", ".h", ".inc"))
    for bad in ("exit(", "abort(", "printf(", "puts(", "stderr", "stdout"):
        assert bad not in text


def test_one_set_of_templates_speaks_hip(hip_lib):
    """The library templates are shared with CUDA and filled from the HIP backend table: nothing
    of the CUDA API (types, statuses, runtime, sm_ targets) reaches a HIP library's C or header
    outside its embedded images."""
    for path in (hip_lib.dir / "hadd.c", hip_lib.header):
        code = "\n".join(line for line in path.read_text().splitlines()
                         if not line.lstrip().startswith('"'))  # image literals
        leaks = sorted(set(re.findall(r"\bCU[A-Za-z_]+|\bCUDA_\w+|\bcu[A-Z]\w+|trt_runtime\.h|"
                                      r"\bsm_?\d+|\bcubin", code)))
        assert not leaks, f"{path.name}: {leaks}"
    assert '#include "trt_hip_runtime.h"' in (hip_lib.dir / "hadd.c").read_text()


def test_exports_only_the_api(hip_lib):
    nm = os.environ.get("RULES_TRITON_NM", "nm")
    syms = run([nm, "-D", "--defined-only", hip_lib.so]).stdout.split()
    exported = {s for s in syms if s.startswith(("hadd", "load_", "unload_", "trt_"))}
    assert exported == {"hadd", "hadd_default", "load_hadd", "unload_hadd", "hadd_get_num_algos",
                        "hadd_get_algo_info"}


def _triton_hip_include() -> Path | None:
    if os.environ.get("RULES_TRITON_HIP_INCLUDE"):
        return Path(os.environ["RULES_TRITON_HIP_INCLUDE"])
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    inc = Path(list(spec.submodule_search_locations)[0]) / "backends" / "amd" / "include"
    return inc if (inc / "hip" / "hip_runtime_api.h").is_file() else None


def test_declarations_match_the_hip_header(hip_lib, tmp_path):
    """trt_hip.h's values and the hipDeviceProp_tR0600 offsets equal ROCm's header's, and the
    generated header and runtime compile against the real header too."""
    inc = _triton_hip_include()
    if inc is None:
        pytest.skip("no triton package with backends/amd/include (set RULES_TRITON_HIP_INCLUDE)")
    check = tmp_path / "decl.c"
    check.write_text('''
#define __HIP_PLATFORM_AMD__
#include <hip/hip_runtime_api.h>
#include <stddef.h>
#include "trt_hip.h"
#define SAME(a, b) _Static_assert((long)(a) == (long)(b), #a)
SAME(TRT_HIP_PROPS_R0600_SIZE, sizeof(hipDeviceProp_tR0600));
SAME(TRT_HIP_PROPS_R0600_ARCH_OFFSET, offsetof(hipDeviceProp_tR0600, gcnArchName));
SAME(TRT_HIP_PROPS_ARCH_SIZE, sizeof(((hipDeviceProp_tR0600 *)0)->gcnArchName));
SAME(TRT_HIP_ATTR_MAX_SHARED_PER_BLOCK, hipDeviceAttributeMaxSharedMemoryPerBlock);
int main(void) { return 0; }
''')
    run([harness.cc(), "-std=c11", f"-I{inc}", f"-I{harness.RUNTIME_DIR}", "-c", check,
         "-o", tmp_path / "decl.o"])
    # our own enum values, compiled without the real header, against the real ones
    ours = tmp_path / "ours.c"
    names = ["hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory", "hipErrorNotInitialized",
             "hipErrorNoDevice", "hipErrorInvalidDevice", "hipErrorInvalidImage",
             "hipErrorInvalidContext", "hipErrorNoBinaryForGpu",
             "hipErrorSharedObjectSymbolNotFound", "hipErrorNotFound",
             "hipErrorLaunchOutOfResources", "hipErrorNotSupported"]
    ours.write_text('#include "trt_hip.h"\n#include <stdio.h>\nint main(void) {\n' + "".join(
        f'  printf("%d\\n", (int){n});\n' for n in names) + "  return 0;\n}\n")
    real = tmp_path / "real.c"
    real.write_text("#define __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime_api.h>\n"
                    + ours.read_text().split("\n", 1)[1])
    run([harness.cc(), f"-I{harness.RUNTIME_DIR}", ours, "-o", tmp_path / "ours"])
    run([harness.cc(), f"-I{inc}", real, "-o", tmp_path / "real"])
    assert run([tmp_path / "ours"]).stdout == run([tmp_path / "real"]).stdout
    for src in (hip_lib.dir / "hadd.c", harness.RUNTIME_DIR / "trt_hip_runtime.c"):
        run([harness.cc(), "-std=c11", "-D_GNU_SOURCE", "-D__HIP_PLATFORM_AMD__", f"-I{inc}",
             f"-I{hip_lib.dir}", f"-I{harness.RUNTIME_DIR}", "-Wall", "-Werror", "-c", src,
             "-o", tmp_path / (src.stem + ".o")])
