"""Runs many `python -m TOOL ARGV` (or `python SCRIPT.py ARGV`) invocations, each in a process
forked from this one.

The catalogue runs about 170 failing tool invocations. As fresh interpreters they spend most
of their CPU importing triton, torch and the tools; forked from a parent that imported those
once, each child starts where a fresh process would be after its imports, and everything the
case itself does (its flags, kernel files, environment, working folder, `sys.path`, temp
folder) is set up anew in the child as `python -m` would: the environment is replaced, the
working folder entered, `sys.path` rebuilt from it and PYTHONPATH, and stdout and stderr go to
files at the descriptor level (child processes such as ptxas write there too). The child ends
with the exit code the interpreter would give: SystemExit's, or 1 and the traceback for an
uncaught exception.

Forks happen from the calling thread only, at most `workers` children at once.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

# What the tools import before they read a kernel file: imported once, here.
PRELOAD = ("torch", "triton", "triton.compiler", "triton.backends.nvidia.compiler",
           "triton_aot.compile.compile", "triton_aot.emit_c.link", "triton_aot.capture.tool",
           "triton_aot.compile.autotune_configs", "triton_aot.torch.torch_ops",
           "triton_aot.c_entry.entry", "triton_aot.tuning.tune")


@dataclass(frozen=True)
class Job:
    key: str
    module: str  # a module name, or the path of a script (*.py)
    argv: list
    env: dict
    cwd: Path
    timeout: int = 300


@dataclass(frozen=True)
class Result:
    rc: int
    stdout: str
    stderr: str


def _interpreter_path() -> list[str]:
    """sys.path of a fresh interpreter, without its first entry and PYTHONPATH's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", "import sys, json; print(json.dumps(sys.path[1:]))"],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout)


def interpreter_args(module: str) -> list[str]:
    """The interpreter's arguments that run `module` (a module name or a script's path)."""
    return [module] if module.endswith(".py") else ["-m", module]


def preload() -> list[str]:
    for name in PRELOAD:
        __import__(name)
    return _interpreter_path()


def _child(job: Job, base_path: list[str], out: Path, err: Path) -> None:
    """In the forked child: becomes `python -m job.module *job.argv`; never returns."""
    code = 1
    try:
        for fd, path in ((1, out), (2, err)):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False),
                                                       line_buffering=True)
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, "w", closefd=False),
                                                       line_buffering=True)
        signal.alarm(job.timeout)
        os.environ.clear()
        os.environ.update(job.env)
        os.chdir(job.cwd)
        tempfile.tempdir = None  # read TMPDIR again
        sys.dont_write_bytecode = job.env.get("PYTHONDONTWRITEBYTECODE") == "1"
        extra = [p for p in job.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        script = job.module.endswith(".py")
        first = os.path.dirname(os.path.abspath(job.module)) if script else str(job.cwd)
        sys.path[:] = [first] + extra + base_path
        sys.argv = [job.module] + list(job.argv)
        try:
            if script:
                runpy.run_path(job.module, run_name="__main__")
            else:
                runpy.run_module(job.module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001  (what the interpreter does with it)
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_all(jobs: list[Job], base_path: list[str], scratch: Path, workers: int) -> dict:
    """key -> Result for every job, `workers` children at a time."""
    results: dict[str, Result] = {}
    running: dict[int, tuple[Job, Path, Path]] = {}
    pending = list(jobs)
    scratch.mkdir(parents=True, exist_ok=True)
    while pending or running:
        while pending and len(running) < workers:
            job = pending.pop(0)
            out, err = scratch / f"{job.key}.out", scratch / f"{job.key}.err"
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(job, base_path, out, err)
            running[pid] = (job, out, err)
        pid, status = os.wait()
        if pid not in running:
            continue
        job, out, err = running.pop(pid)
        rc = os.waitstatus_to_exitcode(status)
        results[job.key] = Result(rc, out.read_text(errors="replace"), err.read_text(errors="replace"))
    return results
