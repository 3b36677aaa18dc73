"""write_atomic: write-then-rename that never leaves the target's directory.

Why not `tempfile.mkstemp(dir=parent)` + `os.replace(tmp, target)` (what compile.py did):
since Python 3.12 mkstemp returns `os.path.abspath(tmp)`, an absolute path spelled from
`os.getcwd()`. That string names the same directory as the process's working directory only
while nothing is mounted over it. A remote worker that runs two jobs in one fixed workspace
mounts the second job's input root over the same path while the first job's process still has
the old one as its working directory: the temporary file is then created through the new mount
(somewhere else) while the relative target resolves through the old one, and the rename fails
with EXDEV ("Invalid cross-device link"). (`tempfile.tempdir`, which compiler.hermetic_env
redirects, plays no part once `dir=` is given; this module does not use tempfile at all.)

Here every step is relative to one open handle on the target's directory (`dir_fd`), so the
temporary file is always created next to the target, on the same mount, whatever the paths
spell and whatever is mounted where.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Writes `data` to `path` so that readers see the old file or the whole new one."""
    target = Path(path)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        while True:
            tmp = f".{target.name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode,
                             dir_fd=dir_fd)
                break
            except FileExistsError:  # another writer's temporary file: pick another name
                continue
        try:
            with os.fdopen(fd, "wb") as f:
                # O_CREAT's mode is masked by the umask; outputs must not depend on the caller's.
                os.fchmod(f.fileno(), mode)
                f.write(data)
            os.replace(tmp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            raise
    finally:
        os.close(dir_fd)
