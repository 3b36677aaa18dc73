"""Shared fixtures: the fake driver and the generated test libraries, built once per session."""

from __future__ import annotations

import pytest

import harness
import libs


@pytest.fixture(scope="session")
def fake_dir(tmp_path_factory):
    return harness.build_fake_cuda(tmp_path_factory.mktemp("fake_cuda"))


@pytest.fixture(scope="session")
def fake_dir_no_ctx_id(tmp_path_factory):
    return harness.build_fake_cuda(tmp_path_factory.mktemp("fake_cuda_no_ctx_id"),
                                   with_ctx_id=False)


@pytest.fixture(scope="session")
def add_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("add"), "add", libs.add_variants(),
                         embed_ptx_fallback=True)


@pytest.fixture(scope="session")
def add_lib_cxx(tmp_path_factory):
    """The same library with every generated file compiled as C++."""
    lib = harness.generate(tmp_path_factory.mktemp("add_cxx"), "add", libs.add_variants(),
                           embed_ptx_fallback=True)
    harness.compile_library(lib, cplusplus=True)
    return lib


@pytest.fixture(scope="session")
def add_lib_no_ptx_fallback(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("add_noptx"), "add", libs.add_variants())


@pytest.fixture(scope="session")
def feat_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("feat"), "feat", libs.feature_variants())


@pytest.fixture(scope="session")
def launch_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("launch"), "rows", libs.launch_variants())


@pytest.fixture(scope="session")
def restricted_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("restr"), "restr", libs.restricted_variants())


@pytest.fixture(scope="session")
def types_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("types"), "types_lib", libs.types_variants())


@pytest.fixture
def run_prog(tmp_path, fake_dir):
    """run_prog(lib, "prog.c", *args, cplusplus=False, fake=<dir or None>) -> stdout."""

    def _run(lib, prog, *args, cplusplus=False, fake="default", check=True):
        fake = fake_dir if fake == "default" else fake
        exe = tmp_path / (prog.replace(".", "_") + ("_cc" if cplusplus else ""))
        harness.compile_program(lib, prog, exe, cplusplus=cplusplus, with_fake=fake is not None,
                                fake_dir=fake)
        return harness.run_program(exe, args, fake_dir=fake, check=check)

    return _run


@pytest.fixture(scope="session")
def tma_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("tma"), "tma", libs.tma_variants())


@pytest.fixture(scope="session")
def tma3d_lib(tmp_path_factory):
    return harness.build(tmp_path_factory.mktemp("tma3d"), "tma3d", libs.tma3d_variants())
