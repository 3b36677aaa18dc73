"""tools/tracked_starlark.py: which Starlark files buildifier_test lints."""

from __future__ import annotations

import hashlib
import os
import struct
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tracked_starlark  # noqa: E402


def _entry(name: bytes, version: int, previous: bytes) -> bytes:
    fixed = struct.pack(">10I20sH", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0,
                        hashlib.sha1(name).digest(), min(len(name), 0xFFF))
    if version == 4:  # the length of the previous name to drop, then the rest
        common = len(os.path.commonprefix([previous, name]))
        strip = len(previous) - common
        assert strip < 0x80
        return fixed + bytes([strip]) + name[common:] + b"\0"
    body = fixed + name
    return body + b"\0" * (8 - len(body) % 8)


def _index(path: Path, names: list[bytes], version: int) -> None:
    data, previous = struct.pack(">4sII", b"DIRC", version, len(names)), b""
    for name in names:
        data += _entry(name, version, previous)
        previous = name
    path.write_bytes(data + b"\0" * 20)  # extensions and checksum are not read


def _checkout(tmp_path: Path, version: int) -> Path:
    root = tmp_path / f"v{version}"
    names = [b"BUILD.bazel", b"MODULE.bazel", b"README.md", b"rules/defs.bzl",
             b"rules/private/BUILD.bazel", b"rules/private/gone.bzl"]
    for name in names[:-1]:
        (root / name.decode()).parent.mkdir(parents=True, exist_ok=True)
        (root / name.decode()).write_text("")
    (root / ".git").mkdir()
    _index(root / ".git" / "index", names, version)
    # untracked: a scratch workspace and an editor's copy
    (root / "scratch").mkdir()
    (root / "scratch" / "BUILD.bazel").write_text("x=[ 1 ]\n")
    (root / "rules" / "defs.bzl~").write_text("")
    (root / "rules" / "copy.bzl").write_text("")
    return root


def test_only_tracked_files_that_exist(tmp_path, monkeypatch):
    monkeypatch.setattr(tracked_starlark.shutil, "which", lambda _: None)  # read the index
    for version in (2, 3, 4):
        root = _checkout(tmp_path, version)
        assert tracked_starlark.starlark_files(root) == [
            "BUILD.bazel", "MODULE.bazel", "rules/defs.bzl", "rules/private/BUILD.bazel"]


def test_no_checkout_skips_bazelignored_and_hidden_folders(tmp_path):
    for rel in ("BUILD.bazel", "a/x.bzl", "examples/BUILD.bazel", ".hidden/BUILD",
                "bazel-out/BUILD"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / ".bazelignore").write_text("examples\n")
    assert tracked_starlark.starlark_files(tmp_path) == ["BUILD.bazel", "a/x.bzl"]


def test_worktree_whose_git_folder_is_out_of_reach_lints_the_tree(tmp_path, monkeypatch):
    monkeypatch.setattr(tracked_starlark.shutil, "which", lambda _: None)
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "defs.bzl").write_text("")
    (tmp_path / "BUILD.bazel").write_text("")
    (tmp_path / ".git").write_text("gitdir: /nonexistent/.git/worktrees/wt\n")
    assert tracked_starlark.starlark_files(tmp_path) == ["BUILD.bazel", "rules/defs.bzl"]
