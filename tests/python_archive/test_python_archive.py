"""Archive mode (--@rules_triton//:python_mode=archive): the packer and the launcher.

- rules/private/repositories/pack_python_env.py, run as the repository rule runs it
  (`python3 -I`), here on a small closure (absl-py; the real one adds triton's 550 MB): two runs
  give the same bytes, the members are lean and normalised, and the archive runs from another
  path with nothing of the original prefix on sys.path.
- rules/private/repositories/python_launcher.sh, with a fake archive: concurrent first runs unpack
  once and never expose a half-unpacked folder; an unusable cache folder falls back to a private
  copy that is removed afterwards; a broken archive fails with one `error:` line and leaves
  nothing behind.
"""

import concurrent.futures
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from importlib.metadata import version as _version
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKER = REPO_ROOT / "rules" / "private" / "repositories" / "pack_python_env.py"
LAUNCHER = REPO_ROOT / "rules" / "private" / "repositories" / "python_launcher.sh"


def _pack(out_dir: Path, *extra, check=True) -> tuple[bytes, dict]:
    # --package: what triton.python_env(archive_packages = [...]) passes (iniconfig: small, in the venv).
    out_dir.mkdir()
    result = subprocess.run(
        [sys.executable, "-I", str(PACKER), "--roots=absl-py", "--package=iniconfig", "--torch=no", *extra,
         "--out", str(out_dir / "python_env.tar.gz"),
         "--manifest", str(out_dir / "manifest.json"), "--scratch", str(out_dir / "scratch")],
        check=check, capture_output=not check, text=True, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"},
        timeout=600)
    if not check:
        return result
    return (out_dir / "python_env.tar.gz").read_bytes(), json.loads((out_dir / "manifest.json").read_text())


def test_pack_names_a_missing_package(tmp_path):
    result = _pack(tmp_path / "x", "--package=no-such-dist", check=False)
    assert result.returncode != 0
    assert "error: the Python environment has no package 'no-such-dist'" in result.stderr


def test_pack_takes_a_debian_package_from_its_dpkg_list(tmp_path):
    # Debian's python3-* packages install no RECORD (so do torch and numpy in the set-up): the
    # files come from dpkg's list of the package that owns the .dist-info folder.
    from importlib import metadata
    try:
        dist = metadata.distribution("idna")
    except metadata.PackageNotFoundError:
        pytest.skip("no idna in this environment")
    if dist.files is not None:
        pytest.skip("this environment's idna has a RECORD")
    data, manifest = _pack(tmp_path / "a", "--package=idna")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
    assert "idna==%s" % dist.version in manifest["distributions"]
    assert "site-packages/idna/core.py" in names
    assert "site-packages/idna-%s.dist-info/METADATA" % dist.version in names


def _launcher(folder: Path, sha256: str, archive_name="python_env.tar.gz") -> Path:
    text = LAUNCHER.read_text().replace("@SHA256@", sha256).replace("@ARCHIVE@", archive_name)
    path = folder / "launcher.sh"
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_pack_is_deterministic_lean_and_relocatable(tmp_path):
    first, manifest = _pack(tmp_path / "a")
    second, _ = _pack(tmp_path / "b")
    assert first == second, "two packs of one environment differ"
    assert manifest["sha256"] == hashlib.sha256(first).hexdigest()
    assert gzip.decompress(first)  # a plain gzip stream
    assert first[4:8] == b"\0\0\0\0", "gzip header carries a time stamp"

    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert {m.mtime for m in members} == {315532800}
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert "bin/python3" in names
    assert any(n.startswith("site-packages/absl/") for n in names)
    assert any(n.startswith("site-packages/iniconfig/") for n in names)
    assert not any(n.startswith("site-packages/triton/") for n in names)
    assert manifest["distributions"] == ["absl-py==%s" % _version("absl-py"), "iniconfig==%s" % _version("iniconfig")]
    for n in names:
        parts = n.split("/")
        assert "test" not in parts and "tests" not in parts and "idlelib" not in parts, n
        assert not n.endswith(".a"), n
        if n.endswith(".pyc"):
            assert n.replace("/__pycache__", "").rsplit(".", 2)[0] + ".py" in names, n

    # Run it from a folder the original prefix has nothing to do with.
    archive_dir = tmp_path / "elsewhere" / "repo"
    archive_dir.mkdir(parents=True)
    (archive_dir / "python_env.tar.gz").write_bytes(first)
    launcher = _launcher(archive_dir, manifest["sha256"])
    cache = tmp_path / "cache"
    probe = ("import sys, json, absl.flags, hashlib, ctypes, decimal, zlib; "
             "print(json.dumps({'prefix': sys.prefix, 'path': sys.path, 'absl': absl.flags.__file__}))")
    out = subprocess.run([str(launcher), "-B", "-s", "-c", probe], check=True, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "RULES_TRITON_PYTHON_CACHE": str(cache)}, timeout=120)
    info = json.loads(out.stdout)
    env = str(cache / manifest["sha256"])
    assert info["prefix"] == env
    assert info["absl"].startswith(env + "/site-packages/")
    assert all(p == "" or p.startswith(env) for p in info["path"]), info["path"]


def _fake_archive(folder: Path) -> tuple[Path, str]:
    """An archive whose bin/python3 is a shell script reporting what it was run with."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        script = b'#!/bin/sh\necho "$PYTHONHOME|$PYTHONPATH|$*"\n'
        for name, data, mode in [("bin/python3", script, 0o755), ("lib/libx.so.1", b"x" * 4096, 0o644)]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        # Bulk, so that unpacking takes a moment and the first runs overlap.
        for i in range(300):
            data = os.urandom(2048)
            info = tarfile.TarInfo("site-packages/bulk/%03d.bin" % i)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "python_env.tar.gz"
    path.write_bytes(buf.getvalue())
    return path, hashlib.sha256(buf.getvalue()).hexdigest()


def test_launcher_unpacks_once_under_concurrency(tmp_path):
    _, sha = _fake_archive(tmp_path / "in")
    launcher = _launcher(tmp_path / "in", sha)
    cache = tmp_path / "cache"
    env = {"PATH": "/usr/bin:/bin", "RULES_TRITON_PYTHON_CACHE": str(cache)}

    def run(i):
        return subprocess.run([str(launcher), "-m", "x", str(i)], capture_output=True, text=True, env=env, timeout=120)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, range(8)))
    for i, r in enumerate(results):
        assert r.returncode == 0, r.stderr
        home, path, args = r.stdout.strip().split("|")
        assert home == str(cache / sha)
        assert path == str(cache / sha / "site-packages")
        assert args == "-m x %d" % i
    assert sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock")) == [sha]
    assert len(list((cache / sha / "site-packages" / "bulk").iterdir())) == 300


def test_launcher_falls_back_to_a_private_copy(tmp_path):
    _, sha = _fake_archive(tmp_path / "in")
    launcher = _launcher(tmp_path / "in", sha)
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    r = subprocess.run([str(launcher), "ok"], capture_output=True, text=True, timeout=120, env={
        "PATH": "/usr/bin:/bin", "RULES_TRITON_PYTHON_CACHE": str(blocker / "cache"), "TMPDIR": str(scratch)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("|ok")
    assert r.stdout.startswith(str(scratch) + "/rules_triton_python.")
    assert list(scratch.iterdir()) == [], "the private copy was not removed"


def test_launcher_reports_a_broken_archive(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "python_env.tar.gz").write_bytes(b"not a gzip stream")
    launcher = _launcher(folder, "0" * 64)
    cache = tmp_path / "cache"
    r = subprocess.run([str(launcher), "x"], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "RULES_TRITON_PYTHON_CACHE": str(cache)})
    assert r.returncode != 0
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot unpack" in errors[0], r.stderr
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".lock")] == []
