"""Build-side benchmark of rules_triton (run by tools/run_build_bench; see bench/README.md).

Every scenario runs in a private copy of the working tree (tracked files plus untracked,
not-ignored ones, so uncommitted changes are measured too) under a temporary folder, with its
own Bazel server and output base: the developer's own checkout and Bazel server are never
touched. Bazel's execution log (--execution_log_json_file) tells which spawns ran, where
(one-shot sandboxed process, persistent worker, disk cache) and how long each took.

Scenarios (the examples' libraries: //kernels/... and //app:example_kernels):
  cold       first build in a fresh checkout (new server) and `bazel clean` + build,
             one-shot processes vs --@rules_triton//:persistent_worker
  noop       the same build again, nothing changed
  edit       one kernel file edited (add.py): which actions rerun (only //kernels:add's
             TritonCompile, and what links it, may)
  per_spec   a serial (--jobs=1) clean build: the TritonCompile spawns' own times against the
             floor (bench/build/floor.py: triton.compile in one warm process, same
             specializations, same interpreter)
  disk_cache a second checkout in another folder, sharing --disk_cache with the first:
             every TritonCompile must be a cache hit
  scaling    generated libraries of 8, 32 and 128 specializations of a small kernel:
             wall time and peak memory (RSS of the Bazel server and everything it runs,
             sampled every 0.2 s)

Writes bench/results/build.json, build.md and build.png (the chart needs matplotlib);
tools/run_build_bench then stores build.json gzipped (bench/results_store.py).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
CACHE = Path(os.environ.get("RULES_TRITON_CACHE") or Path.home() / ".cache" / "rules_triton")
OUTPUT_ROOT = CACHE / "bazel_output_root"
ROOTFS = CACHE / "rootfs"
ROOTFS_PYTHON = "/opt/rules_triton/venv/bin/python3"

TARGETS = ["//kernels/...", "//app:example_kernels"]
WORKER_FLAG = "--@rules_triton//:persistent_worker"
ONE_SHOT_FLAG = "--@rules_triton//:persistent_worker=false"
EDIT_FILE = "kernels/add.py"
EDIT_LABEL = "//kernels:add"
SCALING = (8, 32, 128)


def log(msg: str) -> None:
    print(f"[run_build_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def wait_quiet(max_busy: float, max_wait_s: float) -> float:
    """Waits (up to max_wait_s) until processes other than ours use less than max_busy of the
    CPUs (2 s windows); returns the last such fraction."""
    start = time.time()
    busy = foreign_busy()
    while busy > max_busy and time.time() - start < max_wait_s:
        busy = foreign_busy()
    return busy


# ----------------------------------------------------------------------------- checkouts


def working_tree_files(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], check=True, capture_output=True).stdout
    return [f for f in out.decode().split("\0") if f and (repo / f).exists()]


def copy_tree(repo: Path, dest: Path) -> None:
    """The working tree (tracked + untracked, not ignored), without bazel-* links or .git."""
    dest.mkdir(parents=True)
    for rel in working_tree_files(repo):
        src, dst = repo / rel, dest / rel
        if src.is_dir() and not src.is_symlink():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)


class Checkout:
    """A private copy of the repository with its own Bazel server."""

    def __init__(self, root: Path, snapshot: Path):
        self.root = root
        shutil.copytree(snapshot, root, symlinks=True)
        self.ws = root / "examples"
        self.logs = root / ".bench"
        self.logs.mkdir()
        self.bazel = root / "tools" / "bazel"
        self.counter = 0
        self.closed = False

    def run(self, args: list[str], check: bool = True, timeout: float = 1800) -> tuple:
        """Runs tools/bazel in examples/; returns (wall seconds, stderr text)."""
        start = time.perf_counter()
        proc = subprocess.run([str(self.bazel)] + args, cwd=self.ws, capture_output=True,
                              text=True, timeout=timeout)
        wall = time.perf_counter() - start
        if check and proc.returncode != 0:
            raise RuntimeError(f"bazel {' '.join(args)} failed ({proc.returncode}):\n"
                               + proc.stderr[-4000:])
        return wall, proc.stderr

    def build(self, targets: list[str], flags: list[str]) -> dict:
        """One build with an execution log; returns its measurements."""
        self.counter += 1
        exec_log = self.logs / f"exec_{self.counter}.json"
        profile = self.logs / f"profile_{self.counter}.json"
        sampler = Sampler(self.ws)
        sampler.start()
        try:
            wall, err = self.run(["build", f"--execution_log_json_file={exec_log}",
                                  f"--profile={profile}"] + flags + targets)
            (self.logs / f"build_{self.counter}.stderr").write_text(err)
        finally:
            sampler.stop()
        spawns = read_exec_log(exec_log)
        result = {"wall_s": wall, "busy_before": None, **summarize_spawns(spawns),
                  **parse_bazel_summary(err), "phases_s": build_phases(profile)}
        result["memory"] = sampler.result()
        result["_spawns"] = spawns
        return result

    def info(self, key: str) -> str:
        proc = subprocess.run([str(self.bazel), "info", key], cwd=self.ws, capture_output=True,
                              text=True)
        return proc.stdout.strip()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            output_base = self.info("output_base")
            self.run(["clean", "--expunge"], check=False, timeout=300)
            self.run(["shutdown"], check=False, timeout=120)
            if output_base and Path(output_base).parent == OUTPUT_ROOT:
                shutil.rmtree(output_base, ignore_errors=True)  # only a lock file is left
        except Exception as e:  # never leave the benchmark on a cleanup problem
            log(f"cleanup of {self.root}: {e}")


# ----------------------------------------------------------------------------- Bazel output


def read_exec_log(path: Path) -> list[dict]:
    """The SpawnExec objects of a --execution_log_json_file (concatenated JSON objects)."""
    if not path.exists():
        return []
    text = path.read_text()
    decoder, pos, out = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        obj, pos = decoder.raw_decode(text, pos)
        out.append(obj)


def seconds(value) -> float:
    """'3.411s' (protobuf Duration as JSON) -> 3.411."""
    if value in (None, ""):
        return 0.0
    return float(str(value).rstrip("s"))


def start_time(spawn: dict) -> float | None:
    """metrics.startTime ('2026-11-21T17:11:32.716Z') as seconds since the epoch."""
    text = spawn.get("metrics", {}).get("startTime")
    if not text:
        return None
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def summarize_spawns(spawns: list[dict]) -> dict:
    by_mnemonic: dict[str, dict] = {}
    for s in spawns:
        m = by_mnemonic.setdefault(s.get("mnemonic", "?"), {"spawns": 0, "executed": 0,
                                                            "cache_hits": 0, "runners": {}})
        m["spawns"] += 1
        if s.get("cacheHit"):
            m["cache_hits"] += 1
        else:
            m["executed"] += 1
        runner = s.get("runner", "?")
        m["runners"][runner] = m["runners"].get(runner, 0) + 1
    compiles = [s for s in spawns if s.get("mnemonic") == "TritonCompile"]
    executed = [s for s in compiles if not s.get("cacheHit")]
    # from the first TritonCompile start to the last one's end: the Triton part of the build
    spans = [(start_time(s), start_time(s) + seconds(s.get("metrics", {}).get("totalTime")))
             for s in executed if start_time(s) is not None]
    phase = (max(e for _, e in spans) - min(b for b, _ in spans)) if spans else None
    return {
        "triton_compile_phase_s": phase,
        "spawns": by_mnemonic,
        "triton_compile_spawns": len(compiles),
        "triton_compile_executed": len(executed),
        "triton_compile_cache_hits": len(compiles) - len(executed),
        "triton_compile_total_time_s": sum(seconds(s.get("metrics", {}).get("totalTime"))
                                           for s in executed),
    }


def build_phases(profile: Path) -> dict:
    """Seconds per Bazel phase, from the build phase markers of a --profile trace:
    launch (server start), init (module resolution, repo mapping, options), patterns (target
    patterns) and build (loading, analysis and execution, interleaved in Bazel 7)."""
    try:
        events = json.loads(profile.read_text())["traceEvents"]
    except (OSError, ValueError, KeyError):
        return {}
    marks = sorted((e["ts"], e["name"], e.get("dur", 0)) for e in events
                   if e.get("cat") == "build phase marker")
    out = {}
    names = {"Launch Blaze": "launch", "Initialize command": "init",
             "Evaluate target patterns": "patterns",
             "Load, analyze dependencies and build artifacts": "build",
             "Complete build": "complete"}
    for i, (ts, name, dur) in enumerate(marks):
        key = names.get(name, name)
        if dur:
            out[key] = dur / 1e6
        elif i + 1 < len(marks):
            out[key] = (marks[i + 1][0] - ts) / 1e6
    out.pop("complete", None)
    return out


def parse_bazel_summary(stderr: str) -> dict:
    out = {}
    m = re.search(r"Elapsed time: ([0-9.]+)s, Critical Path: ([0-9.]+)s", stderr)
    if m:
        out["bazel_elapsed_s"], out["critical_path_s"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"INFO: (\d+) process(?:es)?(?:: (.*))?\.", stderr)
    if m:
        out["processes"] = int(m.group(1))
        out["processes_detail"] = (m.group(2) or "").strip()
    return out


# ----------------------------------------------------------------------------- memory, CPU

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _proc_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (ppid, rss bytes, utime + stime ticks) for every readable process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            table[int(entry)] = (int(fields[1]), int(fields[21]) * PAGE,
                                 int(fields[11]) + int(fields[12]))
        except (OSError, ValueError, IndexError):
            continue
    return table


def cpu_busy(seconds: float = 2.0) -> float:
    """Fraction of all CPUs busy over `seconds` (from /proc/stat)."""
    def read():
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = f[3] + (f[4] if len(f) > 4 else 0)
        return sum(f), idle
    t0, i0 = read()
    time.sleep(seconds)
    t1, i1 = read()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def _subtree(table: dict, root: int) -> set:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, stack = set(), [root]
    while stack:
        p = stack.pop()
        out.add(p)
        stack.extend(children.get(p, []))
    return out


def _our_bazel_servers() -> set:
    """The Bazel servers of our temporary checkouts (they idle between builds)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if b"--workspace_directory=" in cmdline and b"rules_triton_bench_" in cmdline:
                out.add(int(entry))
    return out


def foreign_busy(seconds: float = 2.0) -> float:
    """Fraction of the CPUs that processes other than this script's (and its checkouts' Bazel
    servers) used over `seconds`."""
    def foreign_ticks():
        table = _proc_table()
        mine = _subtree(table, os.getpid())
        for server in _our_bazel_servers():
            mine |= _subtree(table, server)
        return {pid: t for pid, (_, _, t) in table.items() if pid not in mine}
    before = foreign_ticks()
    time.sleep(seconds)
    after = foreign_ticks()
    used = sum(t - before.get(pid, 0) for pid, t in after.items())
    return used / TICK / (seconds * (os.cpu_count() or 1))


def _find_server(workspace: Path) -> int | None:
    needle = f"--workspace_directory={workspace}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if needle + b"\0" in cmdline + b"\0" and b"com.google.devtools.build" in cmdline:
            return int(entry)
    return None


class Sampler:
    """During one build, every 0.2 s: peak RSS of the checkout's Bazel server and of everything
    below it (actions, workers, ptxas), and the CPU time that other processes (other people's
    builds on a shared machine) used meanwhile, a measure of how disturbed the timing was."""

    def __init__(self, workspace: Path, period: float = 0.2):
        self.workspace = workspace
        self.period = period
        self.peak_total = self.peak_server = self.peak_action = 0
        self.samples = 0
        self.foreign_ticks = 0
        self._last_ticks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._start = 0.0
        self.elapsed = 0.0

    def start(self):
        self._start = time.time()
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.elapsed = time.time() - self._start

    def _loop(self):
        server = None
        first = True
        while not self._stop.is_set():
            if server is None or not Path(f"/proc/{server}").exists():
                server = _find_server(self.workspace)
            self._sample(server, first)
            first = False
            self._stop.wait(self.period)

    def _sample(self, server: int | None, first: bool):
        table = _proc_table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)

        def subtree(pid: int) -> set:
            out, stack = set(), [pid]
            while stack:
                p = stack.pop()
                out.add(p)
                stack.extend(children.get(p, []))
            return out

        mine = subtree(os.getpid())  # this script, its tools/bazel client
        if server is not None and server in table:
            ours = subtree(server)
            mine |= ours
            server_rss = table[server][1]
            action_rss = [sum(table[p][1] for p in subtree(c)) for c in children.get(server, [])]
            self.peak_server = max(self.peak_server, server_rss)
            self.peak_action = max([self.peak_action] + action_rss)
            self.peak_total = max(self.peak_total, server_rss + sum(action_rss))
            self.samples += 1
        for pid, (_, _, ticks) in table.items():
            last = self._last_ticks.get(pid)
            if pid not in mine and not first:
                # a process born since the last sample counts from zero
                self.foreign_ticks += ticks - (last if last is not None else 0)
            self._last_ticks[pid] = ticks

    def result(self) -> dict:
        mib = 1 << 20
        return {"peak_total_rss_mib": round(self.peak_total / mib, 1),
                "peak_server_rss_mib": round(self.peak_server / mib, 1),
                "peak_single_child_rss_mib": round(self.peak_action / mib, 1),
                "samples": self.samples,
                "foreign_cpu_s": round(self.foreign_ticks / TICK, 1),
                "foreign_cpu_fraction": round(self.foreign_ticks / TICK
                                              / max(1e-9, self.elapsed * (os.cpu_count() or 1)), 3)}


# ----------------------------------------------------------------------------- statistics


def stats(values: list[float]) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0}
    return {"n": len(values), "median": statistics.median(values), "min": min(values),
            "max": max(values), "values": values}


def strip_private(obj):
    if isinstance(obj, dict):
        return {k: strip_private(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [strip_private(v) for v in obj]
    return obj


# ----------------------------------------------------------------------------- the floor


def tool_python_argv() -> list[str]:
    """How to run the interpreter the TritonCompile actions use, from the host."""
    host_python = CACHE / "host-python.path"
    if shutil.which("bazel") and host_python.exists():  # tools/bazel's host-Bazel mode
        return [host_python.read_text().strip()]
    holder = (CACHE / "mntns.pid").read_text().strip()
    # the mount namespace tools/bazel keeps for the rootfs: the checkouts are mounted there
    return ["nsenter", "--target", holder, "--mount", "chroot", str(ROOTFS), "/usr/bin/env", "-i",
            "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8", ROOTFS_PYTHON]


def run_floor(co: Checkout, rounds: int) -> dict:
    meta_dir = co.logs / "metadata"
    meta_dir.mkdir(exist_ok=True)
    bin_dir = Path(co.info("bazel-bin"))
    for p in sorted((bin_dir / "kernels" / "_triton").glob("*/*.json")):
        shutil.copy(p, meta_dir / p.name)
    metas = sorted(meta_dir.glob("*.json"))
    params = sorted((bin_dir / "kernels" / "_triton").glob("*/*.c-0.params"))
    execroot = co.info("execution_root")
    out = co.logs / "floor.json"
    argv = tool_python_argv() + [str(co.root / "bench" / "build" / "floor.py"),
                                 f"--kernels_dir={co.ws / 'kernels'}", f"--rounds={rounds}",
                                 f"--out={out}", f"--execroot={execroot}", "--params"]
    argv += [str(p) for p in params] + ["--"] + [str(p) for p in metas]
    subprocess.run(argv, check=True)
    return json.loads(out.read_text())


# ----------------------------------------------------------------------------- scenarios


def edit_kernel(path: Path, k: int) -> str:
    """A real change to the kernel (new code, not only a new hash): out = x + y + k."""
    text = path.read_text()
    if "x + y" in text:  # the last occurrence: the kernel's store, not the docstring
        head, _, tail = text.rpartition("x + y")
        path.write_text(f"{head}x + y + {k}.0{tail}")
        return f"'x + y' -> 'x + y + {k}.0'"
    path.write_text(text + f"\n# edited by run_build_bench ({k})\n")
    return "comment appended"


def per_spec_rows(build: dict, floor: dict) -> dict:
    """Our TritonCompile spawn times against the floor, specialization by specialization."""
    floor_s = floor["per_spec_s"]
    spawns = [s for s in build["_spawns"] if s.get("mnemonic") == "TritonCompile"
              and not s.get("cacheHit")]
    spawns.sort(key=lambda s: s.get("metrics", {}).get("startTime", ""))
    ours = {}
    for s in spawns:
        flagfile = s["commandArgs"][-1]
        symbol = Path(flagfile.split("=", 1)[-1]).name.split(".")[0]
        ours[symbol] = seconds(s["metrics"].get("totalTime"))
    tool_s = floor.get("tool_per_spec_s") or {}
    common = [sym for sym in ours if sym in floor_s]
    first = [sym for sym in ours][:1]  # the first spawn (a worker's start-up, if any)
    total_ours = sum(ours[s] for s in common)
    total_floor = sum(floor_s[s] for s in common)
    steady = [s for s in common if s not in first]
    return {
        "specializations": len(common),
        "floor_per_spec_s": total_floor / len(common),
        "ours_per_spec_s": total_ours / len(common),
        "ratio": total_ours / total_floor,
        "steady_ratio": (sum(ours[s] for s in steady) / sum(floor_s[s] for s in steady))
        if steady else None,
        "build_wall_per_spec_s": build["wall_s"] / len(common),
        "tool_in_process_per_spec_s": (sum(tool_s[s] for s in common) / len(common))
        if all(s in tool_s for s in common) else None,
        "foreign_cpu_fraction": build.get("memory", {}).get("foreign_cpu_fraction"),
        "per_symbol": {s: {"ours_s": ours[s], "floor_s": floor_s[s], "tool_s": tool_s.get(s)}
                       for s in common},
    }


def scaling_build_file(ns: tuple) -> str:
    lines = ['load("@rules_cc//cc:defs.bzl", "cc_shared_library")',
             'load("@rules_triton//rules:defs.bzl", "triton_algo", "triton_kernel_library")', ""]
    for n in ns:
        algos = n // 4  # x 2 specializations x 2 targets
        lines += [
            "triton_kernel_library(",
            f'    name = "s{n}",',
            '    srcs = ["scaled_add.py"],',
            '    kernel = "scaled_add_kernel",',
            '    signature = "*fp32, *fp32, *fp32, i32, BLOCK, C",',
            '    specializations = ["x_ptr:16 y_ptr:16 out_ptr:16 n:16", ""],',
            "    algos = [triton_algo(constexprs = {\"BLOCK\": 1024, \"C\": c}, num_warps = 4)"
            f" for c in range(1, {algos + 1})],",
            '    grid = "cdiv(n, {BLOCK}), 1, 1",',
            "    num_stages = 1,",
            '    targets = ["cuda:80", "cuda:90"],',
            ")",
            f'cc_shared_library(name = "lib_s{n}", deps = [":s{n}"])',
            "",
        ]
    return "\n".join(lines)


SCALED_ADD = '''"""out = x + C * y: one small kernel, C a constexpr (one algo per value)."""
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, C: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + C * y, mask=mask)
'''


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="rules_triton_bench_", dir=args.tmp))
        self.disk_cache = OUTPUT_ROOT / f"bench_disk_cache_{os.getpid()}"
        self.results: dict = {"errors": {}}
        self.checkouts: list[Checkout] = []
        self.snapshot: Path | None = None
        self.waited = 0.0

    def checkout(self, name: str) -> Checkout:
        if self.snapshot is None:
            # one snapshot of the working tree for every checkout: others may be editing it
            self.snapshot = self.tmp / "snapshot"
            copy_tree(REPO, self.snapshot)
        log(f"copying the working tree snapshot to {self.tmp / name}")
        co = Checkout(self.tmp / name, self.snapshot)
        self.checkouts.append(co)
        return co

    def quiet(self):
        budget = max(0.0, self.args.max_total_wait - self.waited)
        start = time.time()
        busy = wait_quiet(self.args.max_busy, min(self.args.max_wait, budget))
        self.waited += time.time() - start
        if busy > self.args.max_busy:
            log(f"other processes keep {100 * busy:.0f}% of the CPUs busy: measuring anyway")
        return busy

    def timed_build(self, co: Checkout, flags: list[str], **kw) -> dict:
        load = self.quiet()
        result = co.build(TARGETS, flags, **kw)
        result["busy_before"] = load
        log(f"  build {' '.join(flags) or '(default flags)'}: {result['wall_s']:.1f} s, "
            f"TritonCompile executed {result['triton_compile_executed']}/"
            f"{result['triton_compile_spawns']}")
        return result

    def mode_scenarios(self, mode: str, flags: list[str]) -> dict:
        """cold (fresh + clean builds), noop, edit, serial build for the per-spec cost."""
        reps = self.args.reps
        co = self.checkout(mode)
        out: dict = {}
        # Both fresh builds write a disk cache (same overhead); the one-shot one is shared with
        # the second checkout of the disk_cache scenario.
        cache = self.disk_cache if mode == "one_shot" else Path(f"{self.disk_cache}_{mode}")
        extra = [f"--disk_cache={cache}"]
        log(f"[{mode}] cold build in a fresh checkout (new Bazel server)")
        fresh = self.timed_build(co, flags + extra)
        out["fresh"] = fresh
        if mode == "one_shot":
            self.fresh_one_shot = fresh

        noop = []
        for i in range(reps):
            noop.append(self.timed_build(co, flags))
        out["noop"] = noop

        edits = []
        for i in range(reps):
            how = edit_kernel(co.ws / EDIT_FILE, i + 1)
            r = self.timed_build(co, flags)
            labels = {}
            for s in r["_spawns"]:
                if not s.get("cacheHit"):
                    key = f"{s.get('targetLabel', '?')} {s.get('mnemonic', '?')}"
                    labels[key] = labels.get(key, 0) + 1
            r["edit"] = how
            r["executed_by_target"] = labels
            foreign = [s for s in r["_spawns"] if s.get("mnemonic") == "TritonCompile"
                       and not s.get("cacheHit") and s.get("targetLabel") != EDIT_LABEL]
            r["foreign_triton_compiles"] = len(foreign)
            edits.append(r)
        out["edit"] = edits

        clean = []
        for i in range(max(reps - 1, 1)):
            co.run(["clean"])
            clean.append(self.timed_build(co, flags))
        out["clean"] = clean

        co.run(["clean"])
        log(f"[{mode}] serial clean build (--jobs=1) for the per-specialization cost")
        out["serial"] = self.timed_build(co, flags + ["--jobs=1"])
        if mode == "one_shot" and not self.args.skip_floor:
            # the floor needs the metadata of the built specializations: take them now
            self.quiet()
            log("floor: triton.compile in one warm process, same specializations")
            try:
                self.floor = run_floor(co, self.args.floor_rounds)
            except Exception as e:
                self.results["errors"]["floor"] = repr(e)
                self.floor = None
        co.close()
        shutil.rmtree(f"{self.disk_cache}_worker", ignore_errors=True)
        return out

    def disk_cache_scenario(self) -> dict:
        co = self.checkout("second_checkout")
        log("[disk_cache] build in a second checkout with the shared --disk_cache")
        r = self.timed_build(co, [f"--disk_cache={self.disk_cache}"])
        co.close()
        compiles = r["triton_compile_spawns"]
        return {"build": r, "triton_compile_spawns": compiles,
                "triton_compile_cache_hits": r["triton_compile_cache_hits"],
                "hit_rate": r["triton_compile_cache_hits"] / compiles if compiles else None}

    def scaling_scenario(self) -> dict:
        """One package per mode (so that no build reuses another's outputs), built in a warm
        server without `clean`: 8, then 32, then 128 new specializations."""
        co = self.checkout("scaling")
        ns = tuple(n for n in SCALING if n <= self.args.max_scaling)
        modes = (("one_shot", [ONE_SHOT_FLAG]), ("worker", [WORKER_FLAG]))
        for mode, _ in modes:
            pkg = co.ws / f"bench_scaling_{mode}"
            pkg.mkdir()
            (pkg / "scaled_add.py").write_text(SCALED_ADD)
            (pkg / "BUILD.bazel").write_text(scaling_build_file(ns))
        rows = []
        for mode, flags in modes:
            # start the server / analyse the configuration first: not part of the scaling
            co.run(["build"] + flags + [f"//bench_scaling_{mode}:scaled_add.py"])
            for n in ns:
                self.quiet()
                r = co.build([f"//bench_scaling_{mode}:lib_s{n}"], flags)
                log(f"  [scaling] {mode} {n} specializations: {r['wall_s']:.1f} s, "
                    f"peak RSS {r['memory']['peak_total_rss_mib']} MiB")
                rows.append({"mode": mode, "specializations": n, "wall_s": r["wall_s"],
                             "triton_compile_executed": r["triton_compile_executed"],
                             "triton_compile_phase_s": r.get("triton_compile_phase_s"),
                             "phases_s": r.get("phases_s"),
                             "wall_per_spec_s": r["wall_s"] / n, **r["memory"]})
        co.close()
        return {"rows": rows}

    def run(self) -> dict:
        t0 = time.time()
        self.floor = None
        res = self.results
        res["format"] = "rules_triton.bench.build.v1"
        res["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        res["machine"] = machine_info()
        res["source"] = source_info()
        res["config"] = {"targets": TARGETS, "reps": self.args.reps,
                         "floor_rounds": self.args.floor_rounds, "max_busy": self.args.max_busy}
        modes = {"one_shot": [ONE_SHOT_FLAG], "worker": [WORKER_FLAG]}
        res["modes"] = {}
        for mode, flags in modes.items():
            try:
                res["modes"][mode] = self.mode_scenarios(mode, flags)
            except Exception as e:
                log(f"[{mode}] failed: {e}")
                res["errors"][mode] = repr(e)[-4000:]
        if self.floor is not None:
            res["floor"] = self.floor
            res["per_spec"] = {}
            for mode in modes:
                if mode in res["modes"]:
                    res["per_spec"][mode] = per_spec_rows(res["modes"][mode]["serial"],
                                                          self.floor)
        if not self.args.skip_disk_cache:
            try:
                res["disk_cache"] = self.disk_cache_scenario()
            except Exception as e:
                res["errors"]["disk_cache"] = repr(e)[-4000:]
        if not self.args.skip_scaling:
            try:
                res["scaling"] = self.scaling_scenario()
            except Exception as e:
                res["errors"]["scaling"] = repr(e)[-4000:]
        res["summary"] = summarize(res)
        res["total_runtime_s"] = time.time() - t0
        res["waited_for_quiet_s"] = self.waited
        return res

    def cleanup(self):
        for co in self.checkouts:
            co.close()
            unmount_checkout(co.root)
        shutil.rmtree(self.disk_cache, ignore_errors=True)
        shutil.rmtree(f"{self.disk_cache}_worker", ignore_errors=True)
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)


def unmount_checkout(root: Path) -> None:
    """Undoes the bind mount tools/bazel made for a checkout in its rootfs mount namespace."""
    pid_file = CACHE / "mntns.pid"
    if not pid_file.exists() or shutil.which("bazel"):
        return
    mount_point = Path(str(ROOTFS) + str(root))
    holder = pid_file.read_text().strip()
    subprocess.run(["nsenter", "--target", holder, "--mount", "umount", "-l", str(mount_point)],
                   capture_output=True)
    # the empty mount point folders tools/bazel created inside the rootfs
    tmp_root = Path(str(ROOTFS) + str(root.parent))
    for d in (mount_point, tmp_root):
        try:
            d.rmdir()
        except OSError:
            pass


def machine_info() -> dict:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) // 1024
    return {"cpus": os.cpu_count(), "cpu_model": cpu, "mem_mib": mem,
            "kernel": platform.release(), "loadavg_at_start": loadavg()}


def source_info() -> dict:
    def git(*a):
        p = subprocess.run(["git", "-C", str(REPO)] + list(a), capture_output=True, text=True)
        return p.stdout.strip()
    status = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"),
            "uncommitted_changes": len([l for l in status.splitlines() if l.strip()])}


# ----------------------------------------------------------------------------- summary


def summarize(res: dict) -> dict:
    """The numbers of the Markdown table (medians over repetitions; min..max as spread)."""
    s: dict = {}
    modes = res.get("modes", {})
    for mode, m in modes.items():
        if not all(k in m for k in ("fresh", "clean", "noop", "edit", "serial")):
            continue
        row = {}
        row["fresh_s"] = m["fresh"]["wall_s"]
        row["clean"] = stats([b["wall_s"] for b in m["clean"]])
        row["noop"] = stats([b["wall_s"] for b in m["noop"]])
        row["noop_actions"] = [b.get("processes") for b in m["noop"]]
        row["edit"] = stats([b["wall_s"] for b in m["edit"]])
        row["edit_compiles"] = [b["triton_compile_executed"] for b in m["edit"]]
        row["edit_foreign_compiles"] = sum(b["foreign_triton_compiles"] for b in m["edit"])
        row["clean_phase"] = stats([b.get("triton_compile_phase_s") for b in m["clean"]])
        row["fresh_phase_s"] = m["fresh"].get("triton_compile_phase_s")
        row["fresh_bazel_phases_s"] = m["fresh"].get("phases_s")
        row["clean_bazel_phases_s"] = m["clean"][0].get("phases_s") if m["clean"] else None
        row["serial_s"] = m["serial"]["wall_s"]
        row["compile_actions"] = m["fresh"]["triton_compile_spawns"]
        row["runners"] = m["fresh"]["spawns"].get("TritonCompile", {}).get("runners")
        mems = [b["memory"]["peak_total_rss_mib"] for b in [m["fresh"]] + m["clean"]
                if "memory" in b]
        builds = [m["fresh"], m["serial"]] + m["clean"] + m["noop"] + m["edit"]
        foreign = [b["memory"]["foreign_cpu_fraction"] for b in builds if "memory" in b]
        row["foreign_cpu_fraction_mean"] = sum(foreign) / len(foreign) if foreign else None
        row["foreign_cpu_fraction_max"] = max(foreign) if foreign else None
        row["peak_total_rss_mib"] = max(mems) if mems else None
        s[mode] = row
    if "one_shot" in s and "worker" in s:
        s["worker_vs_one_shot_clean"] = s["worker"]["clean"]["median"] / s["one_shot"]["clean"]["median"]
    return s


def fmt_stat(st: dict, digits: int = 1) -> str:
    if not st or not st.get("n"):
        return "n/a"
    if st["n"] == 1:
        return f"{st['median']:.{digits}f}"
    return f"{st['median']:.{digits}f} ({st['min']:.{digits}f}-{st['max']:.{digits}f})"


def markdown(res: dict) -> str:
    s = res.get("summary", {})
    m = res.get("machine", {})
    lines = [
        "# Build benchmark",
        "",
        f"Machine: {m.get('cpus')} CPUs ({m.get('cpu_model')}), {m.get('mem_mib', 0) // 1024} GiB; "
        f"commit {res.get('source', {}).get('commit', '?')[:12]}"
        f" (+{res.get('source', {}).get('uncommitted_changes', 0)} uncommitted files); "
        f"{res.get('started')}. Command: `tools/run_build_bench`.",
        "",
        "Wall times in seconds: median (min-max) over the repetitions "
        f"(n = {res.get('config', {}).get('reps')} unless noted). Targets: "
        + ", ".join(f"`{t}`" for t in TARGETS) + ".",
        "",
        "| scenario | one-shot | worker | worker / one-shot |",
        "|---|---|---|---|",
    ]
    o, w = s.get("one_shot"), s.get("worker")

    def row(name, key, digits=1, n1=False):
        a = fmt_stat(o[key], digits) if o and isinstance(o.get(key), dict) else (
            f"{o[key]:.{digits}f}" if o and o.get(key) is not None else "n/a")
        b = fmt_stat(w[key], digits) if w and isinstance(w.get(key), dict) else (
            f"{w[key]:.{digits}f}" if w and w.get(key) is not None else "n/a")
        ratio = "n/a"
        try:
            av = o[key]["median"] if isinstance(o[key], dict) else o[key]
            bv = w[key]["median"] if isinstance(w[key], dict) else w[key]
            ratio = f"{bv / av:.2f}x"
        except Exception:
            pass
        lines.append(f"| {name} | {a} | {b} | {ratio} |")

    if o or w:
        n = (o or w)["compile_actions"]
        row(f"cold build, fresh checkout + new server ({n} TritonCompile; n = 1)", "fresh_s")
        row(f"cold build after `bazel clean` (n = {(o or w)['clean']['n']})", "clean")
        row("  of which TritonCompile phase (first start to last end)", "clean_phase")
        row("no-op rebuild", "noop", 2)
        row(f"rebuild after editing `{EDIT_FILE}`", "edit")
        row("serial clean build (`--jobs=1`; n = 1)", "serial_s")
        row("peak RSS of Bazel + actions, cold builds (MiB)", "peak_total_rss_mib", 0)
        lines.append("")
        fr = [r["foreign_cpu_fraction_mean"] for r in (o, w) if r and r.get("foreign_cpu_fraction_mean") is not None]
        frm = [r["foreign_cpu_fraction_max"] for r in (o, w) if r and r.get("foreign_cpu_fraction_max") is not None]
        if fr:
            lines.append(f"- Shared machine: other people's processes used on average "
                         f"{100 * sum(fr) / len(fr):.0f}% (at most {100 * max(frm):.0f}%) of the CPUs "
                         "during these builds (sampled from /proc); timings are inflated by that much "
                         "at worst.")
        for name, r in (("one-shot", o), ("worker", w)):
            ph = (r or {}).get("fresh_bazel_phases_s")
            if ph:
                lines.append(f"- {name}, fresh checkout: Bazel server start {ph.get('launch', 0):.1f} s, "
                             f"command set-up (modules, repositories) {ph.get('init', 0):.1f} s, "
                             f"target patterns {ph.get('patterns', 0):.1f} s, loading + analysis + "
                             f"execution {ph.get('build', 0):.1f} s, of which the TritonCompile "
                             f"phase {r['fresh_phase_s'] or 0:.1f} s.")
        for name, r in (("one-shot", o), ("worker", w)):
            if r:
                lines.append(f"- {name}: no-op rebuilds ran {r['noop_actions']} processes (Bazel's "
                             "internal workspace-status action only); the edit "
                             f"reran {r['edit_compiles']} TritonCompile actions (all of "
                             f"`{EDIT_LABEL}`), {r['edit_foreign_compiles']} of other libraries; "
                             f"runners {r['runners']}.")
    ps = res.get("per_spec")
    if ps:
        f = res["floor"]
        lines += ["", "## Per-specialization cost against the floor", "",
                  f"Floor: `triton.compile` in one warm Python process (Python {f['python']}, "
                  f"triton {f['triton']}, the actions' interpreter), fresh cache per compile, "
                  f"median of {f['rounds']} rounds per specialization. Ours: `totalTime` of each "
                  "TritonCompile spawn in a serial (`--jobs=1`) clean build (execution log). "
                  "Target: worker <= 1.25x.", "",
                  "| mode | specializations | floor s/spec | our tool in-process s/spec | Bazel action s/spec | **ratio to floor** | ratio without the first spawn | build wall / spec |",
                  "|---|---|---|---|---|---|---|---|"]
        for mode, r in ps.items():
            steady = f"{r['steady_ratio']:.2f}x" if r.get("steady_ratio") else "n/a"
            tool = r.get("tool_in_process_per_spec_s")
            tool = f"{tool:.3f}" if tool else "n/a"
            lines.append(f"| {mode.replace('_', '-')} | {r['specializations']} | "
                         f"{r['floor_per_spec_s']:.3f} | {tool} | {r['ours_per_spec_s']:.3f} | "
                         f"**{r['ratio']:.2f}x** | {steady} | {r['build_wall_per_spec_s']:.3f} |")
        lines += ["", "`our tool in-process`: `triton_aot.compile.compile` with the actions' exact arguments, "
                  "timed in the floor's warm process, interleaved with it (the tool's own overhead: "
                  "kernel import, hermetic environment, IR and C outputs). `ratio without the first "
                  "spawn`: leaves out the first action (a worker's start-up, `import triton`)."]
        first_sym = next(iter(f["all_times_s"]), None)
        if first_sym and f.get("warmup_compile_s"):
            lines += ["", f"Where a one-shot process's time goes: `import triton` took "
                      f"{f['import_triton_s']:.2f} s in the floor's process, and its first compile "
                      f"({first_sym}) {f['warmup_compile_s']:.2f} s against "
                      f"{f['per_spec_s'][first_sym]:.2f} s once warm: every one-shot action pays "
                      "both, a worker pays them once."]
    dc = res.get("disk_cache")
    if dc:
        lines += ["", "## Shared disk cache, second checkout", "",
                  f"A second copy of the repository in another folder, `--disk_cache` shared with "
                  f"the first build: **{dc['triton_compile_cache_hits']}/{dc['triton_compile_spawns']}"
                  f" TritonCompile actions were cache hits ({100 * (dc['hit_rate'] or 0):.0f}%)**; "
                  f"build wall time {dc['build']['wall_s']:.1f} s (new Bazel server included).", ""]
    sc = res.get("scaling")
    if sc:
        lines += ["", "## Scaling (n = 1 per cell)", "",
                  "Generated libraries of one small kernel (`x + C * y`, one algo per C, "
                  "2 specializations, 2 targets), each linked into a shared library, built one "
                  "after the other (8, 32, 128) in a warm Bazel server, one package per mode; the "
                  "workers started by the first build stay up for the next ones. "
                  "Peak RSS: Bazel server plus every process it runs, sampled every 0.2 s.", "",
                  "| mode | specializations | wall s | wall s / spec | TritonCompile phase s | peak RSS total MiB | peak server RSS MiB | peak single action/worker MiB | others' CPU share |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in sc["rows"]:
            lines.append(f"| {r['mode'].replace('_', '-')} | {r['specializations']} | "
                         f"{r['wall_s']:.1f} | {r['wall_per_spec_s']:.2f} | "
                         f"{r.get('triton_compile_phase_s') or 0:.1f} | "
                         f"{r['peak_total_rss_mib']:.0f} | {r['peak_server_rss_mib']:.0f} | "
                         f"{r['peak_single_child_rss_mib']:.0f} | "
                         f"{100 * r.get('foreign_cpu_fraction', 0):.0f}% |")
    if res.get("errors"):
        lines += ["", "## Errors", ""] + [f"- {k}: `{v[:300]}`" for k, v in res["errors"].items()]
    lines.append("")
    return "\n".join(lines)


def chart(res: dict, path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"no chart: {e}"
    s = res.get("summary", {})
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    colors = {"one_shot": "#d62728", "worker": "#1f77b4", "floor": "#7f7f7f"}

    ax = axes[0][0]
    names = [("fresh_s", "cold,\nfresh checkout"), ("clean", "cold,\nafter clean"),
             ("edit", "edit\nadd.py"), ("noop", "no-op")]
    width = 0.38
    for i, mode in enumerate(("one_shot", "worker")):
        if mode not in s:
            continue
        vals, lo, hi = [], [], []
        for key, _ in names:
            v = s[mode][key]
            if isinstance(v, dict):
                vals.append(v["median"]); lo.append(v["median"] - v["min"]); hi.append(v["max"] - v["median"])
            else:
                vals.append(v); lo.append(0); hi.append(0)
        xs = [x + (i - 0.5) * width for x in range(len(names))]
        ax.bar(xs, vals, width, yerr=[lo, hi], capsize=3, color=colors[mode],
               label=mode.replace("_", "-"))
        for x, v in zip(xs, vals):
            ax.text(x, v, f"{v:.1f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(names)), [n for _, n in names])
    ax.set_ylabel("wall time (s)")
    ax.set_title("Examples' libraries (median, bars: min-max)")
    ax.legend()

    ax = axes[0][1]
    ps = res.get("per_spec", {})
    if ps:
        first = next(iter(ps.values()))
        labels, vals, cols, notes = ["floor:\ntriton.compile"], [first["floor_per_spec_s"]], [colors["floor"]], [""]
        if first.get("tool_in_process_per_spec_s"):
            labels.append("our tool,\nin-process")
            vals.append(first["tool_in_process_per_spec_s"])
            cols.append("#bcbd22")
            notes.append(f"\n{vals[-1] / vals[0]:.2f}x")
        for m, r in ps.items():
            labels.append(f"Bazel action,\n{m.replace('_', '-')}")
            vals.append(r["ours_per_spec_s"])
            cols.append(colors.get(m, "k"))
            notes.append(f"\n{r['ratio']:.2f}x")
        ax.bar(range(len(labels)), vals, color=cols)
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        for i, (v, note) in enumerate(zip(vals, notes)):
            ax.text(i, v, f"{v:.2f} s{note}", ha="center", va="bottom", fontsize=8)
        floor = vals[0]
        ax.axhline(1.25 * floor, color="k", ls="--", lw=1)
        ax.text(-0.45, 1.25 * floor * 1.01, "1.25x floor (target, worker)", ha="left",
                va="bottom", fontsize=7)
        ax.set_ylim(0, max(vals) * 1.3)
    ax.set_ylabel("seconds per specialization")
    ax.set_title("Per-specialization cost, serial build vs triton.compile")

    sc = res.get("scaling", {}).get("rows", [])
    for ax, key, ylabel, title in ((axes[1][0], "wall_s", "wall time (s)", "Scaling: wall time"),
                                   (axes[1][1], "peak_total_rss_mib", "peak RSS (MiB)",
                                    "Scaling: peak memory (Bazel + actions)")):
        for mode in ("one_shot", "worker"):
            rows = [r for r in sc if r["mode"] == mode]
            if rows:
                xs = [r["specializations"] for r in rows]
                ys = [r[key] for r in rows]
                ax.plot(xs, ys, "o-", color=colors[mode], label=mode.replace("_", "-"))
                for x, y in zip(xs, ys):
                    ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 5),
                                ha="center", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(SCALING), [str(n) for n in SCALING])
        ax.set_xlabel("specializations (TritonCompile actions)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        if sc:
            ax.legend()
    m = res.get("machine", {})
    fig.suptitle(f"rules_triton build benchmark ({m.get('cpus')} CPUs, "
                 f"{res.get('started', '')[:10]})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def write_outputs(res: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    clean = strip_private(res)
    (out_dir / "build.json").write_text(json.dumps(clean, indent=1) + "\n")
    (out_dir / "build.md").write_text(markdown(clean))
    err = chart(clean, out_dir / "build.png")
    if err:
        log(err)
    log(f"wrote {out_dir}/build.json, build.md" + ("" if err else ", build.png"))


def _results_store():
    """bench/results_store.py (how committed raw results are stored), for --render."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import results_store
    return results_store


def main() -> int:
    p = argparse.ArgumentParser(description="rules_triton build benchmark")
    p.add_argument("--reps", type=int, default=3, help="repetitions of each timed build")
    p.add_argument("--floor_rounds", type=int, default=2)
    p.add_argument("--max_busy", type=float, default=0.25,
                   help="before a build, wait until other processes use less than this fraction "
                        "of the CPUs")
    p.add_argument("--max_wait", type=float, default=30,
                   help="seconds to wait for it before one build at most")
    p.add_argument("--max_total_wait", type=float, default=240,
                   help="seconds to wait for quiet in the whole run at most")
    p.add_argument("--max_scaling", type=int, default=128)
    p.add_argument("--skip_scaling", action="store_true")
    p.add_argument("--skip_disk_cache", action="store_true")
    p.add_argument("--skip_floor", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the temporary checkouts")
    p.add_argument("--tmp", default=None, help="parent folder of the temporary checkouts")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--targets", default=None,
                   help="comma-separated targets instead of the examples' libraries (testing)")
    p.add_argument("--report_only", type=Path, default=None,
                   help="re-render build.md/build.png from an existing build.json")
    args = p.parse_args()
    if args.report_only:
        write_outputs(_results_store().load(args.report_only), args.out)
        return 0
    if args.targets:
        TARGETS[:] = args.targets.split(",")
    bench = Bench(args)
    try:
        res = bench.run()
    finally:
        bench.cleanup()
    write_outputs(res, args.out)
    if args.out.resolve() == RESULTS.resolve():
        subprocess.run([sys.executable, str(REPO / "bench" / "update_readme.py")], check=False)
    print(markdown(strip_private(res)))
    return 0 if not res["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
