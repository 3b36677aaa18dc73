"""Prints the Starlark files of a checkout that git tracks, one per line (for buildifier_test.sh).

    python3 tools/tracked_starlark.py ROOT

Only tracked files are the project's: a user's scratch workspace or an editor's backup inside
the checkout is not, and must not fail the project's own lint test. `git ls-files` answers where
git is installed; where it is not (tools/bazel runs tests in a rootfs without git), the index
file is read directly (formats 2 to 4). A tree that is no git checkout (a release archive) has
no untracked files, so everything but hidden folders, bazel-* links and the folders
.bazelignore names is linted there.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

_NAMES = ("BUILD", "BUILD.bazel", "MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel")


def is_starlark(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in _NAMES or name.endswith(".bzl")


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a worktree or submodule: "gitdir: PATH"
        text = dot_git.read_text().strip()
        if text.startswith("gitdir:"):
            path = Path(text[len("gitdir:"):].strip())
            return path if path.is_absolute() else root / path
    return None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset encoding (index format 4's prefix lengths)."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def index_paths(index: Path) -> list[str]:
    """The paths in a git index file (https://git-scm.com/docs/index-format)."""
    data = index.read_bytes()
    signature, version, count = struct.unpack(">4sII", data[:12])
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise ValueError(f"{index}: not a git index of format 2 to 4")
    paths, pos, previous = [], 12, b""
    for _ in range(count):
        start = pos
        flags = struct.unpack(">H", data[pos + 60:pos + 62])[0]
        pos += 62
        if version >= 3 and flags & 0x4000:  # extended flags
            pos += 2
        if version == 4:
            strip, pos = _varint(data, pos)
            end = data.index(b"\0", pos)
            name = previous[:len(previous) - strip] + data[pos:end]
            pos = end + 1
        else:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            pos = start + ((end - start) // 8 + 1) * 8  # NUL-padded to a multiple of 8
        previous = name
        paths.append(name.decode("utf-8", "surrogateescape"))
    return paths


def tracked(root: Path) -> list[str] | None:
    """Tracked paths, or None when `root` is no git checkout."""
    git_dir = _git_dir(root)
    if git_dir is None or not git_dir.is_dir():
        # No checkout, or a worktree whose git folder is out of reach (tools/bazel's rootfs
        # binds the worktree only, not the main checkout's .git/worktrees/NAME).
        return None
    if shutil.which("git"):
        result = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
        if result.returncode == 0:
            return [p for p in result.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    index = git_dir / "index"
    return index_paths(index) if index.is_file() else []


def _bazelignored(root: Path) -> set[str]:
    path = root / ".bazelignore"
    if not path.is_file():
        return set()
    lines = (line.strip().strip("/") for line in path.read_text().splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def untracked_tree(root: Path) -> list[str]:
    ignored = _bazelignored(root)
    result = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        rel = "" if rel == "." else rel + "/"
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.startswith("bazel-")
                         and rel + d not in ignored and not os.path.islink(os.path.join(folder, d)))
        result += [rel + f for f in sorted(files)]
    return result


def starlark_files(root: Path) -> list[str]:
    paths = tracked(root)
    if paths is None:
        paths = untracked_tree(root)
    # A tracked file deleted in the work tree (or left out of a sparse checkout) is not linted.
    return sorted(p for p in paths if is_starlark(p) and (root / p).is_file())


if __name__ == "__main__":
    for path in starlark_files(Path(sys.argv[1])):
        print(path)
