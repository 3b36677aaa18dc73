"""Bazel persistent worker, JSON protocol (`--persistent_worker`), as a zygote.

Reads WorkRequest objects from stdin ({"arguments": [...], "requestId": N, ...}) and writes
one WorkResponse line per request to stdout ({"exitCode", "output", "requestId"}).

Why a zygote: Triton's native code keeps memory after every compile (about 0.8 MiB a compile
under Python 3.14, see bench/results/worker.md) and nothing in Python gives it back, so a worker
that compiled in-process grew without bound. Exiting the worker past a memory limit does not
work either (Bazel 7.7.1 sends the next request to the exited worker). So the worker process
(the parent) imports Triton and runs one warm-up compile, once, and never compiles again;
requests run in a child forked from that warm parent. The child serves requests until it has
grown by CHILD_GROWTH_LIMIT_MIB, then exits, taking what Triton leaked with it, and a fresh
child forked from the parent takes over (forked as soon as the old one retires, not when the
next request arrives). The worker's memory is bounded by the parent's (flat) plus one child's
limit, and the fork's cost is shared by the requests one child serves.

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
  * SIGTERM/SIGINT/SIGHUP of the worker kill the running child's process group, then the worker;
  * SIGKILL of the worker cannot be caught, so every process in the tree is made to die with its
    parent: the child and every program spawned through `subprocess` (ptxas, cuobjdump) get
    PR_SET_PDEATHSIG(SIGKILL), which the kernel delivers when their parent dies and which
    survives exec.
- Where fork() or prctl() are missing (not Linux), or with RULES_TRITON_WORKER_IN_PROCESS=1 (the
  benchmark's baseline), requests run in the worker process itself, as before.
  RULES_TRITON_WORKER_CHILD_GROWTH_MIB overrides the limit (tests, benchmarks; 0: one child per
  request).
"""

from __future__ import annotations

import codecs
import ctypes
import gc
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
from typing import Callable, Iterator, Optional, Sequence

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
    if os.environ.get("RULES_TRITON_WORKER_IN_PROCESS") == "1":
        return False
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
# growth lets one child serve many compiles, so that fork and teardown stay a small part of the
# work, unlike a child per request. 0: a fresh child for every request.
CHILD_GROWTH_LIMIT_MIB = 64


class _Zygote:
    """Runs requests in children forked from this (warm) process.

    A child serves requests one after the other until its memory has grown past
    CHILD_GROWTH_LIMIT_MIB; then it is retired (it exits, and its whole process group is killed)
    and the next request goes to a fresh child, forked ahead of time right after the retirement,
    off any request's clock. The parent never compiles after its warm-up, so it never grows.
    """

    def __init__(self, handle: Handler, close_in_child: Sequence[int], growth_limit_mib: int):
        self.handle = handle
        self.close_in_child = list(close_in_child)
        self.growth_limit_kib = growth_limit_mib * 1024
        self.active = None  # (pid, request fd, result fd) of the child that takes the next request
        self.first_rss_kib = 0  # the active child's resident memory after its first request
        self.busy = 0  # the pid of a child running a request, 0 when none
        self.unreaped = []  # retired children, not waited for yet

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, frame):
        if self.active:
            _kill_group(self.active[0])
        os._exit(128 + signum)

    def _fork(self) -> tuple:
        parent = os.getpid()
        request_read, request_write = os.pipe()
        result_read, result_write = os.pipe()
        sys.stdout.flush()  # nothing buffered here may be written again by the child
        sys.stderr.flush()
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
                for fd in self.close_in_child:
                    os.close(fd)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)  # the protocol's stdin belongs to the parent
                os.close(null)
                # Collections would write to pages shared with the parent; requests create
                # little cyclic garbage, and the child's life is bounded by its memory anyway.
                gc.disable()
                while True:
                    request = _read_message(request_read)
                    if request is None:  # retired, or the worker is shutting down
                        break
                    arguments, sandbox_dir = json.loads(request)
                    code, output = run_captured(self.handle, arguments, sandbox_dir)
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
        return pid, request_write, result_read

    def prepare(self) -> None:
        """Forks the child for the next request, if there is none (between requests)."""
        if self.active is None:
            self.active = self._fork()
            self.first_rss_kib = 0

    def retire(self) -> None:
        """The active child exits (its request pipe closes) and nothing of its group survives."""
        if self.active is not None:
            pid, request_write, result_read = self.active
            self.active = None
            os.close(request_write)
            os.close(result_read)
            _kill_group(pid)
            self.unreaped.append(pid)

    def run(self, arguments: Sequence[str], sandbox_dir: str | None) -> tuple:
        self.prepare()
        pid, request_write, result_read = self.active
        self.busy = pid
        try:
            _write_message(request_write, json.dumps([list(arguments), sandbox_dir]).encode())
            payload = _read_message(result_read)
        except BrokenPipeError:
            payload = None  # the child died before reading its request
        finally:
            self.busy = 0
        try:
            code, output, rss_kib = json.loads(payload)
        except (TypeError, ValueError):
            self.retire()
            _, status = os.waitpid(self.unreaped.pop(), 0)
            return 1, ("error: internal error in triton_aot worker: the compile process "
                       f"ended without an answer ({_describe_status(status)})\n")
        if not self.first_rss_kib:
            self.first_rss_kib = rss_kib
        if rss_kib - self.first_rss_kib >= self.growth_limit_kib:
            self.retire()
        return int(code), str(output)

    def reap(self, block: bool = False) -> None:
        """Collects retired children that have exited. Not blocking by default: the kernel tears
        down an exited child's memory (tens of milliseconds) while this process already serves
        the next request; until then the child is a zombie."""
        for pid in list(self.unreaped):
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            if done:
                self.unreaped.remove(pid)

    def close(self) -> None:
        """Retires the active child and waits for every child."""
        self.retire()
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
        return 0

    return warm_up


# --------------------------------------------------------------------------- the loop

def serve(handle: Handler, stdin_fd: int = 0, stdout_fd: int = 1,
          warm_up: Optional[Callable[[], Optional[int]]] = None) -> int:
    """The worker loop; returns when stdin is closed.

    `warm_up` runs once in this process before the first request (its output is discarded
    unless it fails: raises, or returns a non-zero exit code); requests then run in forked
    children where the platform allows it.
    """
    protocol = os.fdopen(os.dup(stdout_fd), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, stdout_fd)
    zygote = None
    if _can_fork():
        _install_subprocess_death_signal()
        limit = os.environ.get("RULES_TRITON_WORKER_CHILD_GROWTH_MIB", "")
        zygote = _Zygote(handle, close_in_child=[protocol.fileno()],
                         growth_limit_mib=int(limit) if limit.isdigit() else CHILD_GROWTH_LIMIT_MIB)
        zygote.install_signal_handlers()
    if warm_up is not None:
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
    for request in read_requests(stdin_fd):
        if request.get("cancel"):
            continue
        arguments = request.get("arguments") or []
        if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
            code, output = 1, "error: WorkRequest.arguments must be a list of strings\n"
        elif zygote is not None:
            code, output = zygote.run(arguments, request.get("sandboxDir") or None)
        else:
            code, output = run_captured(handle, arguments, request.get("sandboxDir") or None)
        response = {"exitCode": code, "output": output,
                    "requestId": int(request.get("requestId") or 0)}
        protocol.write(json.dumps(response) + "\n")
        protocol.flush()
        if zygote is not None:
            zygote.reap()
            zygote.prepare()
    if zygote is not None:
        zygote.close()
    protocol.close()
    return 0
