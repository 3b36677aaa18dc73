"""Kernel files as their authors write them: torch at module level, driver and torch.cuda
questions at import, any file name, kernels from installed packages (`--kernel_module`), import
failures that name the Bazel-level fix, the once-per-library import check (--out_params), and
the environment check against the action's fingerprint. No GPU needed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import triton_aot
from triton_aot.compile import env_fingerprint
from triton_aot.compile.kernel_loader import module_name_for_file

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
REPO = Path(triton_aot.__file__).resolve().parent.parent

SCALED_ADD = ["--kernel_name=scaled_add", "--signature=*fp32:16, *fp32:16, *fp32:16, i32, fp32",
              "--grid=cdiv(n, 1024)", "--symbol=scaled_add_k", "--algo_index=0"]


K = ["--kernel_name=k", "--signature=*fp32", "--grid=1", "--symbol=k"]


def tool(args, module="triton_aot.compile.compile"):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", module, *map(str, args)],
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
    from triton_aot.compile import build_driver

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


# --------------------------------------------------------------------------- torch.cuda


@needs_torch
@pytest.mark.parametrize("target, block, warps", [("cuda:80", 256, 32), ("cuda:90", 1024, 32),
                                                  ("hip:gfx942", 1024, 64)])
def test_torch_cuda_answers_for_the_target(tmp_path, target, block, warps):
    """capability, name, properties, is_available, device_count: the block size and the
    stored constant in the TTIR follow the target, not the build machine (which has no GPU)."""
    proc = tool([f"--kernel_path={KERNELS / 'torch_cuda_at_import.py'}", *K,
                 f"--target={target}", f"--out_ttir={tmp_path / 'k.ttir'}"])
    assert proc.returncode == 0, proc.stderr
    ttir = (tmp_path / "k.ttir").read_text()
    assert f"tt.make_range {{end = {block} : i32" in ttir, ttir[:2000]
    assert f"{float(warps):e}" in ttir, ttir[:2000]


@needs_torch
@pytest.mark.parametrize("kernel, line, call", [
    ("torch_cuda_alloc_at_import.py", 6, "torch.cuda._lazy_init()"),
    ("torch_cuda_sms_at_import.py", 6, "torch.cuda.get_device_properties().multi_processor_count"),
    ("torch_cuda_sync_at_import.py", 6, "torch.cuda.synchronize()"),
])
def test_torch_device_use_at_import_is_refused_with_the_line(tmp_path, kernel, line, call):
    proc = tool([f"--kernel_path={KERNELS / kernel}", *K, "--target=cuda:90",
                 f"--out_json={tmp_path / 'k.json'}"])
    message = assert_one_error_line(proc)
    assert f"{kernel}:{line} calls {call}, which needs a GPU" in message, message
    assert "cuda:90" in message and "NUM_SMS" in message
    assert not (tmp_path / "k.json").exists()


@needs_torch
def test_torch_cuda_is_patched_only_inside_the_block():
    """The persistent worker runs many requests in one process: each sees its own target, and
    torch.cuda is itself again afterwards."""
    import torch
    from triton_aot.compile import build_torch_cuda

    original = torch.cuda.get_device_capability
    with build_torch_cuda.answering_for("cuda", 90, 32):
        assert torch.cuda.get_device_capability() == (9, 0)
        assert torch.cuda.get_device_name() == "NVIDIA H100 80GB HBM3"
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
    with build_torch_cuda.answering_for("hip", "gfx942", 64):
        assert torch.cuda.get_device_capability() == (9, 4)
        assert torch.cuda.get_device_properties().gcnArchName == "gfx942"
    assert torch.cuda.get_device_capability is original


def test_answers_table():
    """What docs/kernels.md lists: the values follow from the target alone."""
    from triton_aot.compile import build_torch_cuda

    sm80 = build_torch_cuda.answers("cuda", 80, 32)
    assert sm80["get_device_capability()"] == (8, 0)
    assert sm80["is_bf16_supported()"] is True
    assert build_torch_cuda.answers("cuda", 75, 32)["is_bf16_supported()"] is False
    assert build_torch_cuda.answers("cuda", 120, 32)["get_device_capability()"] == (12, 0)
    assert build_torch_cuda.answers("hip", "gfx90a", 64)["get_device_capability()"] == (9, 0)
    assert build_torch_cuda.answers("hip", "gfx1100", 32)["get_device_capability()"] == (11, 0)


# --------------------------------------------------------------------------- import failures


def test_missing_module_names_the_deps_fix_under_bazel(tmp_path):
    proc = tool([f"--kernel_path={KERNELS / 'missing_helper.py'}", *K, "--target=cuda:90",
                 "--bazel_target=//kernels:tiles", f"--out_json={tmp_path / 'k.json'}"])
    message = assert_one_error_line(proc)
    assert message.startswith("error: //kernels:tiles: attribute 'deps': importing "
                              "missing_helper.py failed: ModuleNotFoundError: No module named "
                              "'repo_helpers' (missing_helper.py:3)"), message
    assert "add the py_library that provides 'repo_helpers' to deps" in message
    assert "kernel_module" in message
    assert "--import_path" not in message  # a BUILD file cannot pass it


def test_missing_module_names_the_flag_fix_on_the_command_line(tmp_path):
    proc = tool([f"--kernel_path={KERNELS / 'missing_helper.py'}", *K, "--target=cuda:90",
                 f"--out_json={tmp_path / 'k.json'}"])
    message = assert_one_error_line(proc)
    assert message.startswith("error: --kernel_path: importing missing_helper.py failed")
    assert "pass --import_path=DIR for the folder that holds 'repo_helpers'" in message


def test_missing_kernel_module_names_the_attribute(tmp_path):
    proc = tool(["--kernel_module=no_such_pkg.ops", *K, "--target=cuda:90",
                 "--bazel_target=//kernels:norm", f"--out_json={tmp_path / 'k.json'}"])
    message = assert_one_error_line(proc)
    assert message.startswith("error: //kernels:norm: attribute 'kernel_module': no module "
                              "named 'no_such_pkg'"), message
    assert "add the py_library that provides it to deps" in message


def test_import_check_alone_writes_the_parameters(tmp_path):
    """--out_params with no other output: the rule's one import per library (TritonImport)."""
    out = tmp_path / "params.json"
    proc = tool([f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
                 "--target=cuda:90", f"--out_params={out}"])
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert record["kernel"] == "add_kernel" and record["file"] == "add.py"
    assert [p["name"] for p in record["params"]][:2] == ["x_ptr", "y_ptr"]
    assert record["params"][-1]["constexpr"] is True
    assert sorted(os.listdir(tmp_path)) == ["params.json"]


def test_import_check_fails_like_a_compile(tmp_path):
    proc = tool([f"--kernel_path={KERNELS / 'missing_helper.py'}", "--kernel_name=k",
                 "--target=cuda:90", "--bazel_target=//kernels:tiles",
                 f"--out_params={tmp_path / 'p.json'}"])
    assert "attribute 'deps'" in assert_one_error_line(proc)
    assert not (tmp_path / "p.json").exists()


def test_import_check_binds_the_signature(tmp_path):
    """With the algo's signature, the import check refuses one that does not fit the kernel,
    in the BUILD's terms: once per library, before any variant compiles."""
    proc = tool([f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
                 "--target=cuda:90", "--signature=*fp32, *fp32, *fp32, i32, i32",
                 "--bazel_target=//kernels:add", f"--out_params={tmp_path / 'p.json'}"])
    message = assert_one_error_line(proc)
    assert message.startswith("error: //kernels:add: attribute 'signature': entry 5 (parameter "
                              "'BLOCK'): 'BLOCK' is tl.constexpr"), message
    assert "pass BLOCK=VALUE in attribute 'algos'" in message and "--" not in message
    assert not (tmp_path / "p.json").exists()


# --------------------------------------------------------------------------- environment


def test_matching_environment_compiles(tmp_path):
    fingerprint = tmp_path / "fingerprint.json"
    fingerprint.write_text(env_fingerprint.fingerprint()[0])
    proc = tool([f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
                 "--target=cuda:90", f"--env_fingerprint={fingerprint}",
                 f"--out_params={tmp_path / 'p.json'}"])
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("module, extra", [
    ("triton_aot.compile.compile", [f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
                            "--target=cuda:90"]),
    ("triton_aot.compile.autotune_configs", [f"--kernel_path={KERNELS / 'decorated.py'}",
                                     "--kernels=bias_kernel"]),
])
def test_swapped_environment_is_refused(tmp_path, module, extra):
    """A worker whose interpreter has another triton than the fingerprint (the action key) says:
    it must not store its cubins under this key."""
    real = json.loads(env_fingerprint.fingerprint()[0])
    swapped = dict(real, triton=dict(real["triton"], version="3.9.0", files_sha256="0" * 64))
    fingerprint = tmp_path / "fingerprint.json"
    fingerprint.write_text(json.dumps(swapped, indent=1, sort_keys=True) + "\n")
    out = tmp_path / "out"
    proc = tool([*extra, f"--env_fingerprint={fingerprint}",
                 f"--out_params={out}" if module.endswith("compile") else f"--out={out}"],
                module=module)
    message = assert_one_error_line(proc)
    assert message.startswith("error: --env_fingerprint: this executor's Python environment")
    assert "triton 3.9.0" in message and f"triton {real['triton']['version']}" in message
    assert "python_mode=archive" in message
    assert not out.exists()


def test_differences_name_packages():
    real = json.loads(env_fingerprint.fingerprint()[0])
    other = dict(real, packages=real["packages"] + ["zz-kernels==1.0"])
    text = env_fingerprint.differences(json.dumps(real), json.dumps(other))
    assert "installed packages differ" in text and "zz-kernels==1.0" in text
    assert env_fingerprint.differences(json.dumps(real), json.dumps(real)) == ""
