"""The persistent worker sees exactly a request's declared inputs, as a sandboxed one-shot action.

Bazel starts a (non-sandboxed) worker in the execroot, where every source file of the repository
lies, and sends each WorkRequest its `inputs` (path, digest): the action's declared files, the
tool's own included. A sandboxed one-shot action runs in a tree of exactly those files. This test
builds both as Bazel does: a fake execroot holding the tool (PYTHONPATH=".", as the rules set
it) and every file of tests/worker/hermetic, and for the one-shot side a sandbox of symlinks to
the declared inputs only. Kernel and launcher files there import a module that lies next to them
but that no target declares:

- scale_optional.py falls back to SCALE = 2.0 without `undeclared_scale` (whose SCALE is 5.0):
  the worker's record, cubin and PTX are the one-shot's bytes, and the undeclared module,
  once declared, does change them (so the test can tell);
- needs_helper.py imports `undeclared_helper`, which raises at import: the worker refuses the
  request with the one-shot's error, naming the missing `deps`, not the undeclared file;
- the capture tool's launch_optional.py launches with BLOCK=128 without `undeclared_block`
  (256): the worker's capture is the one-shot's bytes.

The compiles run through the worker as shipped (forked children) and with
RULES_TRITON_WORKER_ONE_SHOT=1 (each request a process of its own that the worker starts, as on
platforms without fork).
"""

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import triton_aot

HERE = Path(__file__).resolve().parent
REPO = Path(triton_aot.__file__).resolve().parent.parent
HERMETIC = "tests/worker/hermetic"
BIN = "bazel-out/k8-fastbuild/bin/tests/worker/_triton"
COMPILE_OUTS = ["json", "cubin", "ptx"]
CAPTURE_OUTS = ["out_record", "out_bzl", "out_build"]


def tool_files() -> list:
    """The tool's files as the actions declare them (tools of every request)."""
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "triton_aot").rglob("*.py"))


def make_execroot(root: Path) -> Path:
    """An execroot as Bazel lays it out: the whole source tree is there (here: the tool and every
    file of tests/worker/hermetic, declared or not)."""
    execroot = root / "execroot" / "_main"
    for rel in tool_files():
        link(execroot / rel, REPO / rel)
    for f in (HERE / "hermetic").iterdir():
        if f.suffix == ".py":
            link(execroot / HERMETIC / f.name, f)
    return execroot


def link(path: Path, target: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


def env(**extra) -> dict:
    e = dict(os.environ)
    e.update(extra)
    # the rules' action environment: the tool's root is the execroot, relative to the cwd
    e["PYTHONPATH"] = os.pathsep.join(["."] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    e.update(PYTHONHASHSEED="0", PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1",
             PYTHONUTF8="1", LC_ALL="C.UTF-8")
    return e


class Action:
    """One action: its flags (in a param file, as the rules pass them), declared inputs and
    outputs, all execroot-relative."""

    def __init__(self, execroot: Path, name: str, flags: list, srcs: list, outputs: list):
        self.execroot, self.outputs = execroot, outputs
        self.params = f"{BIN}/{name}/{name}.params"
        path = execroot / self.params
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(flags) + "\n")
        self.inputs = srcs + tool_files() + [self.params]
        for out in outputs:  # Bazel creates the outputs' folders before the action runs
            (execroot / out).parent.mkdir(parents=True, exist_ok=True)

    def request(self, request_id: int) -> dict:
        inputs = [{"path": p, "digest": hashlib.sha256(
            (self.execroot / p).read_bytes()).hexdigest()} for p in self.inputs]
        return {"arguments": [f"--flagfile={self.params}"], "inputs": inputs,
                "requestId": request_id}

    def written(self, root: Path) -> dict:
        return {out: (root / out).read_bytes() for out in self.outputs}

    def one_shot(self, module: str, sandbox: Path) -> subprocess.CompletedProcess:
        """The action run as Bazel's sandbox runs it: in a tree of its declared inputs only."""
        for p in self.inputs:
            link(sandbox / p, self.execroot / p)
        for out in self.outputs:
            (sandbox / out).parent.mkdir(parents=True, exist_ok=True)
        return subprocess.run([sys.executable, "-B", "-s", "-m", module,
                               f"--flagfile={self.params}"], cwd=sandbox, capture_output=True,
                              text=True, env=env())


class Worker:

    def __init__(self, module: str, execroot: Path, **extra_env):
        self.proc = subprocess.Popen(
            [sys.executable, "-B", "-s", "-m", module, "--persistent_worker"], cwd=execroot,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env(**extra_env))
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.next_id = 1

    def run(self, action: Action) -> dict:
        self.proc.stdin.write((json.dumps(action.request(self.next_id)) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, b"".join(self.stderr).decode()
        self.next_id += 1
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=120) == 0, b"".join(self.stderr).decode()


def compile_action(execroot: Path, name: str, kernel: str, kernel_name: str, srcs: list) -> Action:
    outputs = [f"{BIN}/{name}/{name}.{n}" for n in COMPILE_OUTS]
    flags = [f"--kernel_path={HERMETIC}/{kernel}", "--import_path=.",
             f"--bazel_target=//tests/worker:{name}", f"--kernel_name={kernel_name}",
             "--signature=*fp32, *fp32, i32, 128", "--hints=n:16 out_ptr:16 x_ptr:16",
             "--grid=cdiv(n, 128), 1, 1", "--num_warps=4", "--num_stages=3", "--target=cuda:90",
             f"--symbol={name}"] + [f"--out_{n}={out}" for n, out in zip(COMPILE_OUTS, outputs)]
    return Action(execroot, name, flags, [f"{HERMETIC}/{s}" for s in srcs], outputs)


@pytest.mark.parametrize("one_shot", ["0", "1"], ids=["forked", "one_shot"])
def test_a_compile_sees_only_its_declared_inputs(tmp_path, one_shot):
    execroot = make_execroot(tmp_path / "worker")
    scale = compile_action(execroot, "scale_optional", "scale_optional.py",
                           "scale_optional_kernel", ["scale_optional.py"])
    refused = compile_action(execroot, "needs_helper", "needs_helper.py", "add_offset_kernel",
                             ["needs_helper.py"])
    # the same kernel with the optional module declared (another target, another key)
    declared = compile_action(execroot, "scale_declared", "scale_optional.py",
                              "scale_optional_kernel",
                              ["scale_optional.py", "undeclared_scale.py"])
    w = Worker("triton_aot.compile.compile", execroot, RULES_TRITON_WORKER_ONE_SHOT=one_shot)
    try:
        r_scale, r_refused, r_declared = w.run(scale), w.run(refused), w.run(declared)
    finally:
        w.close()
    one_scale = scale.one_shot("triton_aot.compile.compile", tmp_path / "sandbox_scale")
    one_refused = refused.one_shot("triton_aot.compile.compile", tmp_path / "sandbox_refused")
    one_declared = declared.one_shot("triton_aot.compile.compile",
                                     tmp_path / "sandbox_declared")

    assert one_scale.returncode == 0, one_scale.stderr
    assert r_scale["exitCode"] == 0 and r_scale["output"] == "", r_scale["output"]
    assert scale.written(execroot) == scale.written(tmp_path / "sandbox_scale"), \
        "the worker compiled with the undeclared module's constexpr"

    assert one_declared.returncode == 0 and r_declared["exitCode"] == 0, r_declared["output"]
    assert declared.written(execroot) == declared.written(tmp_path / "sandbox_declared")
    # the undeclared module changes the bytes once declared: the comparison above can tell
    assert [b for o, b in declared.written(execroot).items() if o.endswith(".cubin")] != \
        [b for o, b in scale.written(execroot).items() if o.endswith(".cubin")]

    assert one_refused.returncode == 1
    assert "attribute 'deps'" in one_refused.stderr, one_refused.stderr
    assert "No module named 'undeclared_helper'" in one_refused.stderr, one_refused.stderr
    assert r_refused["exitCode"] == 1
    assert r_refused["output"] == one_refused.stderr


def test_a_capture_sees_only_its_declared_inputs(tmp_path):
    execroot = make_execroot(tmp_path / "worker")
    name = "launch_optional"
    outputs = [f"{BIN}/{name}/{o}" for o in CAPTURE_OUTS]
    launcher = f"{HERMETIC}/launch_optional.py"
    flags = [f"--target=//tests/worker:{name}", f"--launcher_path={launcher}",
             "--launcher=triple", f"--src={launcher}", "--package=tests/worker",
             "--print_src=hermetic/launch_optional.py", "--import_path=.", "--call=fp32(n)",
             '--sizes={"n": 4096}', "--gpu_target=cuda:90", "--name=triple",
             "--targets=cuda:90"] + [f"--{o}={out}" for o, out in zip(CAPTURE_OUTS, outputs)]
    capture = Action(execroot, name, flags, [launcher], outputs)
    w = Worker("triton_aot.capture.tool", execroot)
    try:
        response = w.run(capture)
    finally:
        w.close()
    one_shot = capture.one_shot("triton_aot.capture.tool", tmp_path / "sandbox")
    assert one_shot.returncode == 0, one_shot.stderr
    assert response["exitCode"] == 0, response["output"]
    sandboxed = capture.written(tmp_path / "sandbox")
    assert b'"BLOCK": 128' in sandboxed[outputs[1]], sandboxed[outputs[1]].decode()
    assert capture.written(execroot) == sandboxed, \
        "the worker captured with the undeclared module's BLOCK"


def test_a_child_tree_follows_each_request(tmp_path):
    """A keyed child keeps its tree between requests: each request sees its own inputs and
    output folders only, not what an earlier request declared or wrote."""
    from triton_aot.compile.worker import _PrivateTree

    execroot = tmp_path / "execroot" / "_main"
    for rel in ["pkg/kernel.py", "pkg/mod.py", "other/data.txt"]:
        (execroot / rel).parent.mkdir(parents=True, exist_ok=True)
        (execroot / rel).write_text(rel)
    (execroot / "bazel-out" / "a").mkdir(parents=True)
    (execroot / "bazel-out" / "b").mkdir(parents=True)
    tree = _PrivateTree(str(tmp_path / "scratch"), str(execroot))
    seen = []

    def handle(out):
        def run(_):
            seen.append(sorted(str(p.relative_to(Path.cwd())) for p in Path.cwd().rglob("*")))
            assert sys.path[0] == tree.root or not sys.path[0].startswith(str(execroot))
            Path(out).write_text("written")
            Path("stray.txt").write_text("a file the request wrote, not an output")
            return 0
        return run

    assert tree.run(handle("bazel-out/a/x.json"), [], ["pkg/kernel.py", "pkg/mod.py"],
                    ["bazel-out/a/x.json"]) == (0, "")
    assert tree.run(handle("bazel-out/b/y.json"), [], ["pkg/kernel.py", "other/data.txt"],
                    ["bazel-out/b/y.json"]) == (0, "")
    assert seen == [["bazel-out", "bazel-out/a", "pkg", "pkg/kernel.py", "pkg/mod.py"],
                    ["bazel-out", "bazel-out/b", "other", "other/data.txt", "pkg",
                     "pkg/kernel.py"]]
    assert (execroot / "bazel-out/a/x.json").read_text() == "written"
    assert (execroot / "bazel-out/b/y.json").read_text() == "written"
    assert not (execroot / "stray.txt").exists()
    # nothing left behind but the last request's (empty) output folder, for the next one
    assert sorted(str(p.relative_to(tree.root)) for p in Path(tree.root).rglob("*")) == \
        ["bazel-out", "bazel-out/b", "other", "other/data.txt", "pkg", "pkg/kernel.py"]
