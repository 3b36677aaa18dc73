"""reset_to_zero (Triton's split-K `pre_hook=init_to_zero`): the generated launcher zeroes each
region on the launch stream before it launches, against the fake driver, and the record's
validation of the regions."""

from __future__ import annotations

import pytest

import harness
import libs


@pytest.fixture(scope="session")
def zero_lib(tmp_path_factory):
    # with a tuning key and no table, zero_auto launches the default algo 0
    return harness.build(tmp_path_factory.mktemp("zero"), "zero", libs.zero_variants(),
                         link_flags=("--tuning_key=M,N", "--tuning_default_algo=0"))


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_memsets_before_the_launch(zero_lib, run_prog, cplusplus):
    """tests/link/progs/zero.c: the memset kind, pointer, pitch, width, height and stream of
    every region, before the launch; zero extents, empty grids, invalid extents, failed loads
    and memsets; NAME_default and NAME_auto; the algo info."""
    assert run_prog(zero_lib, "zero.c", cplusplus=cplusplus).stdout == "OK\n"


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_strided_matrix(tmp_path_factory, run_prog, cplusplus):
    """tests/link/progs/zero_matrix.c: a four-extent region (rows, cols, row_stride, col_stride)
    is zeroed along its unit-stride dimension: row-major as rows, column-major as columns, a
    single row or column whatever its other stride; a matrix with no unit stride, or overlapping
    columns, is refused before anything is zeroed or launched."""
    lib = harness.build(tmp_path_factory.mktemp("zm"), "zm", libs.zero_matrix_variants())
    assert run_prog(lib, "zero_matrix.c", cplusplus=cplusplus).stdout == "OK\n"


def test_library_compiles_as_cxx(tmp_path):
    lib = harness.generate(tmp_path, "zero", libs.zero_variants())
    harness.compile_library(lib, cplusplus=True)


def test_generated_c(zero_lib):
    c = (zero_lib.dir / "zero.c").read_text()
    assert c.count("trt_kernel_launch_zeroed(") == 3  # the variants of algos 0 and 1
    assert "{c_ptr, 4u, 1, (int64_t)((int64_t)M), (int64_t)((int64_t)N), " \
           "(int64_t)((int64_t)stride_cm), (int64_t)1}" in c
    assert "{b_ptr, 2u, 0, (int64_t)1, (int64_t)((int64_t)n), (int64_t)0, (int64_t)1}" in c
    assert "{d_ptr, 8u, 0, " in c and "{x_ptr, 1u, 1, " in c


def test_standalone_variant_zeroes():
    meta = libs.zero_variants()[1]
    c_text, _ = harness.render_variant(meta, harness.fake_image(meta), None)
    assert "trt_kernel_launch_zeroed(trt_driver_table" in c_text


def test_reset_to_zero_is_part_of_the_algo(tmp_path):
    """Variants that differ only in reset_to_zero are two algos (here: one algo_index, so the
    link tool refuses them)."""
    metas = libs.zero_variants()[:2]
    del metas[1]["reset_to_zero"]
    jsons = [str(harness.write_record(tmp_path, m)) for m in metas]
    p = harness.link_tool([f"--name=bad", f"--out_c={tmp_path}/bad.c",
                           f"--out_h={tmp_path}/bad.h", *jsons], check=False)
    assert p.returncode == 1 and "two algos share algo_index 0" in p.stderr, p.stderr


def test_tuning_fingerprint():
    from triton_aot.contract import tuning_table as tuning
    from triton_aot.contract import record_reader
    with_reset, plain = (record_reader.read(m) for m in libs.zero_variants()[1:4:2])
    assert tuning.record_fingerprint(with_reset) != tuning.record_fingerprint(plain)
    # algos without reset_to_zero keep the fingerprint they had (tables stay valid)
    assert tuning.record_fingerprint(plain) == tuning.fingerprint(
        plain.constexprs, plain.launch.num_warps, plain.launch.num_stages)


def _region(name, *extents, c=None):
    return {"name": name, "extents": list(extents), "extents_c": list(c or extents)}


@pytest.mark.parametrize("regions,message", [
    ([_region("M", "1")], "'M' is not a pointer argument of the kernel"),
    ([_region("nope", "1")], "'nope' is not a pointer argument of the kernel"),
    ([_region("c_ptr", "M", "N")], "must both hold 1 (count), 3 (rows, cols, row_stride) or 4"),
    ([_region("c_ptr", "M", "N", "1", "1", "1")], "must both hold 1 (count), 3"),
    ([_region("c_ptr", "M", c=["M); exit(1"])], "is not a plain C expression"),
    ([_region("c_ptr", "NUM_SMS", c=["trt_attr_num_sms"])], "reads a device attribute"),
    ([_region("d_ptr", "n"), _region("b_ptr", "n")], "in the kernel's parameter order"),
    ([_region("b_ptr", "n"), _region("b_ptr", "n")], "in the kernel's parameter order"),
    ([], "is not a non-empty list of regions"),
    ([{"name": "c_ptr", "extents": ["M"]}], "is not an object with 'name', 'extents'"),
])
def test_record_validation(tmp_path, regions, message):
    meta = libs.zero_variants()[1]
    meta["reset_to_zero"] = regions
    path = harness.write_record(tmp_path, meta, cubin=b"x")
    p = harness.link_tool([f"--name=bad", f"--out_c={tmp_path}/bad.c", f"--out_h={tmp_path}/bad.h",
                           str(path)], check=False)
    assert p.returncode == 1
    assert message in p.stderr, p.stderr
    assert p.stderr.startswith("error:") and p.stderr.count("\n") == 1, p.stderr


def test_record_refuses_hip(tmp_path):
    meta = libs.zero_variants()[1]
    meta["target"] = {"backend": "hip", "arch": "gfx942", "warp_size": 64}
    path = harness.write_record(tmp_path, meta, cubin=b"x")
    p = harness.link_tool([f"--name=bad", f"--out_c={tmp_path}/bad.c", f"--out_h={tmp_path}/bad.h",
                           str(path)], check=False)
    assert p.returncode == 1 and "reset_to_zero is CUDA only" in p.stderr, p.stderr


def test_record_round_trip():
    from triton_aot.contract import record_reader
    meta = libs.zero_variants()[2]
    rec = record_reader.read(meta)
    assert [r.name for r in rec.reset_to_zero] == ["b_ptr", "x_ptr", "d_ptr"]
    assert record_reader.read_json(rec.to_json()) == rec
    # records without it are written without the key (byte-identical to before)
    assert "reset_to_zero" not in record_reader.read(libs.zero_variants()[3]).to_dict()
