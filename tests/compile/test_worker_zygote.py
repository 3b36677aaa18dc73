"""The worker compiles in disposable children of a warm parent, and leaves no process behind.

- Requests run in children forked from the warm worker, one child per request key, which keeps
  its state (in production: the user's modules) for the requests of that key only; a child
  retires once it has grown past a limit, after a failed request, or as the least recently used
  past the cap on children, and what its requests left in memory (here: a module-level list a
  handler appends to; in production: Triton's native leak) goes with it. The worker process
  itself never grows.
- A compile stopped half-way, while ptxas runs (a fake ptxas that hangs for one kernel and is
  the real one otherwise), leaves no process behind: not when the worker gets SIGTERM (Bazel
  stopping it), not when it gets SIGKILL (nothing can be caught), and not when only the
  compiling child is killed (the worker then answers with an error and serves the next request).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

import triton_aot

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
REPO = Path(triton_aot.__file__).resolve().parent.parent


def marked_env(marker):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([e["PYTHONPATH"]]
                                                     if e.get("PYTHONPATH") else []))
    # every process of the worker's tree inherits this, ptxas included: /proc finds them all
    e["RULES_TRITON_ZYGOTE_TEST"] = marker
    return e


def processes_with(marker):
    """pid -> command line of every live (not zombie) process whose environment has marker."""
    needle = f"RULES_TRITON_ZYGOTE_TEST={marker}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if state != b"Z":
            found[int(entry)] = cmdline
    return found


def parent_of(pid):
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Worker:

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def send(self, arguments, request_id):
        self.proc.stdin.write((json.dumps({"arguments": arguments, "requestId": request_id})
                               + "\n").encode())
        self.proc.stdin.flush()

    def response(self):
        line = self.proc.stdout.readline()
        assert line, b"".join(self.stderr).decode()
        return json.loads(line)


# --------------------------------------------------------------------------- isolation

HANDLER = textwrap.dedent("""
    import os, sys
    from triton_aot.compile import worker

    kept = []  # what a request leaves behind in its process, like Triton's native leak

    def handle(args):
        kept.append(b"x" * (8 << 20))  # 8 MiB, written: resident
        print(f"pid={os.getpid()} kept={len(kept)}", file=sys.stderr)
        return int(args[0])

    def warm_up():
        kept.append(b"warm")  # done once, in the worker process: every child inherits it

    def key(args, inputs, sandbox_dir):  # the request's second argument, if any ("-": None)
        return None if args[1:] == ["-"] else (args[1] if args[1:] else "")

    def one_shot(args):
        return [sys.executable, "-c", "import os, sys; print(f'pid={os.getpid()} kept=0', "
                "file=sys.stderr); sys.exit(int(sys.argv[1]))", args[0]]

    sys.exit(worker.serve(handle, warm_up=warm_up, key=key, one_shot=one_shot))
""")


def serve_requests(limit_mib, requests, extra_env=()):
    """(worker pid, [(child pid, kept) per request]) from the HANDLER worker; `requests`: the
    arguments of each request (exit code, key)."""
    marker = uuid.uuid4().hex
    env = marked_env(marker)
    env["RULES_TRITON_WORKER_CHILD_GROWTH_MIB"] = str(limit_mib)
    env.update(extra_env)
    w = Worker([sys.executable, "-c", HANDLER], env)
    seen = []
    for i, args in enumerate(requests):
        w.send(args, i)
        r = w.response()
        assert r["requestId"] == i and r["exitCode"] == int(args[0]), r
        pid, kept = r["output"].split()
        seen.append((int(pid[len("pid="):]), int(kept[len("kept="):])))
    w.proc.stdin.close()
    assert w.proc.wait(timeout=30) == 0
    assert w.proc.stdout.read() == b""
    wait_until(lambda: not processes_with(marker), 15, "the worker's tree to exit")
    return w.proc.pid, seen


def test_children_retire_past_the_growth_limit_and_take_their_leaks_along():
    worker_pid, seen = serve_requests(limit_mib=20, requests=[["0"]] * 8)
    assert worker_pid not in {pid for pid, _ in seen}
    children = []
    for pid, kept in seen:
        if not children or children[-1][0] != pid:
            children.append((pid, []))
        children[-1][1].append(kept)
    # each child starts from the warm parent's state (the warm-up's entry, then its first
    # request's) and keeps what its own requests leave, until it has grown by >= 20 MiB: three
    # more requests of 8 MiB, so it serves four
    assert [kept for _, kept in children] == [[2, 3, 4, 5], [2, 3, 4, 5]], seen
    assert len({pid for pid, _ in children}) == 2


def test_growth_limit_zero_is_a_fresh_child_per_request():
    worker_pid, seen = serve_requests(limit_mib=0, requests=[["0"]] * 4)
    assert [kept for _, kept in seen] == [2, 2, 2, 2], seen
    assert len({pid for pid, _ in seen} | {worker_pid}) == 5


def test_children_are_keyed_and_serve_only_their_key():
    """A child serves one key and keeps its state (the user's modules, in production) for the
    requests of that key only; a request of another key never sees it."""
    worker_pid, seen = serve_requests(
        limit_mib=1000, requests=[["0", "a"], ["0", "b"], ["0", "a"], ["0", "b"], ["0", "a"]])
    pids = [pid for pid, _ in seen]
    assert pids[0] == pids[2] == pids[4] and pids[1] == pids[3] and pids[0] != pids[1], seen
    assert [kept for _, kept in seen] == [2, 2, 3, 3, 4], seen
    assert worker_pid not in pids


def test_a_failed_request_retires_its_child_and_no_key_is_a_child_of_its_own():
    """After a failure (a half-done import, in production) the key's next request starts in a
    fresh child, as in a fresh process; a request without a key gets a child of its own."""
    _, seen = serve_requests(
        limit_mib=1000, requests=[["0", "a"], ["1", "a"], ["0", "a"], ["0", "-"], ["0", "-"]])
    pids = [pid for pid, _ in seen]
    assert pids[0] == pids[1] and len(set(pids[1:])) == 4, seen
    assert [kept for _, kept in seen] == [2, 3, 2, 2, 2], seen


def test_least_recently_used_child_retires_past_the_cap():
    _, seen = serve_requests(
        limit_mib=1000, requests=[["0", k] for k in ("a", "b", "a", "c", "a", "b")],
        extra_env={"RULES_TRITON_WORKER_MAX_CHILDREN": "2"})
    pids = [pid for pid, _ in seen]
    # a, b live; a used; c retires b (least recently used); a still lives; b starts afresh
    assert pids[0] == pids[2] == pids[4] and len(set(pids)) == 4, seen
    assert [kept for _, kept in seen] == [2, 2, 3, 2, 4, 2], seen


def test_one_shot_mode_runs_each_request_as_a_process_of_its_own():
    """RULES_TRITON_WORKER_ONE_SHOT=1 (a benchmark's baseline, and platforms without fork):
    every request is a process of its own, started by the handler's one-shot command line."""
    worker_pid, seen = serve_requests(
        limit_mib=1000, requests=[["0", "a"], ["2", "a"], ["0", "a"]],
        extra_env={"RULES_TRITON_WORKER_ONE_SHOT": "1"})
    assert [kept for _, kept in seen] == [0, 0, 0], seen
    assert len({pid for pid, _ in seen} | {worker_pid}) == 4


# --------------------------------------------------------------------------- stopping a compile

FAKE_PTXAS = textwrap.dedent("""\
    #!/bin/sh
    # Hangs on the PTX of add_kernel (the compile the test stops), is the real ptxas otherwise
    # (the worker's warm-up compiles, `--version`).
    for arg in "$@"; do
      case "$arg" in
        *.ptx)
          if grep -q "add_kernel" "$arg"; then
            touch "$RULES_TRITON_ZYGOTE_TEST_STARTED"
            exec sleep 300
          fi ;;
      esac
    done
    exec "$RULES_TRITON_ZYGOTE_TEST_REAL_PTXAS" "$@"
""")

# The worker with triton's ptxas knob pointed at the fake (TRITON_PTXAS_PATH would not do: the
# compile tool clears TRITON_* from the environment of every compile, on purpose).
LAUNCHER = textwrap.dedent("""
    import sys
    import triton.knobs
    triton.knobs.nvidia.ptxas = sys.argv[1]
    from triton_aot.compile.compile import main
    sys.exit(main(sys.argv[2:]))
""")


def add_request(out):
    return [f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
            "--signature=*fp32:16, *fp32:16, *fp32:16, i32, 512", "--grid=cdiv(n, 512)",
            "--num_warps=4", "--num_stages=3", "--target=cuda:80", "--symbol=add_sm80",
            f"--out_json={out}/add.json", f"--out_cubin={out}/add.cubin"]


@pytest.fixture
def hanging_compile(tmp_path):
    """A worker whose compile of add_kernel is stuck in ptxas; yields (worker, marker)."""
    import triton.knobs
    marker = uuid.uuid4().hex
    started = tmp_path / "ptxas_started"
    fake = tmp_path / "ptxas"
    fake.write_text(FAKE_PTXAS)
    fake.chmod(0o755)
    env = marked_env(marker)
    env["RULES_TRITON_ZYGOTE_TEST_STARTED"] = str(started)
    env["RULES_TRITON_ZYGOTE_TEST_REAL_PTXAS"] = triton.knobs.nvidia.ptxas.path
    w = Worker([sys.executable, "-c", LAUNCHER, str(fake), "--persistent_worker"], env)
    try:
        w.send(add_request(tmp_path), 1)
        wait_until(started.exists, 120, "the fake ptxas to start")
        # The fake writes its marker, then execs sleep: on a loaded machine the exec may not have
        # happened yet when the marker appears, so wait for it (bounded) before looking.
        wait_until(lambda: any(c.startswith("sleep ") for c in processes_with(marker).values()),
                   60, "the fake ptxas to be sleeping")
        tree = processes_with(marker)
        # the worker, the compiling child and ptxas (a sleep by now) at least
        assert len(tree) >= 3 and any(c.startswith("sleep ") for c in tree.values()), tree
        yield w, marker
    finally:
        for pid in processes_with(marker):  # whatever a failed test left: not for the next
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        w.proc.wait(timeout=30)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_the_worker_mid_compile_leaves_no_process(hanging_compile, sig):
    w, marker = hanging_compile
    w.proc.send_signal(sig)
    assert w.proc.wait(timeout=30) == -sig if sig == signal.SIGKILL else 128 + sig
    wait_until(lambda: not processes_with(marker), 15,
               f"every process of the worker's tree to exit, left: {processes_with(marker)}")


def test_killing_the_compiling_child_fails_only_that_request(hanging_compile, tmp_path):
    w, marker = hanging_compile
    children = [p for p in processes_with(marker) if p != w.proc.pid and parent_of(p) == w.proc.pid]
    assert len(children) == 1, children  # the compiling child (its ptxas is the child's child)
    os.kill(children[0], signal.SIGKILL)
    r = w.response()
    assert r["requestId"] == 1 and r["exitCode"] == 1
    assert ("error: internal error in the triton_aot persistent worker, not in the kernel or its "
            "deps: the process compiling this request ended without an answer (killed by "
            "SIGKILL") in r["output"], r
    # ptxas died with its parent; only the worker is left, and the fresh child it forked for the
    # next request (a python3 waiting for its arguments)
    def only_worker_and_spare():
        left = processes_with(marker)
        others = set(left) - {w.proc.pid}
        return (w.proc.pid in left and len(others) <= 1
                and all(parent_of(p) == w.proc.pid and sys.executable in left[p] for p in others))
    wait_until(only_worker_and_spare, 15, f"ptxas to exit, left: {processes_with(marker)}")
    # and the worker still compiles (a kernel the fake ptxas passes to the real one)
    out = tmp_path / "next"
    w.send([f"--kernel_path={KERNELS / 'scale.py'}", "--kernel_name=scale_kernel",
            "--signature=*fp32:16, *fp32:16, fp32, i32, 256", "--grid=cdiv(n, 256)",
            "--num_warps=4", "--num_stages=2", "--target=cuda:90", "--symbol=scale_sm90",
            f"--out_json={out}/scale.json"], 2)
    r = w.response()
    assert r == {"exitCode": 0, "output": "", "requestId": 2}, r
    assert json.loads((out / "scale.json").read_text())
    w.proc.stdin.close()
    assert w.proc.wait(timeout=30) == 0
    wait_until(lambda: not processes_with(marker), 15, "the worker's tree to exit")


def test_compile_tool_worker_warms_up(tmp_path):
    """The real worker's warm-up compile succeeds (a failing one would only show as every
    request paying triton's first-compile cost, about 0.35 s, in a child)."""
    w = Worker([sys.executable, "-m", "triton_aot.compile.compile", "--persistent_worker"],
               marked_env(uuid.uuid4().hex))
    w.send(add_request(tmp_path), 1)
    r = w.response()
    assert r == {"exitCode": 0, "output": "", "requestId": 1}, r
    w.proc.stdin.close()
    assert w.proc.wait(timeout=60) == 0
    time.sleep(0.2)  # the stderr reader thread
    stderr = b"".join(w.stderr).decode()
    assert "warm-up failed" not in stderr, stderr
