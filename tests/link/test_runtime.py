"""Generated C against the fake driver: dispatch, targets, contexts, threads, launch features."""

from __future__ import annotations

import ctypes
import subprocess

import pytest

import harness
import libs

CUDA_ERROR_NO_BINARY_FOR_GPU = 209


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_dispatch(add_lib, run_prog, cplusplus):
    assert run_prog(add_lib, "dispatch.c", cplusplus=cplusplus).stdout == "OK\n"


def test_dispatch_library_compiled_as_cxx(add_lib_cxx, run_prog):
    assert run_prog(add_lib_cxx, "dispatch.c").stdout == "OK\n"


@pytest.mark.parametrize("major,minor,expected", [
    (8, 0, "add_a0_d16s1_sm80"),
    (8, 6, "add_a0_d16s1_sm80"),   # same major, lower SM
    (8, 9, "add_a0_d16s1_sm80"),
    (9, 0, "add_a0_d16s1_sm90"),
    (7, 5, str(CUDA_ERROR_NO_BINARY_FOR_GPU)),
    (10, 0, "add_a0_d16s1_sm80.ptx"),  # sm_90a cubins never run on sm_100: sm_80 PTX is JIT-ed
    (12, 0, "add_a0_d16s1_sm80.ptx"),
])
def test_target_selection(add_lib, run_prog, major, minor, expected):
    run_prog(add_lib, "arch.c", major, minor, expected)


@pytest.mark.parametrize("major,minor,expected", [
    (8, 6, "add_a0_d16s1_sm80"),
    (10, 0, str(CUDA_ERROR_NO_BINARY_FOR_GPU)),  # PTX is embedded but fallback not linked in
])
def test_target_selection_without_ptx_fallback(add_lib_no_ptx_fallback, run_prog, major, minor,
                                               expected):
    run_prog(add_lib_no_ptx_fallback, "arch.c", major, minor, expected)


def test_one_load_per_context(add_lib, run_prog):
    run_prog(add_lib, "contexts.c")


def test_one_load_per_context_without_cuCtxGetId(add_lib, run_prog, fake_dir_no_ctx_id):
    # Drivers before 12.0 lack cuCtxGetId: caches are keyed by the CUcontext pointer instead.
    run_prog(add_lib, "contexts.c", fake=fake_dir_no_ctx_id)


def test_concurrent_first_calls_load_once(add_lib, run_prog):
    run_prog(add_lib, "threads.c")


def test_concurrent_first_calls_under_thread_sanitizer(tmp_path, fake_dir):
    """The lock-free lookup and the locked loads are data-race free (TSan instruments the
    generated code; the fake driver is not instrumented)."""
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    if subprocess.run([harness.cc(), "-fsanitize=thread", probe, "-o", tmp_path / "probe"],
                      capture_output=True).returncode != 0:
        pytest.skip("compiler lacks -fsanitize=thread")
    lib = harness.generate(tmp_path / "lib", "add", libs.add_variants())
    harness.compile_library(lib, extra=("-fsanitize=thread", "-g"))
    exe = harness.compile_program(lib, "threads.c", tmp_path / "threads", fake_dir=fake_dir,
                                  extra=("-fsanitize=thread", "-g"))
    p = harness.run_program(exe, fake_dir=fake_dir)
    assert "ThreadSanitizer" not in p.stderr, p.stderr


def test_missing_driver(add_lib, run_prog):
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("a real libcuda.so.1 is installed on this machine")
    out = run_prog(add_lib, "nodriver.c", fake=None)
    assert out.stdout == "OK\n" and out.stderr == ""


def test_launch_features(feat_lib, run_prog):
    run_prog(feat_lib, "features.c")


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_scalar_types(types_lib, run_prog, cplusplus):
    run_prog(types_lib, "types.c", cplusplus=cplusplus)


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_launch_args_and_device_attributes(launch_lib, run_prog, cplusplus):
    """Launch-only arguments reach the grid and never the kernel; min/max; NUM_SMS read once per
    context (also with 16 threads racing on a fresh context); failures not cached."""
    out = run_prog(launch_lib, "launch.c", cplusplus=cplusplus)
    assert out.stdout == "OK\n"


def test_launch_args_in_the_header(launch_lib):
    h = launch_lib.header.read_text()
    assert ("CUresult rows(CUstream stream, CUdeviceptr out_ptr, int32_t n_cols, int32_t n_rows, "
            "int64_t tiles, int algo_id);") in h
    assert ("CUresult rows_default(CUstream stream, CUdeviceptr out_ptr, int32_t n_cols, "
            "int32_t n_rows, int64_t tiles);") in h


def test_algo_restricted_to_some_targets(restricted_lib, run_prog):
    """An algo compiled only for sm_90 (declared): CUDA_ERROR_NO_BINARY_FOR_GPU elsewhere."""
    assert run_prog(restricted_lib, "restricted.c").stdout == "OK\n"
    h = restricted_lib.header.read_text()
    assert "sm_80  (none: this algo is not compiled for it" in h


def test_scratch_buffer_reused_per_context_and_stream(feat_lib, run_prog):
    """One scratch buffer per (context, stream): reused, grown on its stream (free after the last
    use, then a larger allocation), per-launch under graph capture and for the per-thread
    stream, failures, and 8 threads on 2 streams checked against the enqueue order."""
    assert run_prog(feat_lib, "scratch.c").stdout == "OK\n"


def test_scratch_per_launch_without_stream_ids(feat_lib, run_prog, fake_dir_no_ctx_id):
    assert run_prog(feat_lib, "scratch.c", "noids", fake=fake_dir_no_ctx_id).stdout == "OK\n"


@pytest.mark.parametrize("name,metas,prog", [
    ("feat", libs.feature_variants, "scratch.c"),
    ("rows", libs.launch_variants, "launch.c"),
    ("tma", libs.tma_variants, "tma.c"),
])
def test_scratch_and_attribute_caches_under_thread_sanitizer(tmp_path, fake_dir, name, metas,
                                                             prog):
    """The per-stream scratch slots, the per-context attribute cache and the per-thread tensor
    descriptor caches are race-free."""
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    if subprocess.run([harness.cc(), "-fsanitize=thread", probe, "-o", tmp_path / "probe"],
                      capture_output=True).returncode != 0:
        pytest.skip("compiler lacks -fsanitize=thread")
    lib = harness.generate(tmp_path / "lib", name, metas())
    harness.compile_library(lib, extra=("-fsanitize=thread", "-g"))
    exe = harness.compile_program(lib, prog, tmp_path / "prog", fake_dir=fake_dir,
                                  extra=("-fsanitize=thread", "-g"))
    p = harness.run_program(exe, fake_dir=fake_dir)
    assert "ThreadSanitizer" not in p.stderr, p.stderr
    assert p.stdout == "OK\n"
