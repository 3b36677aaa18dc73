"""The capture's proof (triton_aot.capture.proof): the op record run against the launcher at
sizes nobody wrote down; a record that differs from its launcher anywhere is refused."""

import dataclasses
import os
import sys

import pytest

pytest.importorskip("triton")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from triton_aot.capture import proof, tool  # noqa: E402
from triton_aot.compile import build_driver, build_torch_cuda  # noqa: E402
from triton_aot.contract import op_record  # noqa: E402
from triton_aot.core.errors import UserError  # noqa: E402


def capture(name, calls, sizes):
    import proof_launchers
    with build_driver.answering_for("cuda", 90, 32), build_torch_cuda.answering_for("cuda", 90, 32):
        return tool.capture_launcher(getattr(proof_launchers, name), calls, sizes, name,
                                     "//t:" + name)


def prove_record(name, calls, sizes, record, decl):
    import proof_launchers
    from triton_aot.capture import tracer
    from triton_aot.capture.examples import FakeInputs
    fn = getattr(proof_launchers, name)

    def static(text):
        inputs = FakeInputs({}, "//t:x")
        try:
            return tracer.capture_call(fn, inputs, inputs.parse(text, "//t:x"), "//t:x")
        except UserError:
            return None
    with build_driver.answering_for("cuda", 90, 32), build_torch_cuda.answering_for("cuda", 90, 32):
        return proof.prove([(c, sizes) for c in calls], record, decl, "//t:x", static, {})


def test_size_points_cover_one_zero_and_the_edges():
    points = proof.size_points({"n": 64, "m": 8}, ["n > 4096"])
    values = {p["n"] for p in points}
    assert {64, 1, 0, 77, 4095, 4096, 4097, 65537} <= values
    assert {"n": 1, "m": 1} in points and points[0] == {"n": 64, "m": 8}
    assert proof.static_text("fp32(n, nn), n", {"n": 3}) == "fp32(3, nn), 3"


def test_a_view_of_rows_takes_seq_and_batch_of_one():
    calls, decl, record = capture("rows_of_a_view", ["fp32(batch, seq, 64)"],
                                  {"batch": 4, "seq": 16})
    checks = record.launches[0].checks
    assert not any("!=" in c for c in checks), checks  # no guard from torch's view reasoning
    report = prove_record("rows_of_a_view", ["fp32(batch, seq, 64)"],
                          {"batch": 4, "seq": 16}, record, decl)
    assert ("fp32(4, 1, 64)", "same") in report.points and ("fp32(1, 1, 64)", "same") in report.points
    assert report.count("same") >= 10


def test_a_wrong_binding_is_refused():
    calls, decl, record = capture("rows_of_a_view", ["fp32(batch, seq, 64)"],
                                  {"batch": 4, "seq": 16})
    launch = record.launches[0]
    wrong = dataclasses.replace(record, launches=(dataclasses.replace(
        launch, bind=dict(launch.bind, cols="min(x.size(2), 60)")),))
    with pytest.raises(proof.ProofFailed, match=r"cols is \('int', 60\) where the launcher passes"):
        prove_record("rows_of_a_view", ["fp32(batch, seq, 64)"], {"batch": 4, "seq": 16},
                     wrong, decl)


def test_a_check_stricter_than_the_launcher_is_refused():
    calls, decl, record = capture("rows_of_a_view", ["fp32(batch, seq, 64)"],
                                  {"batch": 4, "seq": 16})
    launch = record.launches[0]
    strict = dataclasses.replace(record, launches=(dataclasses.replace(
        launch, checks=launch.checks + ("x.size(1) != 1",)),))
    with pytest.raises(proof.ProofFailed, match=r"at batch = 4, seq = 1 .* the op's checks refuse the call"):
        prove_record("rows_of_a_view", ["fp32(batch, seq, 64)"], {"batch": 4, "seq": 16},
                     strict, decl)


def test_a_scratch_buffer_is_not_returned():
    calls, decl, record = capture("with_scratch", ["fp32(n)"], {"n": 1000})
    assert record.returns == ((0, "Y"),)  # the launcher returns y alone
    as_dict = record.to_dict()
    assert set(as_dict["steps"][0]["outputs"]) == {"Y", "S"}


def test_slices_of_one_allocation_are_refused_by_line():
    with pytest.raises(UserError, match=r"proof_launchers.py:\d+: argument Y of scale_kernel "
                                        r"points into part of a tensor the launcher allocated"):
        capture("two_slices", ["fp32(n), fp32(n)"], {"n": 1000})


def test_a_returned_transpose_is_refused_by_line():
    with pytest.raises(UserError, match=r"proof_launchers.py:\d+: the launcher returns a strided "
                                        r"view or a part of a tensor a kernel wrote"):
        capture("returns_transpose", ["fp32(rows, 64)"], {"rows": 8})


def test_a_constexpr_of_a_dynamic_size_is_one_readable_line():
    with pytest.raises(UserError) as e:
        capture("dynamic_block", ["fp32(n)"], {"n": 1000})
    message = e.value.message
    assert "proof_launchers.py:" in message and "depends on the dynamic size n;" in message
    assert len(message) < 300 and "\n" not in message


def test_an_int_argument_that_reaches_the_kernel_is_an_argument_of_the_op():
    calls, decl, record = capture("int_argument", ["fp32(rows, 64), 48"], {"rows": 8})
    assert [a.text for a in record.args] == ["x", "shift: int"]
    assert record.launches[0].bind["cols"] == "shift"


def test_an_int_equal_to_a_constant_by_chance_is_refused():
    # the example's k = 64 looks like the kernel's cols = 64; the proof passes k = 71
    with pytest.raises(UserError, match=r"proof_launchers.py:\d+: at rows = 8 \(fp32\(8, 64\), 71\) "
                                        r"the op would not run what the launcher runs: .*cols"):
        capture("int_by_coincidence", ["fp32(rows, 64), 64"], {"rows": 8})
