"""Host tensor descriptors (tensordesc<...> parameters) against the fake driver: the C API, the
arguments of cuTensorMapEncodeTiled, the per-launcher cache and the misalignment refusals."""

from __future__ import annotations

import pytest

import harness
import libs


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_tma_encode_cache_and_refusals(tma_lib, run_prog, cplusplus):
    """tests/link/progs/tma.c: encoded arguments (dtype, dims, byte strides, box, swizzle, the
    fixed interleave/L2/fill), kernel parameters, one encode per change, refusals launch
    nothing, per-thread caches."""
    assert run_prog(tma_lib, "tma.c", cplusplus=cplusplus).stdout == "OK\n"


def test_tma_3d_descriptor(tma3d_lib, tmp_path, fake_dir):
    exe = harness.compile_program(tma3d_lib, "tma.c", tmp_path / "tma3d", fake_dir=fake_dir,
                                  extra=("-DTMA3D",))
    assert harness.run_program(exe, fake_dir=fake_dir).stdout == "OK\n"


def test_tma_c_api_in_the_header(tma_lib):
    """Each descriptor becomes base, shape..., strides... at its parameter's position."""
    h = tma_lib.header.read_text()
    assert ("CUresult tma(CUstream stream, CUdeviceptr a_desc_base, int64_t a_desc_shape0, "
            "int64_t a_desc_shape1, int64_t a_desc_stride0, int64_t a_desc_stride1, "
            "CUdeviceptr c_desc_base, int64_t c_desc_shape0, int64_t c_desc_stride0, int32_t n, "
            "float scale, int algo_id);") in h


def test_tma_standalone_variant(tmp_path, fake_dir):
    """The compile tool's standalone variant C (--out_c) encodes the same way."""
    meta = libs.tma3d_variants()[0]
    c_text, h_text = harness.render_variant(meta, harness.fake_image(meta), None)
    assert "trt_tma_encode(trt_driver_table" in c_text
    assert ("CUresult tma3d(CUstream stream, CUdeviceptr x_desc_base, int64_t x_desc_shape0, "
            "int64_t x_desc_shape1, int64_t x_desc_shape2, int64_t x_desc_stride0, "
            "int64_t x_desc_stride1, int64_t x_desc_stride2);") in h_text


@pytest.mark.parametrize("change,message", [
    (lambda m: m["args"][0]["tma"].update(box=[64, 512]), "does not fit the block"),
    (lambda m: m["args"][0]["tma"].update(swizzle=7), "is not a TMA encoding"),
    (lambda m: m["args"][0].pop("tma"), "'tma' must be an object"),
    (lambda m: m["args"][0].update(type="tensordesc<fp16[64, 32]>"),
     "is not an object of one of the kinds"),
    (lambda m: m["args"][0]["type"].update(block=[64, 48]), "the block is not 1 to 5 powers of two"),
    (lambda m: m["target"].update(arch=80), "need TMA (cuda:90 or newer)"),
    (lambda m: m["args"].append(harness.arg("a_desc_base", "*fp16")), "appears twice"),
])
def test_tma_record_validation(tmp_path, change, message):
    meta = libs.tma_variants()[0]
    change(meta)
    path = harness.write_record(tmp_path, meta, cubin=b"x")
    p = harness.link_tool([f"--name=bad", f"--out_c={tmp_path}/bad.c", f"--out_h={tmp_path}/bad.h",
                           str(path)], check=False)
    assert p.returncode == 1
    assert message in p.stderr, p.stderr
    assert p.stderr.startswith("error:") and p.stderr.count("\n") == 1, p.stderr
