"""Runs every compile and link case of the bad-input catalogue (catalogue.py) as a subprocess.

Each case must exit with code 1, print nothing on stdout, print one message on stderr that starts
with `error: ` and contains every `culprit` and `fix` fragment, show no Python traceback, and
write no output file. With --verbose a traceback is shown (checked for one case of each tool).
Rule cases run as analysis tests (rule_failures.bzl); here only the generated files are checked.
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
sys.path.insert(0, str(HERE))

import catalogue  # noqa: E402
import update_catalogue  # noqa: E402

import triton_aot  # noqa: E402
from triton_aot import abi, variant  # noqa: E402

REPO = Path(triton_aot.__file__).resolve().parent.parent
TOOL_CASES = [c for c in catalogue.CASES if c.tool in ("compile", "link")]


# ----------------------------------------------------------------------------- building inputs


def _subst(text: str, dirs: dict) -> str:
    for key, value in dirs.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def _arg(name, ty, hint):
    if ty == "constexpr":
        return {"name": name, "type": "constexpr", "value": hint, "value_repr": repr(hint),
                "constexpr": True}
    a = {"name": name, "type": ty, "hint": hint, "constexpr": False}
    a["ctype"] = abi.c_type(ty).ctype
    return a


def link_metadata(spec: dict) -> dict:
    """Variant metadata as triton_aot.compile writes it, from a catalogue variant spec."""
    spec = dict(spec)
    args = [_arg(*a) for a in catalogue.LINK_ARGS[spec.pop("args", "copy")]]
    edits, arg_edits = spec.pop("set", {}), spec.pop("arg_set", {})
    arch = spec.pop("arch", 90)
    symbol = spec.pop("symbol")
    meta = {
        "format": variant.FORMAT,
        "symbol": symbol,
        "kernel_name": spec.pop("kernel_name", "copy_kernel"),
        "kernel_file": "kernels.py",
        "target": {"backend": "cuda", "arch": arch, "warp_size": 32},
        "algo_index": spec.pop("algo_index", None),
        "args": args,
        "constexprs": {a["name"]: a["value_repr"] for a in args if a["constexpr"]},
        "num_warps": spec.pop("num_warps", 4), "num_stages": 3, "num_ctas": 1,
        "launch_cooperative_grid": False, "launch_pdl": False, "shared": 0,
        "global_scratch_size": 0, "global_scratch_align": 1,
        "profile_scratch_size": 0, "profile_scratch_align": 1,
        "grid": ["cdiv(n, 64)", "1", "1"],
        "grid_c": ["((int64_t)n + (int64_t)63) / (int64_t)64", "(int64_t)1", "(int64_t)1"],
        "triton_version": "3.6.0", "cubin_file": f"{symbol}.cubin", "cubin_sha256": "0" * 64,
        "cubin_size": 0, "ptx_embedded": False, "ptx_file": None,
    }
    assert not spec, f"unknown variant spec keys {sorted(spec)}"
    meta.update(copy.deepcopy(edits))
    for index, changes in arg_edits.items():
        for key, value in changes.items():
            if value is None:
                meta["args"][index].pop(key, None)
            else:
                meta["args"][index][key] = value
    return meta


def compile_argv(case, dirs: dict, verbose: bool = False) -> list:
    flags = dict(catalogue.COMPILE_BASE)
    flags.update(case.flags)
    if case.copy_as:
        shutil.copy(KERNELS / "kernels.py", dirs["TMP"] / case.copy_as)
        flags["kernel_path"] = str(dirs["TMP"] / case.copy_as)
    argv = [f"--{k}={v}" for k, v in flags.items() if v is not None] + list(case.extra)
    return [_subst(a, dirs) for a in argv] + (["--verbose"] if verbose else [])


def link_argv(case, dirs: dict, verbose: bool = False) -> list:
    inputs = dirs["TMP"] / "in"
    inputs.mkdir()
    files = []
    for i, spec in enumerate(case.variants):
        path = inputs / f"v{i}.json"
        if "text" in spec:
            path.write_text(spec["text"])
        else:
            meta = link_metadata(spec)
            path.write_text(json.dumps(meta, indent=1))
            # the cubin each record names, as the compile tool writes it next to the record
            (inputs / meta["cubin_file"]).write_bytes(b"\x7fELF fake cubin " + path.name.encode())
        files.append(str(path))
    flags = dict(catalogue.LINK_BASE)
    flags.update(case.flags)
    argv = [f"--{k}={v}" for k, v in flags.items() if v is not None] + list(case.extra) + files
    return [_subst(a, dirs) for a in argv] + (["--verbose"] if verbose else [])


def run_case(case, root: Path, verbose: bool = False) -> dict:
    dirs = {"K": KERNELS, "OUT": root / "out", "TMP": root / "tmp"}
    for key in ("OUT", "TMP"):
        dirs[key].mkdir(parents=True)
    home = root / "home"
    home.mkdir()
    argv = (compile_argv if case.tool == "compile" else link_argv)(case, dirs, verbose)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITON_", "PYTHON"))}
    env.update(PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1", HOME=str(home),
               TMPDIR=str(dirs["TMP"]))
    proc = subprocess.run([sys.executable, "-m", f"triton_aot.{case.tool}", *argv],
                          capture_output=True, text=True, env=env, cwd=dirs["TMP"], timeout=300)
    return {"argv": argv, "rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "outputs": sorted(str(p.relative_to(dirs["OUT"])) for p in dirs["OUT"].rglob("*")),
            "dirs": {k: str(v) for k, v in dirs.items()}}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every tool case, run in parallel (the subprocesses spend most of their time importing)."""
    root = tmp_path_factory.mktemp("cases")
    workers = max(2, min(8, (os.cpu_count() or 2) * 2))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = {c.id: pool.submit(run_case, c, root / c.id) for c in TOOL_CASES}
        return {cid: f.result() for cid, f in futures.items()}


# ----------------------------------------------------------------------------- the cases


@pytest.mark.parametrize("case", TOOL_CASES, ids=lambda c: c.id)
def test_case(case, results):
    r = results[case.id]
    stderr = r["stderr"]
    where = f"\n{case.tool} {' '.join(r['argv'])}\nstderr:\n{stderr}"
    pending = f"\n(this case waits for a product fix: {case.needs_fix})" if case.needs_fix else ""
    assert "Traceback" not in stderr, "a Python traceback without --verbose" + where + pending
    assert r["rc"] == 1, f"exit code {r['rc']}" + where
    assert r["stdout"] == "", "wrote to stdout: " + r["stdout"]
    assert stderr.startswith("error: "), where
    assert stderr.count("\nerror: ") == 0, "more than one error message" + where
    for fragment in case.culprit + case.fix:
        fragment = _subst(fragment, r["dirs"])
        assert fragment in stderr, f"missing {fragment!r}" + where + pending
    assert r["outputs"] == [], f"wrote outputs {r['outputs']} despite the error"


@pytest.mark.parametrize("case_id", ["kernel_unknown_name", "grid_injection"])
def test_compile_verbose_shows_traceback(case_id, tmp_path):
    r = run_case(catalogue.by_id()[case_id], tmp_path, verbose=True)
    assert r["rc"] == 1
    assert "Traceback (most recent call last)" in r["stderr"], r["stderr"]
    assert "UserError" in r["stderr"]


def test_link_verbose_shows_traceback(tmp_path):
    r = run_case(catalogue.by_id()["link_mixed_kernels"], tmp_path, verbose=True)
    assert r["rc"] != 0
    assert "Traceback (most recent call last)" in r["stderr"], r["stderr"]
    assert "mixed kernel names" in r["stderr"]


# ----------------------------------------------------------------------------- the catalogue


def test_catalogue_is_consistent():
    catalogue.check()
    assert len(catalogue.CASES) >= 25
    assert {c.layer for c in catalogue.CASES} == set(catalogue.LAYERS), "a layer has no case"
    # the list, by case id
    for required in ("grid_injection", "grid_names_constexpr", "grid_unknown_name",
                     "grid_float_param", "kernel_float_block", "kernel_string_block",
                     "sig_hint_on_float", "constexpr_duplicate", "hints_conflicting",
                     "rule_specializations_duplicate", "rule_specializations_conflicting",
                     "link_args_disagree", "link_duplicate_variants", "link_mixed_kernels",
                     "link_missing_target", "kernel_import_fails", "kernel_syntax_error",
                     "kernel_unknown_name", "sig_wrong_count", "sig_unknown_type",
                     "target_not_cuda", "rule_targets_not_a_target"):
        assert required in catalogue.by_id(), required


@pytest.mark.parametrize("name", update_catalogue.FILES)
def test_generated_files_are_current(name):
    expected = update_catalogue.render()[name]
    actual = (HERE / name).read_text()
    assert actual == expected, (f"tests/reliability/{name} is stale: run "
                                "python3 tests/reliability/update_catalogue.py")
