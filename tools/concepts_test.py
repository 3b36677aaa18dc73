"""The generated copies of the concept tables are current, one edit of a table reaches the rule,
the tool and the docs together (tools/gen_concepts.py), and what names a concept without reading
its table (triton_algo's parameters, the compile tool's flags and checks) agrees with it."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# The runfiles root: tools/, triton_aot/, rules/private/{rules,generated}/, runtime/trt_targets.h
# and docs/gpu_targets.md as the test's data.
REPO = Path(os.path.abspath(__file__)).parents[1]
sys.path.insert(0, str(REPO / "tools"))

import gen_concepts  # noqa: E402
from triton_aot.compile import triton_adapter  # noqa: E402
from triton_aot.contract.variant import Target  # noqa: E402
from triton_aot.core import launch_options, targets  # noqa: E402
from triton_aot.core import target as target_grammar  # noqa: E402
from triton_aot.core.errors import UserError  # noqa: E402


def test_generated_copies_are_current():
    stale = gen_concepts.stale(REPO)
    assert not stale, (f"{', '.join(stale)} differ from triton_aot's tables: run "
                       "python3 tools/gen_concepts.py and commit the result")


def _edited_targets(monkeypatch):
    """triton_aot/core/targets.py with one edit: triton 3.9 also compiles sm_88."""
    source = (REPO / "triton_aot" / "core" / "targets.py").read_text()
    old = "(3, 9): (70, 72, 75, 80, 86, 87, 89,"
    assert source.count(old) == 1
    spec = importlib.util.spec_from_loader("triton_aot.core.targets", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source.replace(old, "(3, 9): (70, 72, 75, 80, 86, 87, 88, 89,"),
                 "targets.py", "exec"), module.__dict__)
    monkeypatch.setattr(gen_concepts, "targets", module)
    monkeypatch.setattr(triton_adapter, "targets", module)
    monkeypatch.setattr(target_grammar, "targets", module)
    monkeypatch.setattr(triton_adapter, "installed_triton_version", lambda: "3.9.0")
    return module


def test_one_table_edit_changes_the_rule_the_tool_and_the_docs(monkeypatch):
    with pytest.raises(UserError, match="cannot compile for sm_88"):
        triton_adapter.parse_target("cuda:88")
    _edited_targets(monkeypatch)
    # the tool
    assert triton_adapter.parse_target("cuda:88").arch == 88
    # the rule: python_env.bzl reads CUDA_ARCHS_BY_TRITON from the generated targets.bzl, which
    # now differs from the committed one, so test_generated_copies_are_current fails until it is
    # regenerated
    bzl = gen_concepts.targets_bzl()
    assert '"3.9": [70, 72, 75, 80, 86, 87, 88, 89,' in bzl
    assert bzl != (REPO / "rules/private/generated/targets.bzl").read_text()
    # the docs: the GPU targets page's table, likewise
    table = gen_concepts.targets_table_markdown()
    assert "| cuda:88 | no | no | no | no | yes |" in table
    assert table not in (REPO / gen_concepts.TARGETS_PAGE).read_text()
    assert set(gen_concepts.stale(REPO)) >= {"rules/private/generated/targets.bzl", "docs/gpu_targets.md"}


def test_cuda_70_is_accepted_by_the_tool_for_every_release():
    for version in targets.CUDA_ARCHS_BY_TRITON:
        assert {70, 72} <= targets.cuda_archs(f"{version[0]}.{version[1]}.0")
    assert targets.CUDA_ARCHS[0] == 70


def test_ptx_fallback_arch_is_portable():
    assert targets.ptx_fallback_arch([80, 90, 100, 120]) == 80
    assert targets.ptx_fallback_arch([75, 86]) == 75
    assert targets.ptx_fallback_arch([90, 100]) is None
    for arch in (80, 86, 89):
        assert all(targets.ptx_runs_on(arch, sm) for sm in targets.CUDA_ARCHS if sm >= arch)


def _compile_and_run(tmp_path: Path, program: str) -> str:
    cc = os.environ.get("RULES_TRITON_CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    (tmp_path / "main.c").write_text(program)
    exe = tmp_path / "main"
    subprocess.run([os.path.abspath(cc) if os.path.exists(cc) else cc, "-std=c99", "-Wall",
                    "-Werror", f"-I{REPO / 'runtime'}", str(tmp_path / "main.c"), "-o", str(exe)],
                   check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_the_runtime_picks_cubins_by_the_targets_tables_rule(tmp_path):
    # Every known SM, their neighbours and SMs no release compiles for yet.
    sms = sorted(set(range(60, 140)) | set(targets.CUDA_ARCHS))
    program = (
        '#include <stdio.h>\n#include "trt_targets.h"\n'
        "int main(void) {\n"
        f"  for (int arch = {sms[0]}; arch <= {sms[-1]}; ++arch)\n"
        f"    for (int sm = {sms[0]}; sm <= {sms[-1]}; ++sm)\n"
        '      printf("%d %d %d %d\\n", arch, sm, trt_cubin_runs_on(arch, sm), '
        "trt_ptx_runs_on(arch, sm));\n"
        "  return 0;\n}\n")
    rows = _compile_and_run(tmp_path, program).split("\n")
    assert len(rows) - 1 == len(sms) ** 2
    for row in rows[:-1]:
        arch, sm, cubin, ptx = map(int, row.split())
        assert bool(cubin) == targets.cubin_runs_on(arch, sm), (arch, sm)
        assert bool(ptx) == targets.ptx_runs_on(arch, sm), (arch, sm)


def test_the_backend_table_names_the_compile_tools_outputs():
    from triton_aot.compile import compile as compile_tool
    for b in targets.BACKENDS.values():
        assert f"out_{b.image}" in compile_tool.OUTPUT_FLAGS, b.name
        assert set(b.outputs) <= set(compile_tool.OUTPUT_FLAGS), b.name
    cuda, hip = Target("cuda", 90, 32), Target("hip", "gfx942", 64)
    assert set(targets.backend_only_flags(cuda)) == {"out_hsaco", "out_amdgcn"}
    assert set(targets.backend_only_flags(hip)) == {"out_cubin", "out_ptx", "out_sass",
                                                     "embed_ptx"}
    assert cuda.has_tma and not hip.has_tma
    assert not Target("cuda", targets.TMA_FROM - 1, 32).has_tma
    # the IR groups hold the image the compile writes
    for b in targets.BACKENDS.values():
        assert b.image in b.ir_groups, b.name


# ----------------------------------------------------------------------------- launch options

def _algo_bzl_params() -> list[str]:
    text = (REPO / "rules" / "private" / "rules" / "algo.bzl").read_text()
    head = re.search(r"def triton_algo\(([^)]*)\)", text).group(1)
    return [p.split("=")[0].strip() for p in head.split(",")]


def test_launch_options_are_named_alike_by_the_rule_and_the_tool():
    names = [o.name for o in launch_options.OPTIONS]
    assert set(names) <= set(_algo_bzl_params()), "triton_algo lacks a launch option"
    flags = set(re.findall(r'\b[bi]\("(\w+)"', (REPO / "triton_aot" / "compile" / "compile.py").read_text()))
    assert set(names) <= flags, "the compile tool lacks a flag for a launch option"
    assert {f.name for f in dataclasses.fields(triton_adapter.CompileOptions)} == set(names)


def _options(**kw):
    base = dict(num_warps=4, num_stages=3)
    base.update(kw)
    return triton_adapter.CompileOptions(**base)


def _tool_accepts(opts, target) -> bool:
    try:
        triton_adapter.check_options(opts, target)
        return True
    except UserError:
        return False


def test_the_tool_checks_launch_options_as_the_table_says():
    cuda90, cuda80, hip = Target("cuda", 90, 32), Target("cuda", 80, 32), Target("hip", "gfx942", 64)
    for o in launch_options.OPTIONS:
        if not o.is_bool:
            for value in [None, *range(-1, 300)]:
                if value is None and o.default is None and o.name != "maxnreg":
                    continue  # num_warps and num_stages always have a value
                assert _tool_accepts(_options(**{o.name: value}), cuda90) == o.allows(value), \
                    (o.name, value)
        changed = (not o.default) if o.is_bool else next(v for v in (o.values or range(o.low, 300))
                                              if v != o.default and o.allows(v))
        needs_90 = o.min_cuda_arch == 90
        assert _tool_accepts(_options(**{o.name: changed}), cuda80) == (not needs_90), o.name
        assert _tool_accepts(_options(**{o.name: changed}), hip) == (not o.cuda_only), o.name


def test_supported_triton_releases_are_the_targets_tables():
    releases = sorted(targets.CUDA_ARCHS_BY_TRITON)
    assert triton_adapter.SUPPORTED_TRITON == (releases[0], releases[-1])
    assert [minor for _, minor in releases] == list(range(releases[0][1], releases[-1][1] + 1))
