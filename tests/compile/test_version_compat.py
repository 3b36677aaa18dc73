"""Version differences triton_adapter handles that only some (triton, Python) pairs hit; the
version matrix (//tests/versions, tools/version_matrix) runs this file under each triton."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import triton_aot
from triton_aot.compile import triton_adapter
from triton_aot.core.errors import UserError

KERNELS = Path(__file__).resolve().parent / "kernels"
REPO = Path(triton_aot.__file__).resolve().parent.parent


def test_range_loops_with_implicit_start_and_step(tmp_path):
    """triton 3.5's code generator builds ast.Num for range(n) / range(a, b); Python 3.14 has
    no ast.Num. Compiles under every triton, on every Python the matrix runs."""
    proc = subprocess.run(
        [sys.executable, "-m", "triton_aot.compile.compile", f"--kernel_path={KERNELS / 'loops.py'}",
         "--kernel_name=row_sum_kernel", "--signature=*fp32:16, *fp32:16, i32, 128",
         "--grid=n_cols, 1, 1", "--num_warps=4", "--num_stages=1", "--target=cuda:80",
         "--symbol=row_sum_sm80", f"--out_json={tmp_path / 'k.json'}",
         f"--out_ptx={tmp_path / 'k.ptx'}"],
        capture_output=True, text=True, cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "k.json").read_text())["kernel_name"] == "row_sum_kernel"
    assert ".entry row_sum_kernel" in (tmp_path / "k.ptx").read_text()


def test_ast_num_shim_is_scoped_to_the_code_generator():
    """The shim gives triton's code generator an ast.Num only while compiling; the real ast
    module is left as it is."""
    from triton.compiler import code_generator
    had_num = hasattr(ast, "Num")
    with triton_adapter._ast_num_for_code_generator():
        node = code_generator.ast.Num(1)
        assert isinstance(node, ast.Constant) and node.value == 1
        assert code_generator.ast.For is ast.For
    assert code_generator.ast is ast
    assert hasattr(ast, "Num") == had_num


def test_supported_archs_per_triton_version():
    """What each release's bundled ptxas compiles for (tools/version_matrix probes the rest)."""
    archs = triton_adapter.supported_archs
    assert {103, 121, 110} & archs("3.5.1") == set()
    assert {101, 103, 121} <= archs("3.6.0") and 110 not in archs("3.6.0")
    for v in ("3.7.1", "3.8.0", "3.9.0"):
        assert 101 not in archs(v) and {103, 110, 121} <= archs(v)  # CUDA 13: sm_101 -> sm_110
    assert 107 in archs("3.9.0") and 107 not in archs("3.8.0")
    assert all({75, 80, 86, 89, 90, 100, 120} <= archs(v)
               for v in ("3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0"))
    assert 88 not in triton_adapter.SUPPORTED_ARCHS


def test_refused_target_names_the_version_and_the_ones_that_compile_it(monkeypatch):
    monkeypatch.setattr(triton_adapter, "installed_triton_version", lambda: "3.5.1")
    with pytest.raises(UserError) as e:
        triton_adapter.parse_target("cuda:121")
    text = str(e.value)
    assert "the ptxas of triton 3.5.1 cannot compile for sm_121" in text
    assert "triton 3.6, 3.7, 3.8, 3.9 compiles for sm_121" in text
    assert triton_adapter.parse_target("cuda:101").arch == 101
    monkeypatch.setattr(triton_adapter, "installed_triton_version", lambda: "3.9.0")
    assert triton_adapter.parse_target("cuda:110").arch == 110
    with pytest.raises(UserError, match="triton 3.5, 3.6 compiles for sm_101"):
        triton_adapter.parse_target("cuda:101")


def _compile_tma(tmp_path, kernel, signature, target="cuda:90", extra=()):
    return subprocess.run(
        [sys.executable, "-m", "triton_aot.compile.compile", f"--kernel_path={KERNELS / 'tma_copy.py'}",
         f"--kernel_name={kernel}", f"--signature={signature}", "--grid=cdiv(n, 64)",
         "--num_warps=4", "--num_stages=1", f"--target={target}", "--symbol=tma_v",
         f"--out_json={tmp_path / 'k.json'}", f"--out_ptx={tmp_path / 'k.ptx'}", *extra],
        capture_output=True, text=True, cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


def test_tensordesc_kernel_parameters_and_tma_metadata(tmp_path):
    """What the launcher relies on, under every triton of the matrix: a host descriptor
    parameter is a 128-byte .param (align 64) then its shape as u32 and strides as u64, and the
    record carries Triton's TMA encoding (swizzle, element type, the box clamped to 256)."""
    import re
    proc = _compile_tma(tmp_path, "tma_copy_kernel",
                        "tensordesc<fp16[64, 64]>, tensordesc<fp16[64,64]>, i32, 64, 64")
    assert proc.returncode == 0, proc.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    params = re.findall(r"\.param (.*?) tma_copy_kernel_param_\d+", ptx)
    desc = [".align 64 .b8", ".u32", ".u32", ".u64", ".u64"]
    assert [p.split(" .ptr")[0] for p in params] == desc * 2 + [".u32", ".u64", ".u64"], params
    rec = json.loads((tmp_path / "k.json").read_text())
    desc = {"kind": "tensordesc", "elem": "fp16", "block": [64, 64]}
    assert rec["args"][0]["type"] == desc and rec["args"][1]["type"] == desc
    assert rec["args"][0]["tma"] == {"data_type": 6, "elem_size": 2, "swizzle": 3,
                                     "box": [64, 64]}
    proc = _compile_tma(tmp_path, "tma_wide_kernel", "tensordesc<fp32[512]>, i32")
    assert proc.returncode == 0, proc.stderr
    rec = json.loads((tmp_path / "k.json").read_text())
    assert rec["args"][0]["tma"] == {"data_type": 7, "elem_size": 4, "swizzle": 0, "box": [256]}


def test_tensordesc_refused_below_sm90(tmp_path):
    proc = _compile_tma(tmp_path, "tma_wide_kernel", "tensordesc<fp32[512]>, i32",
                        target="cuda:80")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: --target: cuda:80 has no TMA, but x_desc is a host "
                                  "tensor descriptor"), proc.stderr
    assert "compile it for cuda:90 or newer" in proc.stderr


def test_tma_dtype_table_matches_the_installed_triton():
    """triton_adapter keeps its own copy of the launcher's device->host TMA element types (it
    never imports triton's driver module); it must equal the installed triton's."""
    from triton.backends.nvidia import driver
    assert triton_adapter.TMA_DTYPE_DEVICE_TO_HOST == dict(driver.TMA_DTYPE_DEVICE_TO_HOST)
