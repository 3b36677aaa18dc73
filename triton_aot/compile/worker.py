"""Bazel persistent worker, JSON protocol (`--persistent_worker`), as a zygote with keyed children.

Reads WorkRequest objects from stdin ({"arguments": [...], "requestId": N, ...}) and writes
one WorkResponse line per request to stdout ({"exitCode", "output", "requestId"}).

A request must give exactly what a one-shot process gives. The user's modules (the kernel file,
its deps) may register things process-wide at import (torch custom ops, class registries), and
refuse to be imported a second time in one process; so no module of the user's is ever dropped
and imported again. Instead the worker process (the parent) imports Triton (and torch, where
the environment has it: import_torch) and runs one warm-up compile, once, and never compiles
again; requests run in children forked from that warm parent, one child per request key (what
the request imports: for the compile tool, request_key.py). A child keeps its modules and
serves only requests of its key, so a dep that takes seconds to import is imported once per
child, not once per action. A tool that runs the user's code rather than only importing it (the
capture tool, serve_tool with no key) gets a fresh child for every request.

Why children at all: Triton's native code keeps memory after every compile (about 0.8 MiB a
compile under Python 3.14, see bench/results/worker.md) and nothing in Python gives it back, and
exiting the worker past a memory limit does not work (Bazel 7.7.1 sends the next request to the
exited worker). A child that has grown by CHILD_GROWTH_LIMIT_MIB exits, taking what Triton leaked
with it, and at most MAX_CHILDREN keyed children live at once (the least recently used one
retires), so the worker's memory is bounded by the parent's (flat) plus that many children.

- A request sees exactly its declared inputs, as a sandboxed one-shot action does: Bazel starts
  the worker in the execroot, where every file of the repository lies, so a kernel's import
  could find a module that no target declares and build what a sandboxed or remote action
  refuses (or builds differently). A request that lists its `inputs` (Bazel's do) and has no
  `sandboxDir` runs in a private tree of symlinks to exactly those files, which the working
  directory and every sys.path entry inside the execroot point into; the tool's outputs
  (`output_flags`) are moved from there to their execroot paths (_PrivateTree). A keyed child
  keeps its tree (under the worker's TMPDIR) for its life; the parent removes it once the child
  has exited.
- Requests are parsed as a stream of JSON objects, with or without newlines between them
  (older Bazel versions write no separator).
- Only WorkResponses may reach stdout: the real stdout is kept on a private descriptor and
  fd 1 is pointed at stderr, so stray prints (from triton, ptxas, kernel files) cannot
  corrupt the protocol.
- Everything a request writes to fds 1 and 2 (messages, triton/MLIR diagnostics) is captured
  into the response's "output".
- Requests run one after the other; `sandboxDir` is honoured. Cancel requests are ignored: Bazel
  sends them only to workers that declare `supports-worker-cancellation`, which this one does
  not; without it Bazel stops a compile by stopping the worker, which is handled below.
- No process is left behind when a compile is stopped half-way:
  * each child runs in its own process group, which the parent kills (SIGKILL) when the child
    retires or dies, so no stray grandchild outlives its child;
  * SIGTERM/SIGINT/SIGHUP of the worker kill every child's process group, then the worker;
  * SIGKILL of the worker cannot be caught, so every process in the tree is made to die with its
    parent: the child and every program spawned through `subprocess` (ptxas, cuobjdump) get
    PR_SET_PDEATHSIG(SIGKILL), which the kernel delivers when their parent dies and which
    survives exec.
- Where fork() or prctl() are missing (not Linux), or with RULES_TRITON_WORKER_ONE_SHOT=1 (a
  benchmark's baseline), each request runs as a one-shot process of its own.
  RULES_TRITON_WORKER_CHILD_GROWTH_MIB overrides the growth limit (tests, benchmarks; 0: a fresh
  child forked for every request) and RULES_TRITON_WORKER_MAX_CHILDREN the number of children.
"""

from __future__ import annotations

import codecs
import ctypes
import gc
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

Handler = Callable[[list], int]  # arguments -> exit code; writes its messages to stderr


def read_requests(fd: int) -> Iterator[dict]:
    """JSON objects from `fd` until EOF."""
    decoder = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    buffer = ""
    while True:
        chunk = os.read(fd, 1 << 16)
        buffer += utf8.decode(chunk, final=not chunk)
        while True:
            buffer = buffer.lstrip()
            if not buffer:
                break
            try:
                obj, end = decoder.raw_decode(buffer)
            except json.JSONDecodeError as e:
                if chunk and _incomplete(buffer):
                    break  # wait for the rest of the object
                sys.stderr.write(f"triton_aot worker: dropping malformed request: {e}\n")
                buffer = ""
                break
            buffer = buffer[end:]
            if isinstance(obj, dict):
                yield obj
            else:
                sys.stderr.write("triton_aot worker: dropping a request that is not an object\n")
        if not chunk:
            return


def _incomplete(text: str) -> bool:
    """Whether `text` could still become a complete JSON object (unbalanced braces)."""
    depth, in_string, escape = 0, False, False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return in_string or depth > 0


def run_captured(handle: Handler, arguments: Sequence[str], sandbox_dir: str | None) -> tuple:
    """Runs one request with fds 1/2 captured; returns (exit code, captured output)."""
    cwd = os.getcwd()
    with tempfile.TemporaryFile() as capture:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        saved_streams = sys.stdout, sys.stderr
        os.dup2(capture.fileno(), 1)
        os.dup2(capture.fileno(), 2)
        # Python-level streams too: they need not be backed by fds 1/2 (e.g. under pytest)
        text = open(capture.fileno(), "w", encoding="utf-8", errors="replace", buffering=1,
                    closefd=False)
        sys.stdout = sys.stderr = text
        try:
            if sandbox_dir:
                os.chdir(sandbox_dir)
            code = handle(list(arguments))
        except Exception as e:  # the handler reports its own errors; this is a last resort
            text.write(f"error: internal error in triton_aot worker: {type(e).__name__}: {e}\n")
            code = 1
        finally:
            text.flush()
            sys.stdout, sys.stderr = saved_streams
            text.close()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            os.chdir(cwd)
        capture.seek(0)
        output = capture.read().decode("utf-8", errors="replace")
    return code, output


# --------------------------------------------------------------------------- declared inputs only

OutputsOf = Callable[[list], list]  # a request's arguments -> the output paths it writes


def _declared_paths(inputs: object) -> Optional[list]:
    """The execroot-relative paths of a WorkRequest's `inputs`, or None when it lists none (a
    request written by hand rather than by Bazel: it runs where the worker runs)."""
    if not isinstance(inputs, list):
        return None
    paths = []
    for entry in inputs:
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and _relative(path):
            paths.append(os.path.normpath(path))
    return paths


def _relative(path: str) -> bool:
    """An execroot-relative path that stays inside the execroot (Bazel's exec paths do)."""
    return bool(path) and not os.path.isabs(path) and \
        os.pardir not in path.split("/") and os.path.normpath(path) != os.curdir


class _PrivateTree:
    """A folder holding exactly a request's declared inputs, as a sandboxed one-shot action sees.

    Bazel starts a worker in the execroot, where every file of the repository lies: a kernel's
    import would find a module under its import root that no target declares, and a build would
    differ with the worker on and off (and remotely). So a request runs in this tree instead:
    symlinks to exactly the files its WorkRequest lists (the tool's files included, as Bazel
    lists them), laid out as in the execroot and named as a sandbox's (`.../execroot/_main`);
    the working directory, and every sys.path entry inside the execroot, point into the tree, so
    the tool's relative paths (kernel file, import roots, param file) resolve there. The
    outputs are written in the tree and moved to their execroot paths afterwards, and whatever
    else the request wrote there is removed, as a sandbox is.

    A keyed child keeps its tree for its life (its modules' files stay where they were
    imported from) and updates it per request: its requests declare the same inputs but for the
    rules' `_triton/` intermediates, which differ by library.
    """

    def __init__(self, scratch: str, execroot: str):
        self.execroot = execroot
        self.root = os.path.join(scratch, "execroot", os.path.basename(execroot) or "_main")
        os.makedirs(self.root, exist_ok=True)
        self.linked: set = set()
        # the current request's output folders (with theirs above them): kept between requests,
        # as the next request of a child most often writes to the same ones
        self.output_dirs: set = set()
        self.folders: set = set()  # the folders in the tree, as the last clean found them

    def path(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def update(self, paths: Sequence[str]) -> None:
        """The tree holds exactly `paths` (execroot-relative)."""
        wanted = set(paths)
        gone = self.linked - wanted
        for path in gone:
            try:
                os.unlink(self.path(path))
            except OSError:
                pass
        for new in sorted(wanted - self.linked):
            link = self.path(new)
            folder = os.path.dirname(new)
            if folder and folder not in self.folders:
                os.makedirs(self.path(folder), exist_ok=True)
                while folder and folder not in self.folders:
                    self.folders.add(folder)
                    folder = os.path.dirname(folder)
            try:
                os.symlink(os.path.join(self.execroot, new), link)
            except FileExistsError:  # a file the last request left behind (see clean)
                self._remove(link)
                os.symlink(os.path.join(self.execroot, new), link)
        self.linked = wanted
        if gone:
            self.clean()  # the folders that only they held

    def map(self, entry: str) -> str:
        """A sys.path entry (or any absolute path) inside the execroot, as the tree's path."""
        if entry == self.execroot:
            return self.root
        if entry.startswith(self.execroot + os.sep):
            return self.root + entry[len(self.execroot):]
        return entry

    def prepare_outputs(self, outputs: Sequence[str]) -> None:
        """Output folders exist before an action runs (Bazel makes them, in a sandbox too), and
        no other folder that no input needs (an earlier request's outputs')."""
        wanted = set()
        for out in outputs:
            folder = os.path.dirname(out)
            while folder and folder not in wanted:
                wanted.add(folder)
                folder = os.path.dirname(folder)
        if wanted != self.output_dirs:
            self.output_dirs = wanted
            self.clean()
        for folder in sorted(wanted - self.folders):
            os.makedirs(self.path(folder), exist_ok=True)
            self.folders.add(folder)

    def collect_outputs(self, outputs: Sequence[str]) -> None:
        """Moves the outputs the request wrote to their execroot paths, then removes whatever
        else it left in the tree."""
        try:
            for out in outputs:
                written = self.path(out)
                if os.path.isfile(written) and not os.path.islink(written):
                    destination = os.path.join(self.execroot, out)
                    os.makedirs(os.path.dirname(destination), exist_ok=True)
                    # os.rename where the tree shares the execroot's file system, else a copy
                    shutil.move(written, destination)
        finally:
            self.clean()

    @staticmethod
    def _collected(code: int, output: str, collect: Callable[[], None]) -> tuple:
        try:
            collect()
        except OSError as e:
            return 1, output + (
                "error: internal error in the triton_aot persistent worker, not in the kernel or "
                f"its deps: an output could not be moved to the execroot: {e}; build again, or "
                "with --@rules_triton//:persistent_worker=false\n")
        return code, output

    def clean(self) -> None:
        """Removes every file and folder that is neither a declared input nor above one (nor
        the current request's output folder)."""
        self.folders = set()
        self._clean(self.root, "")

    def _clean(self, folder: str, relative: str) -> bool:
        """Whether `folder` is empty once cleaned (folders above an input never are). One
        scandir per folder, no stat per entry: it runs after every request."""
        empty = True
        with os.scandir(folder) as entries:
            for entry in entries:
                path = relative + entry.name
                if entry.is_symlink():
                    if path in self.linked:
                        empty = False
                    else:
                        os.unlink(entry.path)
                elif entry.is_dir():
                    if self._clean(entry.path, path + os.sep) and path not in self.output_dirs:
                        os.rmdir(entry.path)
                    else:
                        self.folders.add(path)
                        empty = False
                else:
                    os.unlink(entry.path)
        return empty

    @staticmethod
    def _remove(path: str) -> None:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)

    def run(self, handle: Handler, arguments: Sequence[str], inputs: Sequence[str],
            outputs: Sequence[str]) -> tuple:
        """Runs a request in this process with the tree as its execroot; (exit code, output).
        `outputs`: the files it writes (relative: into the tree, then moved out)."""
        outputs = [os.path.normpath(o) for o in outputs if _relative(o)]
        self.update(inputs)
        self.prepare_outputs(outputs)
        saved_path = list(sys.path)
        # (new entries get finders of their own: no cache to invalidate)
        sys.path[:] = [self.map(p) for p in sys.path]
        try:
            code, output = run_captured(handle, arguments, self.root)
        finally:
            sys.path[:] = saved_path
        return self._collected(code, output, lambda: self.collect_outputs(outputs))

    def run_one_shot(self, command: Sequence[str], inputs: Sequence[str],
                     outputs: Sequence[str]) -> tuple:
        """Runs a request as a process of its own in the tree; (exit code, output)."""
        outputs = [os.path.normpath(o) for o in outputs if _relative(o)]
        self.update(inputs)
        self.prepare_outputs(outputs)
        env = dict(os.environ)
        if env.get("PYTHONPATH"):  # relative entries resolve in the tree, its working directory
            env["PYTHONPATH"] = os.pathsep.join(self.map(p)
                                                for p in env["PYTHONPATH"].split(os.pathsep))
        proc = subprocess.run(list(command), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, cwd=self.root, env=env)
        return self._collected(proc.returncode, proc.stdout.decode("utf-8", errors="replace"),
                               lambda: self.collect_outputs(outputs))


# --------------------------------------------------------------------------- process control

_PR_SET_PDEATHSIG = 1
_libc = None


def _set_parent_death_signal(expected_parent: int) -> None:
    """Asks the kernel to SIGKILL this process when its parent dies (Linux prctl).

    The parent may already have died between fork and this call: then the signal would never
    come, so exit at once instead.
    """
    if _libc is None or _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != expected_parent:
        os._exit(128 + signal.SIGKILL)


def _install_subprocess_death_signal() -> None:
    """Every program this process tree starts through `subprocess` dies with its parent.

    Triton runs ptxas (and cuobjdump) with subprocess.run from the compiling process; a
    preexec_fn is the only hook that runs in the new process before it execs, and the parent
    death signal set there survives the exec. Chained with a caller's own preexec_fn.
    """
    original = subprocess.Popen.__init__
    if getattr(original, "_rules_triton_pdeathsig", False):
        return

    def __init__(self, *args, **kwargs):
        parent = os.getpid()
        args = list(args)
        # preexec_fn is Popen's 7th parameter (args, bufsize, executable, stdin, stdout,
        # stderr, preexec_fn); almost everyone passes it by keyword
        own = args[6] if len(args) > 6 else kwargs.get("preexec_fn")

        def preexec():
            _set_parent_death_signal(parent)
            if own is not None:
                own()

        if len(args) > 6:
            args[6] = preexec
        else:
            kwargs["preexec_fn"] = preexec
        original(self, *args, **kwargs)

    __init__._rules_triton_pdeathsig = True
    subprocess.Popen.__init__ = __init__


def _can_fork() -> bool:
    global _libc
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return False
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.prctl  # noqa: B018 (present on every Linux libc; checked, not assumed)
    except (OSError, AttributeError):
        _libc = None
        return False
    return True


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:  # pgid reused by someone else's process: not ours to kill
        pass


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_message(fd: int, payload: bytes) -> None:
    view = memoryview(struct.pack("<Q", len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _read_message(fd: int) -> Optional[bytes]:
    """A length-prefixed message, or None when the other end closed first."""
    header = _read_exactly(fd, 8)
    if len(header) != 8:
        return None
    size = struct.unpack("<Q", header)[0]
    payload = _read_exactly(fd, size)
    return payload if len(payload) == size else None


def _rss_kib() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


# How much a compiling child may grow (MiB of resident memory, measured after each request from
# its first answer on) before it is retired and a fresh child takes over. Triton leaks native
# memory on every compile, so a child cannot live forever; but retiring it only after this much
# growth lets one child serve many compiles, so that fork, teardown and the user's imports stay
# a small part of the work. 0: a fresh child for every request.
CHILD_GROWTH_LIMIT_MIB = 64

# How many keyed children may live at once (each holds the modules its key imports); past it the
# least recently used one is retired. Bounds the worker's memory at the parent's plus this many
# children (each: the parent's pages it shares, its key's imports, CHILD_GROWTH_LIMIT_MIB).
MAX_CHILDREN = 3

# A child's answer when a file one of its modules came from changed since it imported it: it is
# retired without running the request, which a fresh child then runs.
_STALE = "stale"


@dataclass
class _Child:
    pid: int
    request_fd: int  # the parent writes requests here
    result_fd: int  # and reads answers here
    scratch: str  # its private tree of declared inputs lives here; the parent removes it
    first_rss_kib: int = 0  # resident memory after its first request


def _module_files(known: frozenset) -> dict:
    """file -> (mtime_ns, size, inode) of every module imported since fork (not in `known`)."""
    files = {}
    for name, module in list(sys.modules.items()):
        if name in known:
            continue
        file = getattr(module, "__file__", None)
        if not file:
            continue
        try:
            st = os.stat(file)
        except OSError:
            files[file] = None
            continue
        files[file] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return files


def _unchanged(files: dict) -> bool:
    for file, seen in files.items():
        try:
            st = os.stat(file)
        except OSError:
            if seen is not None:
                return False
            continue
        if seen != (st.st_mtime_ns, st.st_size, st.st_ino):
            return False
    return True


class _Zygote:
    """Runs requests in children forked from this (warm) process, one child per request key.

    A request's key says what it imports (for the compile tool: the kernel file or module, the
    import roots, the target the import answers for, the inputs' digests). A child serves only
    requests of one key and keeps the modules they import, so no module of the user's is ever
    executed twice in one process, and a request sees exactly what a fresh process would: its
    key's modules imported once, as the first request of a one-shot process imports them. A
    request without a key (None) runs in a child of its own.

    A child is retired (it exits, and its whole process group is killed) once it has grown past
    CHILD_GROWTH_LIMIT_MIB, after a request that failed (a failed import may have left modules
    half-imported, which a fresh process would never see), when a file one of its modules came
    from has changed, and when MAX_CHILDREN others were used more recently. A spare child, forked
    ahead of time off any request's clock, takes the next new key. The parent never compiles
    after its warm-up, so it never grows.
    """

    def __init__(self, handle: Handler, close_in_child: Sequence[int], growth_limit_mib: int,
                 max_children: int = MAX_CHILDREN, outputs_of: Optional[OutputsOf] = None):
        self.handle = handle
        self.outputs_of = outputs_of or (lambda arguments: [])
        self.close_in_child = list(close_in_child)
        self.growth_limit_kib = growth_limit_mib * 1024
        self.max_children = max(1, max_children)
        self.children: "OrderedDict[str, _Child]" = OrderedDict()  # least recently used first
        self.spare: Optional[_Child] = None
        self.unreaped = []  # retired children, not waited for yet
        self.scratch_of: dict = {}  # pid -> its scratch folder, removed once it is reaped

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, frame):
        for child in list(self.children.values()) + ([self.spare] if self.spare else []):
            _kill_group(child.pid)
        for scratch in self.scratch_of.values():
            shutil.rmtree(scratch, ignore_errors=True)
        os._exit(128 + signum)

    def _fork(self) -> _Child:
        parent = os.getpid()
        request_read, request_write = os.pipe()
        result_read, result_write = os.pipe()
        sys.stdout.flush()  # nothing buffered here may be written again by the child
        sys.stderr.flush()
        close_in_child = self.close_in_child + [
            fd for c in list(self.children.values()) + ([self.spare] if self.spare else [])
            for fd in (c.request_fd, c.result_fd)]
        scratch = tempfile.mkdtemp(prefix="triton_aot_worker_")
        pid = os.fork()
        if pid == 0:  # ------------------------------------------------------------ the child
            status = 1
            try:
                os.close(request_write)
                os.close(result_read)
                os.setpgid(0, 0)
                _set_parent_death_signal(parent)
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                for fd in close_in_child:  # the protocol, and the other children's pipes
                    os.close(fd)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)  # the protocol's stdin belongs to the parent
                os.close(null)
                # Collections would write to pages shared with the parent; requests create
                # little cyclic garbage, and the child's life is bounded by its memory anyway.
                gc.disable()
                known = frozenset(sys.modules)
                files: dict = {}
                tree: Optional[_PrivateTree] = None
                while True:
                    request = _read_message(request_read)
                    if request is None:  # retired, or the worker is shutting down
                        break
                    if not _unchanged(files):
                        _write_message(result_write, json.dumps([_STALE]).encode())
                        break
                    arguments, sandbox_dir, inputs = json.loads(request)
                    if inputs is None or sandbox_dir:  # by hand; or Bazel's own sandbox
                        code, output = run_captured(self.handle, arguments, sandbox_dir)
                    else:
                        if tree is None:
                            tree = _PrivateTree(scratch, os.getcwd())
                        code, output = tree.run(self.handle, arguments, inputs,
                                                self.outputs_of(arguments))
                    files = _module_files(known)
                    _write_message(result_write, json.dumps([code, output, _rss_kib()]).encode())
                status = 0
            finally:
                os._exit(status)  # no atexit handlers, no flushing of the parent's buffers
        # ------------------------------------------------------------------------ the parent
        os.close(request_read)
        os.close(result_write)
        try:
            os.setpgid(pid, pid)  # also set here, so a kill right after fork finds the group
        except OSError:
            pass
        self.scratch_of[pid] = scratch
        return _Child(pid, request_write, result_read, scratch)

    def prepare(self) -> None:
        """Forks the spare child for the next new key, if there is none (between requests)."""
        if self.spare is None:
            self.spare = self._fork()

    def _retire(self, child: _Child) -> None:
        """The child exits (its request pipe closes) and nothing of its group survives."""
        os.close(child.request_fd)
        os.close(child.result_fd)
        _kill_group(child.pid)
        self.unreaped.append(child.pid)

    def _take(self, key: Optional[str]) -> _Child:
        """The child for `key`: its own, or the spare, which then becomes key's."""
        if key is not None and key in self.children:
            self.children.move_to_end(key)
            return self.children[key]
        self.prepare()
        child, self.spare = self.spare, None
        if key is not None:
            while len(self.children) >= self.max_children:
                self._retire(self.children.popitem(last=False)[1])
            self.children[key] = child
        return child

    def _drop(self, key: Optional[str], child: _Child) -> None:
        if key is not None and self.children.get(key) is child:
            del self.children[key]
        self._retire(child)

    def _exchange(self, child: _Child, arguments: Sequence[str], sandbox_dir: str | None,
                  inputs: Optional[list]) -> Optional[list]:
        try:
            _write_message(child.request_fd,
                           json.dumps([list(arguments), sandbox_dir, inputs]).encode())
            payload = _read_message(child.result_fd)
        except BrokenPipeError:
            payload = None  # the child died before reading its request
        try:
            answer = json.loads(payload)
        except (TypeError, ValueError):
            return None
        return answer if isinstance(answer, list) else None

    def run(self, arguments: Sequence[str], sandbox_dir: str | None,
            key: Optional[str] = None, inputs: Optional[list] = None) -> tuple:
        """Runs a request in its key's child; `inputs`: the execroot-relative paths it declares
        (it then sees only those, _PrivateTree), or None."""
        child = self._take(key)
        answer = self._exchange(child, arguments, sandbox_dir, inputs)
        if answer == [_STALE]:  # a file it imported changed: a fresh child imports it anew
            self._drop(key, child)
            child = self._take(key)
            answer = self._exchange(child, arguments, sandbox_dir, inputs)
        if answer is None or len(answer) != 3:
            self._drop(key, child)
            pid = self.unreaped.pop()
            _, status = os.waitpid(pid, 0)
            self._reaped(pid)
            return 1, ("error: internal error in the triton_aot persistent worker, not in the "
                       "kernel or its deps: the process compiling this request ended without an "
                       f"answer ({_describe_status(status)}; out of memory?); the request was "
                       "not retried. Build again, or with "
                       "--@rules_triton//:persistent_worker=false\n")
        code, output, rss_kib = answer
        if not child.first_rss_kib:
            child.first_rss_kib = rss_kib
        if (key is None or int(code) != 0
                or rss_kib - child.first_rss_kib >= self.growth_limit_kib):
            self._drop(key, child)
        return int(code), str(output)

    def reap(self, block: bool = False) -> None:
        """Collects retired children that have exited. Not blocking by default: the kernel tears
        down an exited child's memory (tens of milliseconds) while this process already serves
        the next request; until then the child is a zombie."""
        for pid in list(self.unreaped):
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            if done:
                self.unreaped.remove(pid)
                self._reaped(pid)

    def _reaped(self, pid: int) -> None:
        """A child has exited: nothing uses its scratch folder any more."""
        scratch = self.scratch_of.pop(pid, None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def close(self) -> None:
        """Retires every child and waits for them."""
        for key in list(self.children):
            self._retire(self.children.pop(key))
        if self.spare is not None:
            self._retire(self.spare)
            self.spare = None
        self.reap(block=True)


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    return f"exit code {os.WEXITSTATUS(status)}"


# --------------------------------------------------------------------------- warm-up

_WARM_UP_KERNEL = '''\
import triton
import triton.language as tl


@triton.jit
def rules_triton_warm_up(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)
'''


def compile_tool_warm_up(handle: Handler) -> Callable[[], int]:
    """A warm-up for the compile tool's handler: one small compile per major target.

    `import triton` alone is not enough: a process's first compile also loads the NVIDIA
    backend, initialises LLVM's targets and asks ptxas for its version: a cost that a child
    forked before it would pay on every request. Forked after it, a child compiles as
    fast as a warm process does.
    """

    def warm_up() -> int:
        """0, or the exit code of the first compile that failed (its messages are on stderr)."""
        with tempfile.TemporaryDirectory(prefix="triton_aot_warm_up_") as scratch:
            kernel = os.path.join(scratch, "rules_triton_warm_up.py")
            with open(kernel, "w", encoding="utf-8") as f:
                f.write(_WARM_UP_KERNEL)
            for target in ("cuda:80", "cuda:90"):
                code = handle([f"--kernel_path={kernel}", "--kernel_name=rules_triton_warm_up",
                        "--signature=*fp32:16, *fp32:16, i32, 128", "--grid=cdiv(n, 128)",
                        "--num_warps=4", "--num_stages=1", f"--target={target}",
                        "--symbol=rules_triton_warm_up",
                        f"--out_json={os.path.join(scratch, target[5:] + '.json')}"])
                if code != 0:
                    return code
        # the warm-up's module is not the user's: a kernel file of that name may come later
        sys.modules.pop("rules_triton_warm_up", None)
        import_torch()
        return 0

    return warm_up


def import_torch() -> None:
    """Imports torch, where the environment has it, as a compile's kernel file would.

    Most real kernel files import torch, which takes about 2 s: paid in the parent, once, every
    child shares it instead of paying it again for each new key. A one-shot process has the
    same module: torch is imported in the compile's environment (hermetic_env), before any of
    the user's modules, and build_torch_cuda patches an imported torch.cuda the same way for
    every request. A torch that fails to import is left out altogether, so that each request
    meets the failure at its own import, as a fresh process would.
    """
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return
    from triton_aot.compile.triton_adapter import hermetic_env

    before = set(sys.modules)
    try:
        with hermetic_env():
            import torch  # noqa: F401
    except BaseException:
        for name in set(sys.modules) - before:
            sys.modules.pop(name, None)


# --------------------------------------------------------------------------- the loop

def _run_one_shot(command: Sequence[str], sandbox_dir: str | None) -> tuple:
    """Runs a request as a process of its own; returns (exit code, its output)."""
    proc = subprocess.run(list(command), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, cwd=sandbox_dir or None)
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


KeyOf = Callable[[list, list, Optional[str]], Optional[str]]  # (arguments, inputs, sandbox) -> key


def serve(handle: Handler, stdin_fd: int = 0, stdout_fd: int = 1,
          warm_up: Optional[Callable[[], Optional[int]]] = None,
          key: Optional[KeyOf] = None,
          one_shot: Optional[Callable[[list], list]] = None,
          outputs_of: Optional[OutputsOf] = None) -> int:
    """The worker loop; returns when stdin is closed.

    `warm_up` runs once in this process before the first request (its output is discarded
    unless it fails: raises, or returns a non-zero exit code); requests then run in forked
    children where the platform allows it, a child per `key` (`key(arguments, inputs,
    sandbox_dir)`, from the WorkRequest; without `key` every request has the same one).
    `one_shot(arguments)`: the command line that runs a request as a process of its own, for
    platforms without fork() (and RULES_TRITON_WORKER_ONE_SHOT=1); without it such platforms
    run requests in this process.

    A request that lists its `inputs` (Bazel's do) and has no `sandboxDir` runs in a private
    tree of exactly those files (_PrivateTree), in every one of these modes; `outputs_of(
    arguments)` names the execroot-relative files it writes, which are moved out of the tree.
    """
    outputs_of = outputs_of or (lambda arguments: [])
    protocol = os.fdopen(os.dup(stdout_fd), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, stdout_fd)
    zygote = _start_zygote(handle, protocol, one_shot, outputs_of)
    if warm_up is not None and (zygote is not None or one_shot is None):
        code, output = run_captured(lambda _: warm_up() or 0, [], None)
        if code != 0:
            sys.stderr.write("triton_aot worker: warm-up failed (requests still run, only "
                             f"slower):\n{output}")
    if zygote is not None:
        # Objects that exist now are never collected in the parent again, and children do not
        # collect at all: a collection would write to every page the child shares with us.
        gc.collect()
        gc.freeze()
        zygote.prepare()
    in_process_tree: Optional[_PrivateTree] = None
    for request in read_requests(stdin_fd):
        if request.get("cancel"):
            continue
        arguments = request.get("arguments") or []
        sandbox_dir = request.get("sandboxDir") or None
        inputs = request.get("inputs")
        declared = None if sandbox_dir else _declared_paths(inputs)
        if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
            code, output = 1, "error: WorkRequest.arguments must be a list of strings\n"
        elif zygote is not None:
            request_key = "" if key is None else key(
                arguments, inputs if isinstance(inputs, list) else [], sandbox_dir)
            code, output = zygote.run(arguments, sandbox_dir, request_key, declared)
        elif one_shot is not None and declared is not None:
            with tempfile.TemporaryDirectory(prefix="triton_aot_worker_") as scratch:
                code, output = _PrivateTree(scratch, os.getcwd()).run_one_shot(
                    one_shot(arguments), declared, outputs_of(arguments))
        elif one_shot is not None:
            code, output = _run_one_shot(one_shot(arguments), sandbox_dir)
        elif declared is not None:
            if in_process_tree is None:
                in_process_tree = _PrivateTree(
                    tempfile.mkdtemp(prefix="triton_aot_worker_"), os.getcwd())
            code, output = in_process_tree.run(handle, arguments, declared,
                                               outputs_of(arguments))
        else:
            code, output = run_captured(handle, arguments, sandbox_dir)
        response = {"exitCode": code, "output": output,
                    "requestId": int(request.get("requestId") or 0)}
        protocol.write(json.dumps(response) + "\n")
        protocol.flush()
        if zygote is not None:
            zygote.reap()
            zygote.prepare()
    if zygote is not None:
        zygote.close()
    if in_process_tree is not None:
        shutil.rmtree(os.path.dirname(os.path.dirname(in_process_tree.root)), ignore_errors=True)
    protocol.close()
    return 0


def _start_zygote(handle: Handler, protocol: Any, one_shot: Optional[Callable[[list], list]],
                  outputs_of: OutputsOf) -> Optional["_Zygote"]:
    """The forking parent of the requests' children, where the platform forks and one-shot
    processes are not forced (RULES_TRITON_WORKER_ONE_SHOT=1); else None."""
    forced_one_shot = os.environ.get("RULES_TRITON_WORKER_ONE_SHOT") == "1" and one_shot
    if forced_one_shot or not _can_fork():
        return None
    _install_subprocess_death_signal()
    limit = os.environ.get("RULES_TRITON_WORKER_CHILD_GROWTH_MIB", "")
    children = os.environ.get("RULES_TRITON_WORKER_MAX_CHILDREN", "")
    zygote = _Zygote(handle, close_in_child=[protocol.fileno()],
                     growth_limit_mib=int(limit) if limit.isdigit() else CHILD_GROWTH_LIMIT_MIB,
                     max_children=int(children) if children.isdigit() else MAX_CHILDREN,
                     outputs_of=outputs_of)
    zygote.install_signal_handlers()
    return zygote


def _interpreter_flags() -> list[str]:
    """This interpreter's own flags (-B, -s, as the rules start it) for a one-shot process."""
    flags_ = []
    if sys.flags.dont_write_bytecode:
        flags_.append("-B")
    if sys.flags.no_user_site:
        flags_.append("-s")
    return flags_


def serve_tool(module: str, argv: Sequence[str], run_command_line: Callable[[list], int],
               warm_up_of: Callable[[Handler], Callable[[], int]],
               key_of: Optional[Callable[[list, list, list, Optional[str]], Optional[str]]],
               *, output_flags: Sequence[str]) -> int:
    """`python -m MODULE --persistent_worker STARTUP...`: serves a tool's requests (serve()).

    Each request runs `run_command_line(STARTUP + its arguments)`. `warm_up_of(handle)` is the
    warm-up; `key_of(startup, arguments, inputs, sandbox_dir)` the request's key, or None for a
    child of its own per request (a tool that runs the user's code, not only imports it: the
    code may keep state in its modules that a second run in one process would see).
    `output_flags`: every flag of the tool that names a file it writes (each request runs in a
    tree of its declared inputs, and those files are moved out of it to the execroot).
    """
    startup = [a for a in argv if a != "--persistent_worker"]

    def handle(request_args: list) -> int:
        return run_command_line(startup + list(request_args))

    def one_shot(request_args: list) -> list:
        return [sys.executable, *_interpreter_flags(), "-m", module, *startup, *request_args]

    def key(arguments: list, inputs: list, sandbox_dir: Optional[str]) -> Optional[str]:
        return None if key_of is None else key_of(startup, arguments, inputs, sandbox_dir)

    def outputs_of(request_args: list) -> list:
        from triton_aot.compile.request_key import key_flags

        found = key_flags(startup + list(request_args), output_flags)
        return [path for name in output_flags for path in found[name]]

    return serve(handle, warm_up=warm_up_of(handle), key=key, one_shot=one_shot,
                 outputs_of=outputs_of)
