"""Hermeticity of the compile and link actions, at the tool level, inside the Bazel sandbox.

The tools run as the TritonCompile/TritonLink actions run them (`python -B -s -m ...` with the
rule's fixed environment: no HOME, no PATH, PYTHONDONTWRITEBYTECODE...), from a fresh empty
working folder, with TMPDIR pointing at a watched folder, and once more with HOME set to a
read-only folder. Every place they could write to is snapshotted before and after: the working
folder, HOME, TMPDIR, the kernel's folder (no __pycache__!), the triton_aot and triton package
folders and the templates. Only the declared outputs may appear, and TMPDIR must be empty again.

When the sandbox lets us create namespaces (`unshare`), the tool also runs with no network at
all (a fresh network namespace) and with HOME and the kernel folder mounted read-only, so that a
write would fail instead of only being noticed. Where `unshare` is refused the test says so
(skip), and the snapshot checks still run.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import triton_aot

HERE = Path(__file__).resolve().parent
REPO = Path(triton_aot.__file__).resolve().parent.parent
KERNEL = HERE / "kernels" / "kernels.py"

# What kernel_library.bzl passes (rules/private/rules/kernel_library.bzl: _ACTION_ENV).
ACTION_ENV = {"PYTHONHASHSEED": "0", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
              "PYTHONUTF8": "1", "LC_ALL": "C.UTF-8"}
COMPILE_FLAGS = ["--kernel_name=copy_kernel", "--signature=*fp32:16, *fp32:16, i32, BLOCK",
                 "--constexprs=BLOCK=64", "--grid=cdiv(n, 64)", "--num_warps=4",
                 "--num_stages=3", "--target=cuda:80", "--symbol=copy_a0_s0_sm80",
                 "--algo_index=0"]
OUTPUTS = ["c", "h", "json", "ptx", "ttir", "ttgir", "llir", "cubin"]


def _package_dir(name: str) -> Path:
    import importlib.util
    spec = importlib.util.find_spec(name)
    return Path(list(spec.submodule_search_locations)[0])


def snapshot(root: Path) -> dict:
    """path -> (kind, size, mtime_ns) for everything under root (not following links)."""
    out = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except FileNotFoundError:
                continue
            kind = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f"
            out[str(p.relative_to(root))] = (kind, 0 if kind == "d" else st.st_size,
                                             0 if kind == "d" else st.st_mtime_ns)
    return out


def diff(before: dict, after: dict) -> list:
    changes = [f"+ {p}" for p in sorted(set(after) - set(before))]
    changes += [f"- {p}" for p in sorted(set(before) - set(after))]
    changes += [f"~ {p}" for p in sorted(set(before) & set(after)) if before[p] != after[p]]
    return changes


class Sandbox:
    """A fresh kernel folder, working folder, HOME, TMPDIR and output folder."""

    def __init__(self, tmp: Path):
        self.src = tmp / "src"
        self.cwd = tmp / "cwd"
        self.home = tmp / "home"
        self.tmpdir = tmp / "tmpdir"
        self.out = tmp / "out"
        for d in (self.src, self.cwd, self.home, self.tmpdir, self.out):
            d.mkdir()
        shutil.copy(KERNEL, self.src / "kernels.py")
        (self.home / ".keep").write_text("")
        # a private copy of the tool, so that nobody else's __pycache__ lands in what we watch
        self.pkg = tmp / "pkg"
        for name in ("triton_aot", "templates"):
            shutil.copytree(REPO / name, self.pkg / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.watched = {"working folder": self.cwd, "HOME": self.home, "TMPDIR": self.tmpdir,
                        "kernel folder": self.src, "tool (triton_aot, templates)": self.pkg,
                        "triton package": _package_dir("triton")}

    def env(self, home: str | None) -> dict:
        env = dict(ACTION_ENV, PYTHONPATH=str(self.pkg), TMPDIR=str(self.tmpdir))
        if home is not None:
            env["HOME"] = home
        return env

    def compile_argv(self) -> list:
        return ([sys.executable, "-B", "-s", "-m", "triton_aot.compile.compile",
                 f"--kernel_path={self.src / 'kernels.py'}", *COMPILE_FLAGS]
                + [f"--out_{o}={self.out / ('v.' + o)}" for o in OUTPUTS])


def _run_and_check(box: Sandbox, argv: list, env: dict, expected_outputs: set) -> None:
    before = {name: snapshot(path) for name, path in box.watched.items()}
    proc = subprocess.run(argv, cwd=box.cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    for name, path in box.watched.items():
        changes = diff(before[name], snapshot(path))
        assert not changes, f"the tool changed the {name} ({path}): {changes[:20]}"
    assert sorted(os.listdir(box.tmpdir)) == [], "left files in TMPDIR"
    assert set(os.listdir(box.out)) == expected_outputs, "outputs other than the declared ones"


def test_compile_without_home(tmp_path):
    """As Bazel runs the action: no HOME in the environment at all."""
    box = Sandbox(tmp_path)
    _run_and_check(box, box.compile_argv(), box.env(home=None),
                   {f"v.{o}" for o in OUTPUTS})


def test_compile_with_read_only_home(tmp_path):
    box = Sandbox(tmp_path)
    box.home.chmod(0o555)
    try:
        _run_and_check(box, box.compile_argv(), box.env(home=str(box.home)),
                       {f"v.{o}" for o in OUTPUTS})
    finally:
        box.home.chmod(0o755)


def test_link_writes_only_its_outputs(tmp_path):
    box = Sandbox(tmp_path)
    env = box.env(home=None)
    subprocess.run(box.compile_argv(), cwd=box.cwd, env=env, check=True, capture_output=True)
    meta = box.out / "v.json"
    argv = [sys.executable, "-B", "-s", "-m", "triton_aot.emit_c.link", "--name=copy",
            f"--out_c={box.out / 'copy_dispatch.c'}", f"--out_h={box.out / 'copy.h'}", str(meta)]
    _run_and_check(box, argv, env, {f"v.{o}" for o in OUTPUTS} | {"copy_dispatch.c", "copy.h"})


def test_autotune_configs_writes_only_its_output(tmp_path):
    """The TritonAutotuneConfigs action (triton_autotune_algos): imports the kernel file and
    writes the .bzl, nothing else, with no HOME; twice the same bytes."""
    box = Sandbox(tmp_path)
    outs = []
    for name in ("a.bzl", "b.bzl"):
        argv = [sys.executable, "-B", "-s", "-m", "triton_aot.compile.autotune_configs",
                f"--kernel_path={box.src / 'kernels.py'}", "--kernels=tuned_copy_kernel",
                "--bzl_name=algos.bzl", f"--out={box.out / name}"]
        _run_and_check(box, argv, box.env(home=None), set(outs) | {name})
        outs.append(name)
    assert (box.out / "a.bzl").read_bytes() == (box.out / "b.bzl").read_bytes()


def _unshare_args() -> tuple[list | None, str]:
    """The `unshare` command that gives a private network and mount namespace here, or None and
    why not. In a chroot (Bazel under tools/bazel) the root is no mount point, so the private
    propagation cannot be set; `unchanged` is then used, but only when no mount is shared (so
    that our bind mounts cannot propagate back out)."""
    if not shutil.which("unshare"):
        return None, "no unshare binary in this sandbox"
    errors = []
    for propagation in ("private", "unchanged"):
        if propagation == "unchanged":
            mountinfo = Path("/proc/self/mountinfo")
            if not mountinfo.is_file() or "shared:" in mountinfo.read_text():
                break
        args = ["unshare", "--net", "--mount", "--propagation", propagation]
        p = subprocess.run(args + ["true"], capture_output=True, text=True)
        if p.returncode == 0:
            return args, ""
        errors.append(p.stderr.strip())
    return None, "unshare --net --mount is not permitted here: " + "; ".join(errors)


def test_compile_with_no_network_and_read_only_mounts(tmp_path):
    """No network namespace access, HOME and the kernel folder read-only bind mounts (a write
    there fails with EROFS even for root)."""
    unshare, why = _unshare_args()
    if unshare is None:
        pytest.skip(why)
    box = Sandbox(tmp_path)
    script = (
        'set -e\n'
        'mount --bind "$HOME_DIR" "$HOME_DIR" && mount -o remount,bind,ro "$HOME_DIR"\n'
        'mount --bind "$SRC_DIR" "$SRC_DIR" && mount -o remount,bind,ro "$SRC_DIR"\n'
        # prove the mounts are read-only and that there is no network before running the tool
        'if touch "$HOME_DIR/probe" 2>/dev/null; then echo "HOME is writable"; exit 3; fi\n'
        '"$PYTHON" -c "import socket,sys\n'
        'try:\n'
        '    socket.create_connection((\'1.1.1.1\', 53), timeout=2)\n'
        'except OSError:\n'
        '    sys.exit(0)\n'
        'sys.exit(4)"\n'
        'exec "$@"\n')
    env = box.env(home=str(box.home))
    env.update(HOME_DIR=str(box.home), SRC_DIR=str(box.src), PYTHON=sys.executable,
               PATH=os.environ.get("PATH", "/usr/bin:/bin"))
    argv = [*unshare, "sh", "-c", script, "sh", *box.compile_argv()]
    before = {name: snapshot(path) for name, path in box.watched.items()}
    proc = subprocess.run(argv, cwd=box.cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stdout}{proc.stderr}"
    for name, path in box.watched.items():
        assert not diff(before[name], snapshot(path)), name
    assert set(os.listdir(box.out)) == {f"v.{o}" for o in OUTPUTS}
    assert os.listdir(box.tmpdir) == []


def test_link_output_does_not_depend_on_paths(tmp_path):
    """The compile tool's bytes across checkout paths are tested in //tests/compile
    (test_deterministic_across_paths_caches_and_arg_files); this is the link tool's share: the
    same variant metadata at two different paths links into byte-identical dispatchers."""
    (tmp_path / "compile").mkdir()
    box = Sandbox(tmp_path / "compile")
    env = box.env(home=None)
    subprocess.run(box.compile_argv(), cwd=box.cwd, env=env, check=True, capture_output=True)
    outputs = []
    for sub in ("a", "b/much/deeper/elsewhere"):
        d = tmp_path / sub
        d.mkdir(parents=True)
        shutil.copy(box.out / "v.json", d / "copy_a0_s0_sm80.json")
        shutil.copy(box.out / "v.cubin", d / "v.cubin")  # the image the record names
        subprocess.run([sys.executable, "-B", "-s", "-m", "triton_aot.emit_c.link", "--name=copy",
                        f"--out_c={d / 'copy_dispatch.c'}", f"--out_h={d / 'copy.h'}",
                        str(d / "copy_a0_s0_sm80.json")], cwd=d, env=env, check=True)
        outputs.append(((d / "copy_dispatch.c").read_bytes(), (d / "copy.h").read_bytes()))
        assert str(tmp_path).encode() not in outputs[-1][0] + outputs[-1][1], "absolute path"
    assert outputs[0] == outputs[1]
