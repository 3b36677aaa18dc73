"""The compile tool's outputs are written next to their target even when the working directory's
path names another mount (the "Invalid cross-device link" seen on a remote worker running two
jobs in one fixed workspace).

The scenario, reproduced in a private mount namespace (needs root and util-linux's unshare):
the process's working directory is the workspace /ws (a bind mount of job A's input root), then
job B's input root is mounted over /ws. The process keeps A as its working directory, so
relative paths still reach A, while the absolute path "/ws/..." now reaches B.
"""

import errno
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

from triton_aot.core.atomic_write import write_atomic  # noqa: E402

# The implementation compile.py had before the fix, kept here as the scenario's control: it
# must fail with EXDEV, or the scenario does not reproduce the fault and proves nothing.
_OLD = textwrap.dedent('''
    def old_write_atomic(path, data):
        import tempfile
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
''')

_CHILD = textwrap.dedent('''
    import errno, json, os, subprocess, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from triton_aot.core.atomic_write import write_atomic
    exec(sys.argv[3])
    base = Path(sys.argv[1])
    ws = base / "ws"
    subprocess.run(["mount", "--bind", str(base / "A"), str(ws)], check=True)
    os.chdir(ws)  # job A's process: its working directory is A's mount
    subprocess.run(["mount", "--bind", str(base / "B"), str(ws)], check=True)  # job B arrives
    result = {}
    for name, fn in (("old", old_write_atomic), ("new", write_atomic)):
        try:
            fn(f"out/{name}.json", b"payload")
            result[name] = "ok"
        except OSError as e:
            result[name] = errno.errorcode.get(e.errno, str(e.errno))
    print(json.dumps(result))
''')


def _can_unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("mount"):
        return False
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                          capture_output=True).returncode == 0


def test_write_atomic_replaces_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "x.json"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.json"]
    assert target.stat().st_mode & 0o777 == 0o644


def test_write_atomic_failure_keeps_old_file(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    write_atomic(target, b"old")

    def boom(*args, **kwargs):
        raise OSError(errno.EIO, "simulated rename failure")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"], "temporary file left behind"


@pytest.mark.skipif(not _can_unshare(), reason="needs root and a mount namespace (unshare --mount)")
def test_no_cross_device_rename_when_workspace_is_remounted(tmp_path):
    for d in ("A/out", "B/out", "ws"):
        (tmp_path / d).mkdir(parents=True)
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", _CHILD,
         str(tmp_path), str(REPO_ROOT), _OLD],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    import json
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # Control: the old code reproduces the reported fault (EXDEV) in this scenario.
    assert result["old"] == "EXDEV", result
    # The fix: the file lands in the job's own directory, no temporary anywhere.
    assert result["new"] == "ok", result
    assert (tmp_path / "A/out/new.json").read_bytes() == b"payload"
    assert not (tmp_path / "B/out/new.json").exists()
    leftovers = [p.name for d in ("A/out", "B/out") for p in (tmp_path / d).iterdir()
                 if p.name.endswith(".tmp")]
    assert leftovers == [], leftovers
