"""Kernel files as their authors write them (issue 13): torch at module level, driver questions at
import, any file name, kernels from installed packages (`--kernel_module`). No GPU needed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import triton_aot
from triton_aot.kernel_loader import module_name_for_file

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
REPO = Path(triton_aot.__file__).resolve().parent.parent

SCALED_ADD = ["--kernel_name=scaled_add", "--signature=*fp32:16, *fp32:16, *fp32:16, i32, fp32",
              "--grid=cdiv(n, 1024)", "--symbol=scaled_add_k", "--algo_index=0"]


def tool(args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "triton_aot.compile", *map(str, args)],
                          capture_output=True, text=True, env=env)


def assert_one_error_line(proc):
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


needs_torch = pytest.mark.skipif(not has_torch(), reason="no torch in this environment")


@pytest.mark.parametrize("stem, name", [
    ("01-vector-add", "_01_vector_add"),
    ("fused softmax", "fused_softmax"),
    ("class", "_class"),
    ("matmul.v2", "matmul_v2"),
    ("add", "add"),
])
def test_module_name_for_file(stem, name):
    assert module_name_for_file(stem) == name
    assert name.isidentifier()


@needs_torch
@pytest.mark.parametrize("target, block", [("cuda:80", 256), ("cuda:90", 1024),
                                           ("hip:gfx942", 256)])
def test_tutorial_style_file_builds_unchanged(tmp_path, target, block):
    """02-fused-ops.py: a dash in the name, torch called at import, the target asked at import
    (its answer is the action's target: the block size in the TTIR follows it)."""
    out = tmp_path / "o"
    out.mkdir()
    proc = tool([f"--kernel_path={KERNELS / '02-fused-ops.py'}", *SCALED_ADD,
                 f"--target={target}", f"--out_json={out / 'k.json'}",
                 f"--out_ttir={out / 'k.ttir'}"])
    assert proc.returncode == 0, proc.stderr
    record = json.loads((out / "k.json").read_text())
    assert record["kernel_file"] == "02-fused-ops.py"
    ttir = (out / "k.ttir").read_text()
    assert f"tt.make_range {{end = {block} : i32" in ttir, ttir[:2000]


@pytest.mark.parametrize("kernel, line, call", [
    ("device_query_at_import.py", 6, "utils.get_device_properties"),
    ("stream_at_import.py", 5, "get_current_stream()"),
])
def test_device_questions_at_import_are_refused_with_the_line(tmp_path, kernel, line, call):
    proc = tool([f"--kernel_path={KERNELS / kernel}", "--kernel_name=k", "--signature=*fp32",
                 "--grid=1", "--target=cuda:90", "--symbol=k", f"--out_json={tmp_path / 'k.json'}"])
    message = assert_one_error_line(proc)
    assert f"{kernel}:{line} calls triton.runtime.driver.active.{call}" in message
    assert "needs a GPU" in message and "cuda:90" in message
    assert "NUM_SMS" in message  # the fix for the common case (an SM count)
    assert not (tmp_path / "k.json").exists()


def test_build_driver_answers_the_target_and_is_removed_afterwards():
    """In one process (the persistent worker): installed for the block, then the previous
    state again, so the next request never sees another target's answers."""
    from triton.runtime.driver import driver
    from triton_aot import build_driver

    before = driver._active
    with build_driver.answering_for("cuda", 90, 32) as active:
        assert driver.active is active
        target = driver.active.get_current_target()
        assert (target.backend, target.arch, target.warp_size) == ("cuda", 90, 32)
        assert driver.active.get_current_device() == 0
        with pytest.raises(build_driver.DeviceAccessRefused, match="get_benchmarker"):
            driver.active.get_benchmarker()
    assert driver._active is before
    with build_driver.answering_for("hip", "gfx942", 64):
        target = driver.active.get_current_target()
        assert (target.backend, target.arch, target.warp_size) == ("hip", "gfx942", 64)
    assert driver._active is before


def has_liger():
    try:
        import liger_kernel  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not has_liger(), reason="liger-kernel is not installed (tools/kernel_packages.lock)")
def test_kernel_from_an_installed_package(tmp_path):
    proc = tool(["--kernel_module=liger_kernel.ops.swiglu", "--kernel_name=_swiglu_forward_kernel",
                 "--signature=*bf16:16, *bf16:16, *bf16:16, i32:16, fp32, 4096, 4096",
                 "--grid=1", "--num_warps=8", "--target=cuda:90", "--symbol=swiglu",
                 f"--out_json={tmp_path / 'k.json'}", f"--out_cubin={tmp_path / 'k.cubin'}"])
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "k.json").read_text())
    assert record["kernel_file"] == "liger_kernel.ops.swiglu"
    assert record["kernel_name"] == "_swiglu_forward_kernel"
    assert (tmp_path / "k.cubin").stat().st_size > 0


@pytest.mark.parametrize("flags, expected", [
    (["--kernel_module=no_such_package.ops.norm"],
     "error: --kernel_module: no module named 'no_such_package' in the toolchain's Python environment"),
    (["--kernel_module=liger-kernel.ops"], "error: --kernel_module: 'liger-kernel.ops' is not a dotted module name"),
    ([f"--kernel_module=os.path", f"--kernel_path={KERNELS / 'add.py'}"],
     "error: --kernel_module: given together with --kernel_path; pass one of them"),
    ([], "error: missing required flag(s): --kernel_path (or --kernel_module)"),
])
def test_kernel_module_refusals(tmp_path, flags, expected):
    proc = tool([*flags, "--kernel_name=k", "--signature=*fp32", "--grid=1", "--target=cuda:90",
                 "--symbol=k", f"--out_json={tmp_path / 'k.json'}"])
    assert assert_one_error_line(proc).startswith(expected)
