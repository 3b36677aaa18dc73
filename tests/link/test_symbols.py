"""The built library exports exactly the documented API and depends on nothing CUDA."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import harness
import libs

API = {"add", "add_default", "load_add", "unload_add", "add_get_num_algos", "add_get_algo_info"}


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not on PATH")
    return path


def _exported(so) -> set[str]:
    out = subprocess.run([_tool("nm"), "-D", "--defined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.parametrize("which", ["add_lib", "add_lib_cxx"])
def test_only_documented_api_is_exported(request, which):
    lib = request.getfixturevalue(which)
    assert _exported(lib.so) == API


def test_no_cuda_library_dependency(add_lib):
    out = subprocess.run([_tool("readelf"), "-d", str(add_lib.so)], capture_output=True,
                         text=True, check=True).stdout
    needed = [line for line in out.splitlines() if "(NEEDED)" in line]
    assert needed and not any("cuda" in line for line in needed), needed


def test_api_exported_under_fvisibility_hidden(tmp_path):
    lib = harness.generate(tmp_path, "add", libs.add_variants())
    harness.compile_library(lib, extra=("-fvisibility=hidden",))
    assert _exported(lib.so) == API
