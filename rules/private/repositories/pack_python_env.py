"""Packs the Python environment that has triton into one relocatable, byte-deterministic archive.

Run by that environment's own interpreter (the repository rule in python_env.bzl does):

    python3 -I pack_python_env.py --out env.tar.gz --manifest manifest.json [--package NAME]...

The archive is what the archive-mode toolchain gives every Triton action as an input, so that an
executor that shares no files with the client (remote execution) can run the compile tools. The
launcher (python_launcher.sh) unpacks it once per executor into a cache folder named by its sha256
and runs the tools with it. Layout, relative to that folder:

    bin/python3                     the real interpreter binary (not the venv's symlink)
    lib/python3.X/...               the standard library, lean (no tests, GUI, idle, ensurepip)
    lib/python3.X/lib-dynload/...   its extension modules, less the ones compiling never loads
    lib/*.so.*                      shared libraries those need beyond glibc (LD_LIBRARY_PATH)
    site-packages/...               triton, absl-py, torch (when the environment has it) and what
                                    they require (PYTHONPATH)

Why the interpreter finds all this from any path: the launcher sets PYTHONHOME to the folder,
so sys.prefix is the folder and the standard library is found at PYTHONHOME/lib/python3.X
(the compiled-in /usr prefix is not used).

Lean: only files that compiling needs. Left out: __pycache__ of the source tree, tests, pip,
pytest and anything not in the requirement closure of triton, absl-py (and torch), triton's
CUPTI and profiler libraries (proton) and instrumentation plugins, torch's C++ test programs.

torch (--torch=auto, the default): most kernel files import torch at module level, and what a
kernel can import in local mode it must be able to import on an executor, so when the
environment has torch it is packed with its requirements, numpy (which `import torch` loads when
it is installed) and every shared library they link beyond glibc (Debian's torch keeps
libtorch*.so and ~60 more under /usr/lib, outside site-packages). --torch=no leaves it out.

Distributions without a RECORD (Debian's python3-* packages install none): their files come
from dpkg's list of the package that owns the .dist-info folder, else from top_level.txt.

One file reachable under two names (torch/lib/libtorch_cpu.so is a symlink to the
libtorch_cpu.so.2.14 the loader also needs in lib/): stored once, the other name as a hard link
to it, so the archive does not carry 300 MB twice.

Bytecode: without .pyc files every action would recompile the modules triton imports (a large
part of a short process's start); so the archive carries .pyc files written here as
"unchecked-hash" pycs (PEP 552): they do not depend on file times, so they are valid wherever
the archive is unpacked, and they are the same bytes on every run for the same sources.

Deterministic: members sorted by name, fixed mtime/owner/mode, GNU tar format, gzip header with
mtime 0 and no file name. Symlinks are stored as the files they point to.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.metadata
import io
import json
import os
import py_compile
import re
import subprocess
import sys
import sysconfig
import tarfile

# 1980-01-01: a fixed time (tar warns about "implausibly old" time stamps at 0).
_MTIME = 315532800

# glibc's libraries: taken from the executor, never shipped (an executor's loader must match its
# libc). The executor needs a glibc at least as new as the client's (docs/design.md).
_GLIBC = re.compile(r"^(ld-linux.*|libc|libm|libdl|libpthread|librt|libutil|libresolv|libanl|libmvec|linux-vdso)\.so")

# Standard library parts compiling never uses.
_STDLIB_SKIP_DIRS = {
    "test", "tests", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "__pycache__",
    "site-packages", "dist-packages", "venv", "pydoc_data", "sqlite3", "curses", "dbm",
}
_STDLIB_SKIP_PREFIXES = ("config-",)  # config-3.X-<triple>: libpython.a and the build's Makefile
_DYNLOAD_SKIP = re.compile(r"^_(tkinter|curses|curses_panel|dbm|gdbm|sqlite3|test\w*|xxtestfuzz|ctypes_test|xx\w*)\.|^(readline|xxlimited\w*|xxsubtype)\.")

# Inside distributions: what a compile does not load.
_PACKAGE_SKIP = [
    re.compile(p)
    for p in (
        r"(^|/)__pycache__/",
        r"(^|/)tests?/",
        r"^triton/backends/nvidia/lib/cupti/",  # CUPTI: profiling at run time, 120 MB
        r"^triton/instrumentation/",  # profiler plugins
        r"^triton/_C/libproton\.so$",  # the proton profiler; `import triton` does not load it
        r"^triton/profiler/",
        r"^torch/bin/(?!torch_shm_manager$)",  # C++ test programs (24 MB); `import torch` checks for the manager
        r"\.a$",
        r"\.pyc$",
    )
]

_DPKG_INFO = "/var/lib/dpkg/info"

# Extension modules built for another interpreter (Debian's numpy ships one per Python it
# supports): this one never loads them.
_OTHER_ABI = re.compile(r"\.cpython-(\d+)[a-z]*-[^/]*\.so$")


def _requirement_closure(names):
    """The distributions `names` require (not extras), and their requirements, recursively."""
    seen = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            sys.exit("error: the Python environment has no package '%s' (a requirement of the kernels' packages)" % name)
        seen[key] = dist
        for req in dist.requires or []:
            spec, _, marker = req.partition(";")
            if "extra" in marker:
                continue
            if marker.strip() and not _marker_true(marker):
                continue
            todo.append(re.split(r"[<>=!~ \[(]", spec.strip(), maxsplit=1)[0])
    return [seen[k] for k in sorted(seen)]


def _marker_true(marker):
    # Only python_version markers appear in the closure of triton and absl-py; anything else is
    # taken (shipping a small package too many is harmless, one too few is not).
    m = re.fullmatch(r"\s*python_version\s*([<>=!]=?)\s*['\"]([\d.]+)['\"]\s*", marker)
    if not m:
        return True
    have = sys.version_info[:2]
    want = tuple(int(x) for x in m.group(2).split("."))[:2]
    return {"<": have < want, "<=": have <= want, ">": have > want, ">=": have >= want,
            "==": have == want, "!=": have != want}[m.group(1)]


_dpkg_lists = None


def _dpkg_files(meta_dir):
    """The files dpkg installed with the package that owns `meta_dir` (a .dist-info folder), or
    None when no dpkg package owns it."""
    global _dpkg_lists
    if _dpkg_lists is None:
        _dpkg_lists = {}
        if os.path.isdir(_DPKG_INFO):
            for name in sorted(os.listdir(_DPKG_INFO)):
                if name.endswith(".list"):
                    with open(os.path.join(_DPKG_INFO, name), encoding="utf-8", errors="replace") as f:
                        _dpkg_lists[name] = f.read().splitlines()
    for lines in _dpkg_lists.values():
        if meta_dir in lines:
            return lines
    return None


def _record_less_files(dist, root):
    """Paths relative to `root` of a distribution installed without a RECORD."""
    meta_dir = str(getattr(dist, "_path", ""))
    if not meta_dir or not os.path.isdir(meta_dir):
        sys.exit("error: cannot tell which files the distribution '%s' installed (no RECORD and no "
                 "metadata folder)" % dist.metadata["Name"])
    rels = []
    for candidate in (meta_dir, os.path.realpath(meta_dir)):
        lines = _dpkg_files(candidate)
        if lines is not None:
            prefix = os.path.dirname(candidate) + "/"
            rels = [line[len(prefix):] for line in lines if line.startswith(prefix)]
            break
    else:
        tops = (dist.read_text("top_level.txt") or "").split()
        if not tops:
            sys.exit("error: cannot tell which files the distribution '%s' installed (no RECORD, no "
                     "top_level.txt, no dpkg package owns %s)" % (dist.metadata["Name"], meta_dir))
        for top in tops:
            for candidate in (top, top + ".py"):
                path = os.path.join(root, candidate)
                if os.path.isfile(path):
                    rels.append(candidate)
                for dirpath, dirnames, filenames in os.walk(path):
                    dirnames.sort()
                    rels.extend(os.path.relpath(os.path.join(dirpath, n), root) for n in filenames)
    # The metadata itself (importlib.metadata and the environment fingerprint read it).
    for dirpath, dirnames, filenames in os.walk(meta_dir):
        rels.extend(os.path.relpath(os.path.join(dirpath, n), os.path.dirname(meta_dir)) for n in filenames)
    return rels


def _package_files(dist):
    """(archive name, real path) for a distribution's installed files, lean."""
    root = str(dist.locate_file(""))
    rels = [str(f) for f in dist.files] if dist.files is not None else _record_less_files(dist, root)
    for rel in rels:
        if rel.startswith("..") or rel.startswith("/"):
            continue  # console scripts in bin/
        if any(p.search(rel) for p in _PACKAGE_SKIP):
            continue
        abi = _OTHER_ABI.search(rel)
        if abi and abi.group(1) != "%d%d" % sys.version_info[:2]:
            continue
        path = os.path.join(root, rel)
        if os.path.isfile(path):
            yield "site-packages/" + rel, path


def _stdlib_files(stdlib, dynload, pyver):
    for dirpath, dirnames, filenames in os.walk(stdlib):
        rel_dir = os.path.relpath(dirpath, stdlib)
        dirnames[:] = [
            d for d in dirnames
            if d not in _STDLIB_SKIP_DIRS and not d.startswith(_STDLIB_SKIP_PREFIXES)
            and os.path.join(dirpath, d) != dynload
        ]
        for name in filenames:
            if not name.endswith(".py"):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            yield "lib/%s/%s" % (pyver, rel), os.path.join(dirpath, name)
    for name in os.listdir(dynload):
        if name.endswith(".so") and not _DYNLOAD_SKIP.search(name):
            yield "lib/%s/lib-dynload/%s" % (pyver, name), os.path.join(dynload, name)


def _shared_libs(elf_files):
    """Non-glibc shared libraries the ELF files need, as (lib/<soname>, path)."""
    libs = {}
    for path in elf_files:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (/\S+)", line)
            if m and not _GLIBC.match(m.group(1)):
                libs["lib/" + m.group(1)] = m.group(2)
            elif "not found" in line:
                sys.exit("error: %s needs %s, which is not installed" % (path, line.split()[0]))
    return sorted(libs.items())


def _is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _pyc(source_path, name):
    """An unchecked-hash pyc for `source_path`, as bytes (see the module docstring)."""
    tmp = os.path.join(_SCRATCH, "x.pyc")
    py_compile.compile(source_path, cfile=tmp, dfile=name, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    with open(tmp, "rb") as f:
        return f.read()


def _add(tar, name, data, executable):
    """Adds bytes or an _OnDisk file (streamed); returns its size."""
    info = tarfile.TarInfo(name)
    info.mtime = _MTIME
    info.mode = 0o755 if executable else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if isinstance(data, _OnDisk):
        with open(data.path, "rb") as f:
            info.size = os.fstat(f.fileno()).st_size
            tar.addfile(info, f)
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return info.size


def _add_link(tar, name, target):
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    info.mtime = _MTIME
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info)


def _add_dir(tar, name):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mtime = _MTIME
    info.mode = 0o755
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info)


_SCRATCH = ""


class _OnDisk:
    """A file to pack, streamed into the archive when it is written."""

    def __init__(self, path):
        self.path = path


def _installed(name):
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def main():
    global _SCRATCH
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--package", action="append", default=[])
    parser.add_argument("--compresslevel", type=int, default=6)
    parser.add_argument("--torch", choices=("auto", "no"), default="auto",
                        help="auto: pack torch (and numpy) when the environment has it")
    # Tests pack a small environment (absl-py alone) instead of triton's 550 MB.
    parser.add_argument("--roots", default="triton,absl-py", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _SCRATCH = args.scratch
    os.makedirs(_SCRATCH, exist_ok=True)

    pyver = "python%d.%d" % sys.version_info[:2]
    interpreter = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    base = sys.base_prefix
    stdlib = sysconfig.get_path("stdlib", vars={"installed_base": base, "base": base})
    dynload = os.path.join(stdlib, "lib-dynload")
    if not os.path.isdir(dynload):
        sys.exit("error: no lib-dynload next to the standard library %s" % stdlib)

    files = {"bin/python3": interpreter}
    files.update(_stdlib_files(stdlib, dynload, pyver))
    roots = args.roots.split(",") + args.package
    if args.torch == "auto" and _installed("torch"):
        roots += ["torch"] + (["numpy"] if _installed("numpy") else [])
    dists = _requirement_closure(roots)
    for dist in dists:
        files.update(_package_files(dist))
    elves = [p for n, p in files.items() if n == "bin/python3" or n.endswith(".so") or ".so." in n]
    files.update(_shared_libs(sorted(elves)))

    # (name, data, executable); data: bytes (a pyc), str (a hard link: its target's name) or an
    # _OnDisk file, read only while the archive is written (torch's environment is over 1 GB).
    entries = []
    stored = {}  # real path -> the name it is stored under first
    for name in sorted(files):
        path = files[name]
        real = os.path.realpath(path)
        if real in stored:
            entries.append((name, stored[real], False))
            continue
        stored[real] = name
        executable = _is_elf(path) and not name.endswith(".so") and ".so." not in name
        executable = executable or (os.stat(path).st_mode & 0o111 != 0 and "/bin/" in "/" + name)
        entries.append((name, _OnDisk(path), executable))
        if name.endswith(".py"):
            head, base_name = os.path.split(name)
            cache_tag = sys.implementation.cache_tag
            pyc_name = "%s/__pycache__/%s.%s.pyc" % (head, base_name[:-3], cache_tag)
            try:
                entries.append((pyc_name, _pyc(path, name), False))
            except py_compile.PyCompileError:
                pass  # a file that is not valid Python (templates in packages): source only

    entries.sort(key=lambda e: e[0])
    dirs = set()
    for name, _, _ in entries:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))

    digest = hashlib.sha256()
    total = 0
    tmp_out = args.out + ".tmp"
    with open(tmp_out, "wb") as raw:
        # mtime=0 and an empty file name: the gzip header holds nothing of this run.
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=args.compresslevel) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
                for item in sorted([(d, None, None) for d in dirs] + entries, key=lambda e: e[0]):
                    name, data, executable = item
                    if data is None:
                        _add_dir(tar, name)
                    elif isinstance(data, str):
                        _add_link(tar, name, data)
                    else:
                        total += _add(tar, name, data, executable)
    with open(tmp_out, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    os.replace(tmp_out, args.out)
    with open(args.manifest, "w") as f:
        json.dump({
            "sha256": digest.hexdigest(),
            "archive_bytes": os.path.getsize(args.out),
            "files": len(entries),
            "hard_links": sum(1 for e in entries if isinstance(e[1], str)),
            "unpacked_bytes": total,
            "python": pyver,
            "interpreter": interpreter,
            "distributions": ["%s==%s" % (d.metadata["Name"], d.version) for d in dists],
        }, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
