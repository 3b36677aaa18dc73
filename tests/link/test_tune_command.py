"""The tuning command (triton_aot.tuning.tune) on the CPU: a stub `torch` (events that read the fake
driver's launch records and charge each algo a made-up time per M) and the fake driver behind a
library built by the harness. Checks the measured winners, the failure reasons ("exceeds
resources", "failed: ..."), the table it writes and that it keeps another SM's device."""

from __future__ import annotations

import json
import subprocess
import sys

import harness
from harness import arg, constexpr, variant

sys.path.insert(0, str(harness.REPO_ROOT / "tools"))
import tune_bundle  # noqa: E402  (tools/tune_bundle.py: packs as tools/tune does)
from triton_aot.contract import record_reader
from triton_aot.contract import tuning_table as tuning
from triton_aot.tuning import seed


def tune_variants() -> list[dict]:
    args = lambda block, m_hint=None: [
        arg("a_ptr", "*fp16"), arg("b_ptr", "*fp16"), arg("c_ptr", "*fp16"),
        arg("M", "i32", m_hint), arg("N", "i32"), arg("K", "i32"), constexpr("BLOCK", block)]
    common = dict(kernel_name="mm_kernel", arch=90)
    return [
        variant("mm_a0_sm90", args(16), algo_index=0, **common),
        variant("mm_a1_sm90", args(64), algo_index=1, **common),
        # more shared memory than the device below can opt in to
        variant("mm_a2_sm90", args(128), algo_index=2, shared=200 * 1024, **common),
        # only an M % 16 == 0 variant: M = 1 matches none (CUDA_ERROR_INVALID_VALUE)
        variant("mm_a3_sm90", args(32, 16), algo_index=3, **common),
    ]


STUB_TORCH = '''
import ctypes, os, types
fake = ctypes.CDLL(os.environ["FAKE_LIBCUDA"])  # answers the library's dlopen("libcuda.so.1")
fake.fake_cuda_create_context.restype = ctypes.c_void_p
fake.fake_cuda_reset()
fake.fake_cuda_set_device(0, 9, 0, 101376)
fake.fake_cuda_set_current(ctypes.c_void_p(fake.fake_cuda_create_context(0)))

class Launch(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_int), ("ex", ctypes.c_int), ("module_id", ctypes.c_int),
                ("ctx", ctypes.c_void_p), ("tag", ctypes.c_char * 96), ("name", ctypes.c_char * 96),
                ("is_ptx", ctypes.c_int), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p), ("num_attrs", ctypes.c_int),
                ("cluster", ctypes.c_uint * 3), ("cluster_policy", ctypes.c_int),
                ("cooperative", ctypes.c_int), ("pdl", ctypes.c_int), ("num_params", ctypes.c_int),
                ("param_size", ctypes.c_uint * 32), ("param_bytes", (ctypes.c_ubyte * 8) * 32)]

def cost_us(i):  # made-up kernel times: algo 0 wins small M, algo 1 large M
    l = Launch()
    fake.fake_cuda_get_launch(i, ctypes.byref(l))
    algo = int(l.tag.decode().split("_a")[1].split("_")[0])
    m = int.from_bytes(bytes(l.param_bytes[3][:4]), "little")
    return {0: 5 + m / 16, 1: 50 + m / 256, 3: 1000.0}[algo]

class Event:
    def __init__(self, enable_timing=False): self.n = 0
    def record(self, stream=None): self.n = fake.fake_cuda_num_launches()
    def synchronize(self): pass
    def elapsed_time(self, end): return sum(cost_us(i) for i in range(self.n, end.n)) / 1000.0

class CUDAGraph:  # capture is not possible here: tune falls back to plain launches
    def __init__(self): raise RuntimeError("no graphs in the stub")

cuda = types.SimpleNamespace(
    current_device=lambda: 0, device_count=lambda: 1, get_device_capability=lambda d=None: (9, 0),
    get_device_properties=lambda d: types.SimpleNamespace(name="Fake GPU",
                                                          multi_processor_count=132),
    current_stream=lambda: types.SimpleNamespace(cuda_stream=0), synchronize=lambda: None,
    Event=Event, CUDAGraph=CUDAGraph, graph=None)
float16 = "float16"
'''

INPUTS = '''
KEY = ("M", "N", "K")
SHAPES = [(16, 64, 64), (4096, 64, 64), (1, 64, 64)]
DTYPES = {"mm": "float16"}
def make_args(torch, dtype, M, N, K):
    assert dtype == "float16"
    return [0x100000, 0x200000, 0x300000, M, N, K]
'''


def tuning_outputs(tmp_path, inputs=INPUTS, device=None) -> list:
    """The harness library's `tuning` output group as the rule builds it: its description, the
    variant records, the shared object, the inputs file and the current table (an A100's device,
    and `device`). The table's place is tmp_path/mm.tuning.json."""
    metas = tune_variants()
    d = tmp_path / "lib"
    description = d / "mm.library.json"
    lib = harness.build(d, "mm", metas, link_flags=(
        "--tuning_key=M,N,K", f"--tuning_place={tmp_path / 'mm.tuning.json'}",
        f"--out_library={description}"))
    files = [description, lib.so]
    for m in metas:
        (d / "records").mkdir(exist_ok=True)
        files.append(d / "records" / f"{m['symbol']}.json")
        files[-1].write_text(json.dumps(m))
    files.append(d / "mm_tuning.py")
    files[-1].write_text(inputs)
    recs = {r.algo_index: r for r in map(record_reader.read, metas)}
    old = seed.empty_table("mm", ("M", "N", "K"), recs).with_device(
        tuning.Device("An A100", 80, "manual", (tuning.Point((1, 1, 1), (), 0),)))
    if device is not None:
        old = old.with_device(device)
    files.append(d / "mm.tuning.json")
    files[-1].write_text(old.to_json())
    return files


def fake_gpu_env(tmp_path, fake_dir) -> dict:
    """The stub torch and the fake driver in place of the GPU machine's; `python3` is this
    test's interpreter."""
    (tmp_path / "stub" / "torch").mkdir(parents=True)
    (tmp_path / "stub" / "torch" / "__init__.py").write_text(STUB_TORCH)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (tmp_path / "bin" / "python3").chmod(0o755)
    return {"PYTHONPATH": f"{tmp_path / 'stub'}:{harness.REPO_ROOT}",
            "FAKE_LIBCUDA": str(fake_dir / "libcuda.so.1"),
            "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}


def run_tune(tmp_path, fake_dir, inputs=INPUTS, device=None, flags=()):
    """Packs the harness library as tools/tune does, runs the tuning command on it and returns
    (the process, the table it wrote). `device`: a device of the existing table besides an
    A100's."""
    pack = tune_bundle.pack_tuning("//pkg:mm", tuning_outputs(tmp_path, inputs, device),
                                   tmp_path / "packs", None)
    p = subprocess.run([sys.executable, "-m", "triton_aot.tuning.tune", str(pack), "--reps", "3", *flags],
                       capture_output=True, text=True, env=fake_gpu_env(tmp_path, fake_dir),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p, tuning.read_table(tmp_path / "mm.tuning.json")


def test_tune_command_writes_the_table(tmp_path, fake_dir):
    p, table = run_tune(tmp_path, fake_dir)
    assert table.library == "mm" and [d.sm for d in table.devices] == [80, 90]
    dev = table.device(90)
    assert dev.name == "Fake GPU" and dev.source == "tune"
    by_key = {p.key: p for p in dev.points}
    small, large, one = by_key[(16, 64, 64)], by_key[(4096, 64, 64)], by_key[(1, 64, 64)]
    assert small.winner == 0 and large.winner == 1 and one.winner == 0
    assert small.times_us[0] == 6.0 and large.times_us[1] == 66.0
    for point in (small, large, one):
        assert point.times_us[2] == "exceeds resources"
    assert small.times_us[3] == 1000.0
    assert isinstance(one.times_us[3], str) and one.times_us[3].startswith("failed: ")
    assert "algo 1" in p.stderr and "wrote" in p.stderr


# Calls with make_args options: the same key in two layouts. Here a layout only moves A off
# 16-byte alignment, which no variant of this library is hinted on, so both run the same variant
# and the second is not measured again.
INPUTS_WITH_OPTIONS = INPUTS.replace(
    "SHAPES = [(16, 64, 64), (4096, 64, 64), (1, 64, 64)]",
    'SHAPES = [(16, 64, 64), (16, 64, 64, {"offset": 8}), (4096, 64, 64), (1, 64, 64)]').replace(
    "def make_args(torch, dtype, M, N, K):", "def make_args(torch, dtype, M, N, K, offset=0):").replace(
    "return [0x100000, ", "return [0x100000 + offset, ")


def test_missing_only_measures_only_the_calls_without_a_point(tmp_path, fake_dir):
    kept = tuning.Point((16, 64, 64), (1.0, 2.0, 3.0, 4.0), 0, "M:16")
    p, table = run_tune(tmp_path, fake_dir, INPUTS_WITH_OPTIONS,
                        tuning.Device("Fake GPU", 90, "tune", (kept,)), ("--missing_only",))
    dev = table.device(90)
    assert sorted((q.key, q.hints) for q in dev.points) == [
        ((1, 64, 64), ""), ((16, 64, 64), "M:16"), ((4096, 64, 64), "M:16")]
    assert next(q for q in dev.points if q.key == (16, 64, 64)) == kept
    assert "1 already in the table" in p.stderr
    measured = [line for line in p.stderr.splitlines() if ": algo " in line]
    assert len(measured) == 2, p.stderr


def test_calls_with_options_run_once_per_variant(tmp_path, fake_dir):
    p, table = run_tune(tmp_path, fake_dir, INPUTS_WITH_OPTIONS)
    assert [q.key for q in table.device(90).points] == [(1, 64, 64), (16, 64, 64), (4096, 64, 64)]
    assert len([line for line in p.stderr.splitlines() if ": algo " in line]) == 3, p.stderr


def test_finalists_are_retimed_and_take_the_median(monkeypatch):
    """A first timing that flatters one algo (a clock spike on another) is outvoted: the algos
    within FINALIST_MARGIN of the fastest are timed FINAL_ROUNDS more times, interleaved, and
    keep the median; the rest keep their single timing."""
    from triton_aot.tuning import tune
    later = {0: [10.0, 10.2], 1: [9.6, 9.7]}  # algo 1 is really faster
    calls = []

    def fake_time_launches(torch, launch, reps):
        algo = launch(None)
        calls.append(algo)
        return later[algo].pop(0)

    monkeypatch.setattr(tune, "time_launches", fake_time_launches)
    lib = type("Lib", (), {"fn": staticmethod(lambda stream, *args: args[-1])})()
    times = [9.5, 10.4, 30.0, "exceeds resources"]  # first pass: algo 0 looked fastest
    tune.retime_finalists(None, lib, [], times, reps=3)
    assert times == [10.0, 9.7, 30.0, "exceeds resources"]
    assert sorted(calls) == [0, 0, 1, 1] and calls[:2] in ([1, 0], [0, 1])
    assert tuning.winner_of(times) == 1

    lone = [5.0, 9.0]  # no other algo within the margin: nothing is re-timed
    tune.retime_finalists(None, lib, [], lone, reps=3)
    assert lone == [5.0, 9.0] and len(calls) == 4
