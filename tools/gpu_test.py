"""tools/gpu without a GPU and without a nested Bazel: the table (tools/gpu_suites.py) is well
formed, and `pack` of real suites (ptx, dispatch) into a temporary folder copies the files Bazel
built for them and writes the manifests that `run` reads; `run --dry-run` prints their steps.

A stand-in for tools/bazel answers `build`, `info execution_root` and `cquery` from the files this
test's data holds (the same targets the suites name, built by the Bazel that runs this test).
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNFILES = Path(os.environ["TEST_SRCDIR"]) / os.environ.get("TEST_WORKSPACE", "_main")
TOOL = RUNFILES / "tools" / "gpu"


def load_tool():
    loader = importlib.machinery.SourceFileLoader("gpu_tool", str(TOOL))
    spec = importlib.util.spec_from_loader("gpu_tool", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


gpu = load_tool()
SUITES, GROUPS = gpu.load_table(RUNFILES / "tools" / "gpu_suites.py")

# label -> the files its default outputs are, as runfiles paths (this test's data)
BUILT = {
    "//tests/gpu_ptx:ptx_fallback": ["tests/gpu_ptx/ptx_fallback"],
    "//tests/gpu_dispatch:libcuda.so.1": ["tests/gpu_dispatch/libcuda.so.1"],
    "//tests/gpu_dispatch:variant_choice": ["tests/gpu_dispatch/variant_choice"],
}

FAKE_BAZEL = r'''
import json, os, sys
args = sys.argv[1:]
log = os.environ["FAKE_BAZEL_LOG"]
with open(log, "a") as f:
    f.write(json.dumps(args) + "\n")
built = json.loads(os.environ["FAKE_BAZEL_BUILT"])
if args[0] == "build":
    sys.exit(0)
if args[0] == "info":
    print(os.environ["FAKE_BAZEL_EXECROOT"])
    sys.exit(0)
if args[0] == "cquery":
    assert any(a.startswith("--starlark:expr=") for a in args), args
    expr = args[-1]
    for label in expr.split(" + "):
        if label not in built:
            sys.exit("fake bazel: no target " + label)
        for path in built[label]:
            print("@@" + label + "\t\t" + path)
    sys.exit(0)
sys.exit("fake bazel: " + " ".join(args))
'''


def test_table_is_well_formed():
    assert set(GROUPS) & set(SUITES) == set()
    for name, members in GROUPS.items():
        assert members and all(m in SUITES for m in members), name
    keys = {"doc", "workspace", "flags", "build", "copy", "needs", "run", "out", "budget_mib",
            "tune_flags", "archive"}
    for name, s in SUITES.items():
        assert set(s) <= keys, (name, set(s) - keys)
        assert s.get("doc"), f"{name}: no doc"
        assert s.get("copy") or s.get("needs") or s.get("run"), f"{name}: packs and runs nothing"
        for n in s.get("needs", []):
            assert n in SUITES, (name, n)
        ws = s.get("workspace", ".")
        for e in s.get("copy", []):
            kinds = [k for k in ("target", "query", "src", "wheel", "tuning") if k in e]
            assert len(kinds) == 1, (name, e)
            if "src" in e:
                # the checkout the tool packs from (examples/ is a module of its own: no runfile)
                assert list(gpu.REPO.glob(e["src"])), f"{name}: no file matches {e['src']}"
            for t in gpu.as_list(e.get("target", [])) + ([e["tuning"]] if "tuning" in e else []):
                assert t.startswith("//") and ":" in t, (name, t)
            assert e.get("workspace", ws) in (".", "examples"), (name, e)
        if "tune_flags" in s:  # checked as `pack` checks them, the config read from the checkout
            flags = gpu.suite_tune_flags(name, s, gpu.tune_flags.TuneFlags())
            assert any("tuning" in e for e in s["copy"]) and flags.argv(), name
            gpu.check_flags(flags, ("M", "N", "K"))
        for step in s.get("run", []):
            assert step["name"] and step["cmd"], name
            for arg in step["cmd"]:
                # every script a step runs from the checkout is there
                if arg.endswith((".sh", ".py")) and not arg.startswith("{") and "cwd" not in step:
                    assert (gpu.REPO / arg).is_file(), f"{name}: {arg} is missing"
        if s.get("copy") and not s.get("run") and ("run" in s or not any("tuning" in e for e in s["copy"])):
            assert any(name in o.get("needs", []) for o in SUITES.values()), f"{name}: never runs"
    # every suite's needs come before it
    assert gpu.expand(["reliability"], SUITES, GROUPS, True) == ["examples", "reliability"]
    assert gpu.expand(["tests"], SUITES, GROUPS, False) == GROUPS["tests"]
    with pytest.raises(gpu.Error):
        gpu.expand(["nosuch"], SUITES, GROUPS, True)


def test_pack_then_run_dry(tmp_path):
    built = dict(BUILT)
    # the matmul cubins (an output group of the examples' matmul, as a filegroup's files)
    cubins = os.environ["MATMUL_CUBINS"].split()
    assert cubins, "no matmul cubins among the runfiles"
    built["//tests/gpu_dispatch:matmul_cubins"] = cubins
    fake = tmp_path / "fake_bazel.py"
    fake.write_text(FAKE_BAZEL)
    log = tmp_path / "bazel.log"
    out = tmp_path / "gpu"
    env = dict(os.environ, FAKE_BAZEL_LOG=str(log), FAKE_BAZEL_BUILT=json.dumps(built),
               FAKE_BAZEL_EXECROOT=str(RUNFILES))
    r = subprocess.run([sys.executable, str(TOOL), "--gpu-dir", str(out),
                        "--bazel", f"{sys.executable} {fake}", "pack", "ptx", "dispatch",
                        "--", "--jobs=2"], env=env, text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    assert "tools/gpu run ptx dispatch" in r.stderr

    calls = [json.loads(line) for line in log.read_text().splitlines()]
    builds = [c for c in calls if c[0] == "build"]
    assert len(builds) == 1, "one Bazel build for suites of one workspace and flag set"
    assert "--jobs=2" in builds[0]
    assert set(BUILT) | {"//tests/gpu_dispatch:matmul_cubins"} <= set(builds[0])

    index = json.loads((out / "MANIFEST.json").read_text())
    assert index["format"] == "rules_triton.gpu_pack.v2"
    assert set(index["suites"]) == {"ptx", "dispatch"}
    for suite, expected in [("ptx", {"ptx_fallback"}),
                            ("dispatch", {"libcuda.so.1", "variant_choice"}
                             | {"cubins/" + Path(c).name for c in cubins})]:
        m = json.loads((out / suite / "MANIFEST.json").read_text())
        assert m["format"] == "rules_triton.gpu_suite.v1" and m["suite"] == suite
        assert set(m["files"]) == expected
        assert m["run"] == SUITES[suite]["run"]
        assert m["bazel_flags"] == ["--jobs=2"]
        for rel, f in m["files"].items():
            data = (out / suite / rel).read_bytes()
            assert f["bytes"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
            # programs and libraries keep their mode; cubins are data
            assert f.get("executable", False) == (not rel.endswith(".cubin")), rel
        assert index["suites"][suite]["files"] == len(m["files"])

    r = subprocess.run([sys.executable, str(TOOL), "--gpu-dir", str(out), "run", "ptx", "dispatch",
                        "--dry-run"], text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    assert f"RULES_TRITON_PTX_DIR={out}/ptx bash tests/gpu_ptx/run.sh" in r.stdout
    assert f"RULES_TRITON_DISPATCH_DIR={out}/dispatch bash tests/gpu_dispatch/run.sh" in r.stdout

    # a suite that was not packed: exit 2, naming the pack command
    r = subprocess.run([sys.executable, str(TOOL), "--gpu-dir", str(out), "run", "corpus"],
                       text=True, capture_output=True)
    assert r.returncode == 2 and "tools/gpu pack corpus" in r.stderr


class RewritingBazel:
    """A Bazel whose builds write the target's one output with the flags of that build, at
    the same path for every flag set (as build settings leave the output paths)."""
    user_flags: list = []

    def __init__(self, root: Path):
        self.root, self.builds = root, []

    def build(self, ws, flags, groups, targets):
        self.builds.append(flags)
        (self.root / "out.txt").write_text(" ".join(flags))

    def outputs(self, ws, flags, groups, expr):
        return [(gpu.norm_label(expr), "", "out.txt")]

    def execroot(self, ws):
        return self.root


def test_each_suite_copies_the_build_of_its_own_flags(tmp_path):
    """Suites of one workspace with other flag sets (the tuning bundles packed pruned and
    unpruned) each get the files their own flags built, not the last build's."""
    suites = {name: {"doc": name, "flags": flags, "copy": [{"target": "//k:lib"}], "run": []}
              for name, flags in (("pruned", ["--prune"]), ("full", ["--prune=false"]),
                                  ("pruned_again", ["--prune"]))}
    bazel = RewritingBazel(tmp_path / "execroot")
    bazel.root.mkdir()
    gpu.pack(list(suites), suites, {}, bazel, tmp_path / "gpu")
    for name, suite in suites.items():
        assert (tmp_path / "gpu" / name / "out.txt").read_text() == " ".join(suite["flags"]), name
    assert bazel.builds == [["--prune"], ["--prune=false"], ["--prune"]]


def test_archived_suite_travels_as_one_file_and_unpacks_before_its_run(tmp_path):
    def packed(dest):
        (dest / "bundle" / "cubins").mkdir(parents=True)
        (dest / "bundle" / "lib.so").write_bytes(b"\x7fELF" + bytes(range(256)) * 64)
        (dest / "bundle" / "cubins" / "a.cubin").write_bytes(b"cubin" * 1000)
        (dest / "bundle" / "tune.sh").write_text("echo tune\n")
        (dest / "bundle" / "tune.sh").chmod(0o755)
        return gpu.file_list(dest)

    sizes = []
    for name in ("one", "two"):
        dest = tmp_path / name / "tune"
        files = packed(dest)
        sizes.append(gpu.archive_files(dest, files))
        assert sorted(p.name for p in dest.iterdir()) == [gpu.CONTENT]
    assert (tmp_path / "one/tune" / gpu.CONTENT).read_bytes() == \
        (tmp_path / "two/tune" / gpu.CONTENT).read_bytes(), "the same files, other bytes"
    assert sizes[0] < sum(f["bytes"] for f in files.values()) / 4

    dest = tmp_path / "one" / "tune"
    gpu.unarchive_files(dest, {"files": files})
    assert gpu.file_list(dest) == {**files}
    assert os.access(dest / "bundle" / "tune.sh", os.X_OK)
    (dest / "bundle" / "lib.so").write_bytes(b"short")  # unpacked files are not unpacked again
    gpu.unarchive_files(dest, {"files": files})
    assert (dest / "bundle" / "lib.so").read_bytes() == b"short"
    (dest / "bundle" / "lib.so").unlink()
    gpu.unarchive_files(dest, {"files": files})
    assert gpu.file_list(dest) == files


def run_tool(tmp_path, *args):
    fake = tmp_path / "fake_bazel.py"
    fake.write_text(FAKE_BAZEL)
    log = tmp_path / "bazel.log"
    log.write_text("")
    env = dict(os.environ, FAKE_BAZEL_LOG=str(log), FAKE_BAZEL_BUILT=json.dumps(BUILT),
               FAKE_BAZEL_EXECROOT=str(RUNFILES))
    r = subprocess.run([sys.executable, str(TOOL), "--gpu-dir", str(tmp_path / "gpu"),
                        "--bazel", f"{sys.executable} {fake}", *args], env=env, text=True,
                       capture_output=True, cwd=gpu.REPO)  # LABELs are of the workspace of cwd
    return r, [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("flags, message", [
    (["--layers=4096"], "--layers: '4096' is not NxK (e.g. 4096x4096,1024x4096"),
    (["--model_config=nosuch.json"], "--model_config=nosuch.json: No such file or directory; "
     "give the path of the model's Hugging Face config.json"),
    (["--layers=64x64", "--batch=8:1"], "--batch='8:1': give LO:HI"),
    (["--layers=64x64", "--gpus=0"], "--gpus='0': give a number of GPUs or 'all'"),
    (["--batch_count=x"], "--batch_count='x': give an integer"),
])
def test_tune_refuses_bad_tuning_flags_before_building(tmp_path, flags, message):
    """tools/tune LABEL FLAGS (`tools/gpu tune`): one error line naming the flag, no Bazel call."""
    r, calls = run_tool(tmp_path, "tune", "//kernels:matmul_tuned", "--jobs=2", *flags)
    assert r.returncode == 1 and calls == [], (r.stderr, calls)
    assert r.stderr.startswith(f"tools/gpu: error: {message}") and r.stderr.count("\n") == 1, r.stderr


def test_tune_splits_the_tuning_flags_from_bazels(tmp_path):
    # a target with no tuning output group: built (with the Bazel flags only), then refused
    r, calls = run_tool(tmp_path, "tune", "//tests/gpu_ptx:ptx_fallback", "--layers=64x64",
                        "--jobs=2", "--batch", "1:64")
    assert r.returncode == 1 and "has no tuning output group" in r.stderr, r.stderr
    build = next(c for c in calls if c[0] == "build")
    assert "--jobs=2" in build and "//tests/gpu_ptx:ptx_fallback" in build
    assert not any(a.startswith(("--layers", "--batch")) or a == "1:64" for c in calls for a in c)
    # tuning flags only go with the tuning bundles
    r, _ = run_tool(tmp_path, "run", "tune", "--missing_only")
    assert r.returncode == 1 and "--missing_only: tuning flags go with" in r.stderr, r.stderr
