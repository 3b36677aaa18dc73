"""triton_aot.compile.compile (real Triton compiles, no GPU) -> triton_aot.emit_c.link -> cc -> fake driver:
the right real image is launched per device and per alignment."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import harness

pytest.importorskip("triton")
if not (harness.REPO_ROOT / "triton_aot" / "compile" / "compile.py").exists():
    pytest.skip("triton_aot.compile.compile not present", allow_module_level=True)

SPECS = {"d16": "*fp32:16, *fp32:16, i32, fp32, 256", "gen": "*fp32, *fp32, i32, fp32, 256"}
ARCHS = (80, 90)


def _fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325  # FNV-1a 64 offset basis
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:x}"


def _compile(out, spec, arch):
    sym = f"scale_a0_{spec}_sm{arch}"
    env = dict(os.environ, TRITON_CACHE_DIR=str(out / "cache"),
               PYTHONPATH=os.pathsep.join([str(harness.REPO_ROOT)] +
                                          [p for p in [os.environ.get("PYTHONPATH")] if p]))
    cmd = [sys.executable, "-m", "triton_aot.compile.compile",
           f"--kernel_path={harness.HERE / 'kernels' / 'scale_kernel.py'}",
           "--kernel_name=scale_kernel", f"--signature={SPECS[spec]}",
           "--grid=cdiv(n, 256), 1, 1", "--num_warps=4", "--num_stages=3",
           f"--target=cuda:{arch}", f"--symbol={sym}", "--algo_index=0",
           f"--out_c={out / sym}.c", f"--out_h={out / sym}.h", f"--out_json={out / sym}.json",
           f"--out_cubin={out / sym}.cubin", f"--out_ptx={out / sym}.ptx"]
    if arch == 80:
        cmd.append("--embed_ptx")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return sym


@pytest.fixture(scope="module")
def e2e_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e")
    with ThreadPoolExecutor(4) as pool:
        syms = list(pool.map(lambda a: _compile(out, *a),
                             [(s, a) for s in SPECS for a in ARCHS]))
    harness.link_tool(["--name=scale", f"--out_c={out}/scale.c", f"--out_h={out}/scale.h",
                       "--embed_ptx_fallback", *sorted(f"{out / s}.json" for s in syms)])
    # The library's one C file holds every variant; the standalone variant .c files the compile
    # tool also wrote are not part of it.
    lib = harness.Library(out, "scale", [out / "scale.c", harness.RUNTIME_DIR / "trt_runtime.c"])
    harness.compile_library(lib)
    return lib


@pytest.mark.parametrize("major,minor,aligned,misaligned", [
    (8, 0, "sm80 d16", "sm80 gen"),
    (8, 9, "sm80 d16", "sm80 gen"),
    (9, 0, "sm90 d16", "sm90 gen"),
    (10, 0, "ptx d16", "ptx gen"),
    (7, 5, "err 209", "err 209"),
])
def test_real_images_per_device(e2e_lib, tmp_path, fake_dir, major, minor, aligned, misaligned):
    exe = harness.compile_program(e2e_lib, "e2e.c", tmp_path / "e2e", fake_dir=fake_dir)
    lines = harness.run_program(exe, [major, minor], fake_dir=fake_dir).stdout.splitlines()

    def expected(label, what):
        if what.startswith("err"):
            return f"{label} {what}"
        where, spec = what.split()
        if where == "ptx":  # sm_80's PTX, JIT-compiled for the newer GPU
            text = (e2e_lib.dir / f"scale_a0_{spec}_sm80.ptx").read_bytes()
            return f"{label} ptx {_fnv1a64(text)}"
        cubin = (e2e_lib.dir / f"scale_a0_{spec}_{where}.cubin").read_bytes()
        return f"{label} elf {_fnv1a64(cubin)}"

    assert lines == [expected("aligned", aligned), expected("misaligned", misaligned)]
