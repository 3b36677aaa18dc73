"""Runs every compile and link case of the bad-input catalogue (catalogue.py) as its own process.

Each case must exit with code 1, print nothing on stdout, print one message on stderr that starts
with `error: ` and contains every `culprit` and `fix` fragment, show no Python traceback, and
write no output file. With --verbose a traceback is shown (checked for one case of each tool).
Rule cases run as analysis tests (rule_failures.bzl); those refused at build (`at_build`) also run
here, as the compile tool in the library's first action, with the flags the analysis test checks
the action has.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
sys.path.insert(0, str(HERE))

import catalogue  # noqa: E402
import forked_tool  # noqa: E402
import update_catalogue  # noqa: E402

import triton_aot  # noqa: E402
from triton_aot.contract import variant  # noqa: E402
from triton_aot.core import abi  # noqa: E402
from triton_aot.core.signature import parse_type  # noqa: E402

REPO = Path(triton_aot.__file__).resolve().parent.parent
# and the rule cases refused at build, by the compile tool as the library's action runs it
# The catalogue's tools, by the module that runs them.
TOOL_MODULES = {"compile": "triton_aot.compile.compile", "link": "triton_aot.emit_c.link",
                "capture": "triton_aot.capture.tool",
                "autotune": "triton_aot.compile.autotune_configs",
                "torch": "triton_aot.torch.torch_ops", "c_entry": "triton_aot.c_entry.entry",
                "tune": "triton_aot.tuning.tune",
                # `bazel run @rules_triton//tools:tune`'s entry (tools/tune_bundle.py), as a path
                "tune bundle": str(REPO / "tools" / "tune_bundle.py")}
TOOL_CASES = [c for c in catalogue.CASES if c.tool in TOOL_MODULES or c.at_build]


# ----------------------------------------------------------------------------- building inputs


def _subst(text: str, dirs: dict) -> str:
    for key, value in dirs.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def _arg(name, ty, hint):
    type_ = parse_type(ty, name)  # the record carries the type as JSON (core/arg_type.py)
    if type_.is_tensordesc:
        return {"name": name, "type": type_.to_json(),
                "tma": {"data_type": 7, "elem_size": 4, "swizzle": 0, "box": [64]}}
    if type_.is_constexpr:
        return {"name": name, "type": type_.to_json(), "value": hint, "value_repr": repr(hint)}
    return {"name": name, "type": type_.to_json(), "hint": hint, "ctype": abi.c_type(ty).ctype}


def link_metadata(spec: dict) -> dict:
    """Variant metadata as triton_aot.compile.compile writes it, from a catalogue variant spec."""
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
        "constexprs": {a["name"]: a["value_repr"] for a in args
                       if a["type"]["kind"] == "constexpr"},
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


def capture_argv(case, dirs: dict, verbose: bool = False) -> list:
    flags = dict(catalogue.CAPTURE_BASE)
    flags.update(case.flags)
    argv = [f"--{k}={v}" for k, v in flags.items() if v is not None] + list(case.extra)
    return [_subst(a, dirs) for a in argv] + (["--verbose"] if verbose else [])


def autotune_argv(case, dirs: dict, verbose: bool = False) -> list:
    flags = dict(catalogue.AUTOTUNE_BASE)
    flags.update(case.flags)
    argv = [f"--{k}={v}" for k, v in flags.items() if v is not None] + list(case.extra)
    return [_subst(a, dirs) for a in argv] + (["--verbose"] if verbose else [])


def c_entry_argv(case, dirs: dict, verbose: bool = False) -> list:
    flags = dict(catalogue.C_ENTRY_BASE)
    flags.update(case.flags)
    argv = [f"--{k}={v}" for k, v in flags.items() if v is not None] + list(case.extra)
    return [_subst(a, dirs) for a in argv] + (["--verbose"] if verbose else [])


def torch_argv(case, dirs: dict, verbose: bool = False) -> list:
    """The generator's plan for one op (case.flags["spec"]) over a library description of `k`."""
    from triton_aot.contract import library
    stream = library.Param("stream", "CUstream", None, None)
    args = tuple(library.Param(*p) for p in catalogue.TORCH_LIBRARY_PARAMS)
    description = library.Library(
        name="k", header="k.h", backend="cuda",
        functions=(library.Function("k_default", "default", (stream, *args)),),
        algos=(library.Algo(0, "BLOCK=128 num_warps=4 num_stages=3", "0" * 16),),
        specializations=((("x_ptr", 16), ("out_ptr", 16)),),
        variants=(library.Variant("k_a0_s0_sm90", 0, 0, "cuda:90"),), tuning=None)
    lib = dirs["TMP"] / "k.library.json"
    lib.write_text(description.to_json())
    plan = dirs["TMP"] / "plan.json"
    plan.write_text(json.dumps({
        "namespace": "ns", "label": "//pkg:ops", "so_name": "libops.so",
        "ops": [{"name": "o", "spec": dict(json.loads(case.flags["spec"]), lib="//k:k"),
                 "lib": {"description": str(lib), "include": "k.h"}}]}))
    return [f"--plan={plan}", f"--out_cc={dirs['OUT']}/ops.cc",
            f"--out_py={dirs['OUT']}/ops.py"] + (["--verbose"] if verbose else [])


def tune_argv(case, dirs: dict, verbose: bool = False) -> list:
    """A pack as tools/tune writes it, as far as the refused flags read it (pack.json and the
    inputs; the table would go under {OUT})."""
    pack = dirs["TMP"] / "pack"
    pack.mkdir()
    shutil.copy(KERNELS / "tune_inputs.py", pack / "inputs.py")
    (pack / "pack.json").write_text(json.dumps({
        "library": "library.json", "so": "libmm.so", "inputs": "inputs.py",
        "table": str(dirs["OUT"] / "mm.tuning.json")}))
    return [str(pack)] + [_subst(a, dirs) for a in case.extra] + (["--verbose"] if verbose else [])


def tune_bundle_argv(case, dirs: dict, verbose: bool = False) -> list:
    """What the `bazel run` launcher passes (its runfiles, its manifest, the folder to write),
    then the case's flags; refused before the manifest is read."""
    return (["--runfiles", str(dirs["TMP"]), "--manifest", str(dirs["TMP"] / "tune.files"),
             str(dirs["OUT"] / "bundle")] + [_subst(a, dirs) for a in case.extra])


def case_job(case, root: Path, verbose: bool = False) -> tuple[forked_tool.Job, dict]:
    """The tool invocation of one case (module, flags, environment, working folder) and its
    folders; the inputs it names are written under `root`."""
    dirs = {"K": KERNELS, "OUT": root / "out", "TMP": root / "tmp"}
    for key in ("OUT", "TMP"):
        dirs[key].mkdir(parents=True)
    home = root / "home"
    home.mkdir()
    tool = case.tool if case.tool in ("link", "capture", "autotune", "torch", "c_entry", "tune",
                                      "tune bundle") else "compile"
    argv = {"compile": compile_argv, "link": link_argv, "capture": capture_argv,
            "autotune": autotune_argv, "torch": torch_argv, "c_entry": c_entry_argv, "tune": tune_argv,
            "tune bundle": tune_bundle_argv}[tool](case, dirs, verbose)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITON_", "PYTHON"))}
    env.update(PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1", HOME=str(home),
               TMPDIR=str(dirs["TMP"]))
    return forked_tool.Job(case.id, TOOL_MODULES[tool], argv, env, dirs["TMP"]), dirs


def case_result(job: forked_tool.Job, dirs: dict, rc: int, stdout: str, stderr: str) -> dict:
    return {"argv": job.argv, "rc": rc, "stdout": stdout, "stderr": stderr,
            "outputs": sorted(str(p.relative_to(dirs["OUT"])) for p in dirs["OUT"].rglob("*")),
            "dirs": {k: str(v) for k, v in dirs.items()}}


def run_case(case, root: Path, verbose: bool = False) -> dict:
    """One case as a fresh interpreter runs it."""
    job, dirs = case_job(case, root, verbose)
    proc = subprocess.run([sys.executable, *forked_tool.interpreter_args(job.module), *job.argv],
                          capture_output=True, text=True, env=job.env, cwd=job.cwd,
                          timeout=job.timeout)
    return case_result(job, dirs, proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every tool case, each in a process forked from one that imported the tools once
    (forked_tool: the cases would spend most of their CPU importing); the verbose tests below
    and test_fresh_interpreters_agree run cases as fresh interpreters."""
    root = tmp_path_factory.mktemp("cases")
    base_path = forked_tool.preload()
    jobs = {c.id: case_job(c, root / c.id) for c in TOOL_CASES}
    done = forked_tool.run_all([j for j, _ in jobs.values()], base_path, root / "_streams",
                               workers=max(2, os.cpu_count() or 2))
    return {cid: case_result(job, dirs, done[cid].rc, done[cid].stdout, done[cid].stderr)
            for cid, (job, dirs) in jobs.items()}


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
    target = case.flags.get("bazel_target")
    if target:  # an action of a rule: the target and its attributes, never the tool's flags
        assert stderr.startswith(f"error: {target}: attribute '"), where
        assert not re.search(r"--[a-z]", stderr), "names a tool flag" + where


def _one_per_tool() -> list[str]:
    first: dict = {}
    for c in TOOL_CASES:
        first.setdefault((c.tool, c.at_build), c.id)
    return sorted(first.values())


@pytest.mark.parametrize("case_id", _one_per_tool())
def test_fresh_interpreters_agree(case_id, results, tmp_path):
    """The forked runs stand for fresh interpreters: one case of each tool, run both ways, gives
    the same exit code, stdout and message (its folders named alike)."""
    fresh = run_case(catalogue.by_id()[case_id], tmp_path)
    forked = results[case_id]

    def plain(r):
        text = r["stderr"]
        for key, value in r["dirs"].items():
            text = text.replace(value, "{" + key + "}")
        return r["rc"], r["stdout"], text, r["outputs"]

    assert plain(fresh) == plain(forked)


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


# ----------------------------------------------------------------------------- runtime cases

RUNTIME_CASES = [c for c in catalogue.CASES if c.tool == "runtime"]

# The library of the runtime cases: x_desc: tensordesc<fp16[64, 64]>, n: i32; grid (n).
_RUNTIME_RECORD = {
    "format": variant.FORMAT, "symbol": "desc_rt", "kernel_name": "desc_rt_kernel",
    "kernel_file": "kernels.py", "target": {"backend": "cuda", "arch": 90, "warp_size": 32},
    "algo_index": 0,
    "args": [{"name": "x_desc", "type": {"kind": "tensordesc", "elem": "fp16", "block": [64, 64]},
              "tma": {"data_type": 6, "elem_size": 2, "swizzle": 3, "box": [64, 64]}},
             {"name": "n", "type": {"kind": "scalar", "name": "i32"}, "ctype": "int32_t",
              "hint": None}],
    "num_warps": 4, "num_stages": 3, "num_ctas": 1, "launch_cooperative_grid": False,
    "launch_pdl": False, "shared": 0, "global_scratch_size": 0, "global_scratch_align": 1,
    "profile_scratch_size": 0, "profile_scratch_align": 1,
    "grid": ["n", "1", "1"], "grid_c": ["(int64_t)n", "(int64_t)1", "(int64_t)1"],
    "triton_version": "3.6.0", "cubin_file": "desc_rt.cubin", "cubin_sha256": "0" * 64,
    "cubin_size": 0, "ptx_embedded": False, "ptx_file": None,
}
# A fake-driver image: the kernel's parameters are the map, 2 x int32 shape, 2 x int64 strides,
# n and the two scratch pointers.
_RUNTIME_IMAGE = (b"TRTFAKE1 tag=desc_rt kind=cubin sm=90 name=desc_rt_kernel "
                  b"params=128,4,4,8,8,4,8,8\n")
_RUNTIME_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "desc_rt.h"
#include "fake_cuda.h"
/* argv: base offset from a 16-byte aligned address, shape0, shape1, stride0, stride1 */
int main(int argc, char **argv) {
  const char *name = "?";
  CUresult r;
  if (argc != 6) return 2;
  fake_cuda_reset();
  fake_cuda_set_current(fake_cuda_create_context(0));
  r = desc_rt(NULL, (CUdeviceptr)(0x100000 + strtoll(argv[1], NULL, 0)), strtoll(argv[2], NULL, 0),
              strtoll(argv[3], NULL, 0), strtoll(argv[4], NULL, 0), strtoll(argv[5], NULL, 0), 4, 0);
  if (r == CUDA_SUCCESS) name = "CUDA_SUCCESS";
  if (r == CUDA_ERROR_INVALID_VALUE) name = "CUDA_ERROR_INVALID_VALUE";
  if (r == CUDA_ERROR_NOT_SUPPORTED) name = "CUDA_ERROR_NOT_SUPPORTED";
  printf("desc_rt(...) returned %s; %d launches, %d encodes\n", name, fake_cuda_num_launches(),
         fake_cuda_call_count("cuTensorMapEncodeTiled"));
  return 0;
}
"""


def _cc() -> str:
    return os.environ.get("RULES_TRITON_CC") or shutil.which("cc") or "cc"


def _cuda_include() -> str:
    given = os.environ.get("RULES_TRITON_CUDA_INCLUDE", "")
    if given:
        return str(Path(given).parent) if given.endswith(".h") else given
    import importlib.util
    spec = importlib.util.find_spec("triton")
    return str(Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "include")


@pytest.fixture(scope="module")
def runtime_program(tmp_path_factory):
    """The runtime cases' library (linked by the link tool, compiled with the runtime) and a
    program that calls it once with its command line's descriptor arguments."""
    d = tmp_path_factory.mktemp("runtime")
    fake_src = REPO / "tests" / "fake_cuda"
    inc = ["-I" + _cuda_include(), f"-I{d}", f"-I{REPO / 'runtime'}", f"-I{fake_src}"]
    (d / "desc_rt.json").write_text(json.dumps(_RUNTIME_RECORD))
    (d / "desc_rt.cubin").write_bytes(_RUNTIME_IMAGE)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-m", "triton_aot.emit_c.link", "--name=desc_rt",
                    f"--out_c={d}/desc_rt.c", f"--out_h={d}/desc_rt.h", str(d / "desc_rt.json")],
                   check=True, env=env)
    (d / "main.c").write_text(_RUNTIME_MAIN)
    fake = d / "fake"
    fake.mkdir()
    subprocess.run([_cc(), "-shared", "-fPIC", "-O1", *inc, "-Wl,-soname,libcuda.so.1", "-o",
                    fake / "libcuda.so.1", fake_src / "fake_cuda.c", "-lpthread"], check=True)
    exe = d / "main"
    subprocess.run([_cc(), "-std=c11", "-O1", *inc, d / "main.c", d / "desc_rt.c",
                    REPO / "runtime" / "trt_runtime.c", "-o", exe, f"-L{fake}", "-l:libcuda.so.1",
                    "-ldl", "-lpthread"], check=True)
    return exe, fake


def test_runtime_good_call_launches(runtime_program):
    exe, fake = runtime_program
    out = subprocess.run([exe, "0", "256", "256", "256", "1"], capture_output=True, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=str(fake)), check=True).stdout
    assert out == "desc_rt(...) returned CUDA_SUCCESS; 1 launches, 1 encodes\n"


@pytest.mark.parametrize("case", RUNTIME_CASES, ids=lambda c: c.id)
def test_runtime_case(case, runtime_program):
    exe, fake = runtime_program
    out = subprocess.run([exe, *case.call.split()], capture_output=True, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=str(fake)), check=True).stdout
    for fragment in case.culprit + case.fix:
        assert fragment in out, f"missing {fragment!r} in {out!r}"


@pytest.mark.parametrize("case", [c for c in catalogue.CASES if c.tool == "bazel test"],
                         ids=lambda c: c.id)
def test_bazel_test_case_is_checked_by_its_test(case):
    """A refusal only a build or an import shows is checked by its own Bazel test, whose source
    names the case and holds every fragment of the message it checks."""
    import ast
    source = (REPO / case.flags["shown_by"]).read_text()
    assert case.id in source, f"{case.flags['shown_by']} does not name {case.id}"
    strings = [n.value for n in ast.walk(ast.parse(source))
               if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    for fragment in case.culprit + case.fix:
        assert any(fragment in text for text in strings), \
            f"{case.flags['shown_by']} does not check {fragment!r}"


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
