"""tools/bazel survives a checkout deleted and cloned again at the same path.

tools/bazel binds the checkout into the rootfs inside a persistent mount namespace. Reproduced
here with a real namespace (needs root, unshare, nsenter): bind a checkout, delete it, create
it again at the same path with new content, bind again. The old logic (bind only when the path
is not mounted yet) keeps the deleted tree, where `cd .../examples` fails as reported;
tools/rootfs_mounts.sh's bind_into_rootfs must show the new checkout.
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
MOUNTS_SH = REPO_ROOT / "tools" / "rootfs_mounts.sh"

# tools/bazel's binding step before the fix: the control of this scenario.
OLD_BIND = '''
if ! grep -q " $2$3 " "/proc/$1/mountinfo"; then
  nsenter --target "$1" --mount bash -c 'mkdir -p "$1$2" && mount --bind "$2" "$1$2"' _ "$2" "$3"
fi
'''


def _usable() -> bool:
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "nsenter", "mount")):
        return False
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _usable(), reason="needs root, unshare and nsenter")


@pytest.fixture
def holder():
    """A process holding a private mount namespace, like tools/bazel's `sleep infinity`."""
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sleep", "600"])
    own = os.readlink("/proc/self/ns/mnt")
    for _ in range(200):
        try:
            if os.readlink(f"/proc/{proc.pid}/ns/mnt") != own:
                break
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    else:
        proc.kill()
        pytest.fail("the holder never entered its own mount namespace")
    yield proc.pid
    proc.kill()
    proc.wait()


def _clone(checkout: Path, content: str) -> None:
    (checkout / "examples").mkdir(parents=True)
    (checkout / "examples" / "marker").write_text(content)


def _read_in_ns(pid: int, path: str) -> subprocess.CompletedProcess:
    # What tools/bazel's chroot'ed shell does first: cd into the caller's folder.
    return subprocess.run(["nsenter", "--target", str(pid), "--mount", "sh", "-c",
                           'cd "$1" && cat marker', "_", path], capture_output=True, text=True)


def _bind(script: str, *args: str) -> None:
    subprocess.run(["bash", "-c", script, "_", *args], check=True, capture_output=True)


def test_rebinds_after_delete_and_reclone(tmp_path, holder):
    rootfs, checkout = tmp_path / "rootfs", tmp_path / "checkout"
    rootfs.mkdir()
    examples_in_ns = f"{rootfs}{checkout}/examples"
    new_bind = f'source "{MOUNTS_SH}"; bind_into_rootfs "$1" "$2" "$3"'

    _clone(checkout, "first clone")
    _bind(new_bind, str(holder), str(rootfs), str(checkout))
    assert _read_in_ns(holder, examples_in_ns).stdout == "first clone"

    shutil.rmtree(checkout)
    _clone(checkout, "second clone")

    # Control: the old step leaves the deleted tree bound, and cd fails as reported.
    _bind(OLD_BIND, str(holder), str(rootfs), str(checkout))
    stale = _read_in_ns(holder, examples_in_ns)
    assert stale.returncode != 0 and "can't cd" in stale.stderr, stale

    _bind(new_bind, str(holder), str(rootfs), str(checkout))
    fresh = _read_in_ns(holder, examples_in_ns)
    assert (fresh.returncode, fresh.stdout) == (0, "second clone"), fresh

    # And a current binding is reused, not stacked again.
    _bind(new_bind, str(holder), str(rootfs), str(checkout))
    mounts = subprocess.run(["nsenter", "--target", str(holder), "--mount", "cat",
                             "/proc/self/mountinfo"], capture_output=True, text=True).stdout
    assert sum(f" {rootfs}{checkout} " in line for line in mounts.splitlines()) == 1
