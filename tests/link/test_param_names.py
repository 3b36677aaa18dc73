"""Kernel parameters whose names C cannot use as they are (`CU_SEQLENS`, `int`, `trt_n`,
`_Scale`, `default`) build unchanged: a real Triton compile, the link, the library compiled as C
and as C++, and a call through the fake driver whose grid reads a renamed parameter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import harness

pytest.importorskip("triton")

SPECS = {"d16": "*fp32:16, *i32:16, i32, i32:16, fp32, i1, 64",
         "gen": "*fp32, *i32, i32, i32, fp32, i1, 64"}


def _compile(out, spec):
    sym = f"awkward_names_a0_{spec}_sm80"
    env = dict(os.environ, TRITON_CACHE_DIR=str(out / "cache"),
               PYTHONPATH=os.pathsep.join([str(harness.REPO_ROOT)] +
                                          [p for p in [os.environ.get("PYTHONPATH")] if p]))
    p = subprocess.run(
        [sys.executable, "-m", "triton_aot.compile.compile",
         f"--kernel_path={harness.HERE / 'kernels' / 'awkward_names_kernel.py'}",
         "--kernel_name=awkward_names_kernel", f"--signature={SPECS[spec]}",
         "--grid=int, 1, 1", "--num_warps=2", "--num_stages=1", "--target=cuda:80",
         f"--symbol={sym}", "--algo_index=0", f"--out_json={out / sym}.json",
         f"--out_cubin={out / sym}.cubin", f"--out_c={out / sym}.c", f"--out_h={out / sym}.h"],
        capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return sym


@pytest.fixture(scope="module")
def awkward_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("awkward")
    syms = [_compile(out, spec) for spec in SPECS]
    harness.link_tool(["--name=awkward_names", f"--out_c={out}/awkward_names.c",
                       f"--out_h={out}/awkward_names.h", *(f"{out / s}.json" for s in syms)])
    lib = harness.Library(out, "awkward_names",
                          [out / "awkward_names.c", harness.RUNTIME_DIR / "trt_runtime.c"])
    harness.compile_library(lib)
    return lib


def test_header_spells_renamed_parameters(awkward_lib):
    h = awkward_lib.header.read_text()
    assert ("CUresult awkward_names_default(CUstream stream, CUdeviceptr X, "
            "CUdeviceptr trt_CU_SEQLENS, int32_t trt_int, int32_t trt_trt_n, float trt__Scale, "
            "bool trt_default);") in h
    c = (awkward_lib.dir / "awkward_names.c").read_text()
    assert "(trt_trt_n % 16 == 0)" in c  # the d16 variant's hint condition, on the C name


def test_library_compiles_as_cxx(awkward_lib, tmp_path):
    lib = harness.Library(tmp_path, "awkward_names", awkward_lib.sources)
    (tmp_path / "awkward_names.h").write_bytes(awkward_lib.header.read_bytes())
    harness.compile_library(lib, cplusplus=True)


def test_standalone_variant_compiles(awkward_lib):
    c = awkward_lib.dir / "awkward_names_a0_gen_sm80.c"
    harness.run([harness.cc(), *harness.C_FLAGS, f"-I{harness.cuda_include()}",
                 f"-I{awkward_lib.dir}", f"-I{harness.RUNTIME_DIR}", "-c", c, "-o",
                 awkward_lib.dir / "standalone.o"])


def test_launch_reads_renamed_parameter_in_grid(awkward_lib, tmp_path, fake_dir):
    exe = harness.compile_program(awkward_lib, "param_names.c", tmp_path / "param_names",
                                  fake_dir=fake_dir)
    out = harness.run_program(exe, [7, 1000], fake_dir=fake_dir).stdout
    assert out.strip() == "grid 7 1 1"
