"""bench/tune/tune_bench.py without a GPU: the evaluation shapes and their leak check, one timing
for every method (against a simulated GPU timeline where host launch costs differ), the sanity
checks' verdicts and the rendering of a results file."""

import importlib.util
import json
import random
import sys
import types
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("tune_bench", HERE / "tune_bench.py")
tb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tb)
sys.path.insert(0, str(HERE))
import fake_gpu  # noqa: E402

INPUTS_TEXT = '''
KEY = ("M", "N", "K")
SHAPES = [(1, 1024, 4096), (16, 4096, 4096)] + [(m, 7, 9, "nt") for m in (1, 2)]
NT_SHAPES = [(3, 7, 9)]  # another list of tuning calls
DTYPES = {"mm": "float16"}
def make_args(torch, dtype, M, N, K):
    return ["a", "b", "c", M, N, K]
'''


def inputs_module(tmp_path, text=INPUTS_TEXT):
    p = tmp_path / "inputs.py"
    p.write_text(text)
    spec = importlib.util.spec_from_file_location("inputs", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_evaluation_shapes_are_stratified_seeded_and_never_tuning_points(tmp_path):
    inputs = inputs_module(tmp_path)
    entries = tb.plan(tb.Matmul, inputs)
    assert entries == tb.plan(tb.Matmul, inputs)  # a fixed seed
    by = {st: [e for e in entries if e["stratum"] == st] for st in tb.Matmul.counts}
    assert {st: len(v) for st, v in by.items()} == tb.Matmul.counts
    layers = {(n, k) for _, _, n, k in tb.LLM_LAYERS}
    assert all(e["layout"] == "nt" and e["shape"][1:] in layers for e in by["llm"])
    assert {e["shape"][1:] for e in by["llm"]} == layers  # every layer at least once
    assert any(e["shape"][0] <= 16 for e in by["llm"])
    assert {e["layout"] for e in by["random-nt"]} == {"nt"}
    assert {e["layout"] for e in by["random-nn"]} == {"nn"}
    # (1, 1024, 4096) is Llama-3-8B k/v at M = 1: a tuning point, redrawn; the layout-tagged
    # entries count as tuning points too
    assert tb.tuning_points(inputs) == {(1, 1024, 4096), (16, 4096, 4096), (1, 7, 9), (2, 7, 9),
                                        (3, 7, 9)}
    assert tb.leak_check(entries, inputs)["leaked"] == []
    leaked = tb.leak_check([{"shape": (2, 7, 9)}], inputs)
    assert leaked == {"shapes": 1, "tuning_points": 5, "leaked": [[2, 7, 9]]}
    # --max-shapes cuts every stratum alike
    cut = tb.plan(tb.Matmul, inputs, max_shapes=9)
    assert [e["stratum"] for e in cut] == ["llm", "random-nt", "random-nn"] * 3
    quick = tb.plan(tb.RmsNorm, inputs_module(tmp_path, INPUTS_TEXT.replace('"M", "N", "K"',
                                                                            '"n_rows", "n_cols"')),
                    quick=True)
    assert [e["stratum"] for e in quick] == ["llm", "random"] * 4


def test_dry_run_on_the_repository_inputs(capsys):
    kernels = tb.KERNELS
    if not (kernels / "matmul_tuning.py").exists():
        pytest.skip("examples/ is not in this test's runfiles")
    assert tb.main(["--dry-run"]) == 0
    assert "Llama-3-8B" in capsys.readouterr().out


class FakeTensor:
    def __init__(self, shape, strides=None):
        self.shape = shape
        self._strides = strides or (shape[1], 1)

    def stride(self, i):
        return self._strides[i]

    def t(self):
        return FakeTensor(self.shape[::-1], self._strides[::-1])

    def __truediv__(self, other):
        return self


def test_nt_layout_from_an_inputs_file_with_or_without_a_layout_argument(tmp_path):
    torch = types.SimpleNamespace(randn=lambda shape, **kw: FakeTensor(shape),
                                  empty=lambda shape, **kw: FakeTensor(shape))
    old = inputs_module(tmp_path)  # no layout argument: made here
    a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn = tb.make_args(old, torch, None, (3, 5, 7), "nt")
    assert b.shape == (7, 5) and (sbk, sbn) == (1, 7) and (sam, sak, scm, scn) == (7, 1, 5, 1)
    assert tb.make_args(old, torch, None, (3, 5, 7), "nn") == ["a", "b", "c", 3, 5, 7]
    new = inputs_module(tmp_path, INPUTS_TEXT.replace(
        "def make_args(torch, dtype, M, N, K):\n    return [",
        'def make_args(torch, dtype, M, N, K, layout="nn"):\n    return [layout, '))
    assert tb.make_args(new, torch, None, (3, 5, 7), "nt")[0] == "nt"
    assert tb.make_args(new, torch, None, (3, 5, 7), "nn")[0] == "nn"


def fake_torch(gpu):
    return types.SimpleNamespace(cuda=types.SimpleNamespace(**fake_gpu.cuda(gpu)))


def kernel(gpu, gpu_us, host_us):
    def launch(stream=None):
        gpu.queue(gpu_us, host_us)
    return launch


def test_every_method_gets_one_batch_and_its_host_cost_never_shows():
    from triton_aot.tuning import tune
    gpu = fake_gpu.Gpu()
    torch = fake_torch(gpu)
    busy = tb.busy_cycles_for(torch, tb.BUSY_WAIT_US)
    assert busy == pytest.approx(tb.BUSY_WAIT_US * 1500, rel=1e-2)
    # the same kernel (5 us of GPU time) behind a slow (JIT, 25 us) and a fast (ctypes, 3 us)
    # host launch path
    slow, fast = kernel(gpu, 5.0, 25.0), kernel(gpu, 5.0, 3.0)
    # before: each sized its own batch from its host-inclusive first launch, so the graph's fixed
    # cost weighed on the slow path's fewer launches
    assert tune.time_launches(torch, slow, 5) > tune.time_launches(torch, fast, 5) * 1.05
    batch, per, uncaptured = tb.time_methods(torch, {"jit": slow, "auto": fast}, 5, 3, busy)
    assert batch == 40 and uncaptured == []  # 200 us of the faster's 5 us
    assert per["jit"] == per["auto"] == [pytest.approx(5.0)] * 3
    # the fastest method sets the batch for all
    _, per, _ = tb.time_methods(torch, {"big": kernel(gpu, 50.0, 3.0), "small": fast}, 5, 1,
                                busy)
    assert per["big"] == [pytest.approx(50.0)] and per["small"] == [pytest.approx(5.0)]


def test_rounds_rotate_the_method_order():
    gpu = fake_gpu.Gpu()
    torch = fake_torch(gpu)
    methods = {m: kernel(gpu, 5.0, 1.0) for m in "abc"}
    from triton_aot.tuning import tune
    order = []
    original = tune.replay_times

    def spy(torch_, graph, launch, batch, reps, busy_cycles=0):
        if graph is not None:
            order.append(next(m for m, fn in methods.items() if fn is launch))
        return original(torch_, graph, launch, batch, reps, busy_cycles)
    tune.replay_times = spy
    try:
        tb.time_methods(torch, methods, 2, 3, 1000)
    finally:
        tune.replay_times = original
    assert order == list("abc" "bca" "cab")


def row(lib, stratum, shape, auto, jit, base, same=True, **kw):
    r = {"library": lib, "dtype": "float16", "shape": list(shape), "stratum": stratum,
         "layout": "nt", "label": None, "baselines": list(tb.adapter(lib).baselines),
         "auto_ok": True, "jit_ok": True, "batch": 10, "uncaptured": [], "auto_us": auto,
         "jit_us": jit, "auto_algo": 3, "jit_algo": 3 if same else 4, "same_kernel": same,
         "hints": "M:16", "auto_hints": "M:16", "jit_over_auto": jit / auto, "tflops_auto": 1.0}
    for b in r["baselines"]:
        r[f"{b}_us"] = base
        r[f"{b}_over_auto"] = base / auto
    r.update(kw)
    return r


def pair(ratio, algo=0):
    return {"library": "matmul_tuned", "shape": [64, 64, 64], "stratum": "llm", "algo": algo,
            "library_us": 10.0, "jit_us": 10.0 * ratio, "jit_over_library": ratio, "agree": True}


def results(rows, direct):
    return {"format": tb.FORMAT, "seed": tb.EVAL_SEED, "reps": 5, "rounds": 5, "seconds": 1.0,
            "jit_cache_warmup_seconds": 2.0,
            "leak_check": {"matmul_tuned": {"shapes": len(rows), "tuning_points": 9, "leaked": []}},
            "environment": {"gpu": "Fake GPU", "sm": 90, "torch": "0", "triton": "0",
                            "date": "today"},
            "rows": rows, "direct": direct, "algos": {"matmul_tuned": ["a", "b"]}}


def sweep_rows(jit_factor):
    rng = random.Random(1)
    rows = []
    for i in range(12):
        auto = [5.0, 50.0, 500.0][i % 3] * rng.uniform(0.9, 1.1)
        stratum = ["llm", "random-nt", "random-nn"][i % 3]
        rows.append(row("matmul_tuned", stratum, (i + 1, 64, 64), auto, auto * jit_factor,
                        auto * 0.97))
    rows.append(row("matmul_tuned", "llm", (99, 64, 64), 10.0, 13.0, 10.0, same=False))
    return rows


def test_same_kernel_pairs_that_agree_give_a_valid_run(tmp_path, capsys):
    rows = sweep_rows(1.01)
    s = tb.summarize(rows, [pair(1.005), pair(0.99, 1), {"library": "matmul_tuned",
                                                         "skipped": "exceeds resources"}])
    v = s["same_kernel_check"]
    assert v["pairs"] == 12 and v["median"] == pytest.approx(0.01) and v["pass"]
    assert s["direct_check"]["pairs"] == 2 and s["direct_check"]["pass"] and s["valid"]
    groups = {(g["by"], g["group"]): g for g in s["groups"]}
    assert groups[("stratum", "llm")]["shapes"] == 5 and groups[("time", "<10us")]["shapes"] == 4
    assert groups[("stratum", "llm")]["same_kernel"] == 4
    targets = {(t["group"], t["what"]): t for t in s["targets"]}
    assert targets[("llm", "cuBLAS time / auto time, geomean")]["pass"]  # 0.97 >= 0.95
    assert targets[("llm", "JIT time / auto time, geomean")]["pass"]  # 1.01 >= 1.0
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(results(rows, [pair(1.005)])))
    assert tb.main(["--render", str(path), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "tune.md").read_text()
    assert "12 pairs, JIT/auto disagreement median 1.00%" in md and "PASS" in md
    assert "| matmul_tuned | llm | cuBLAS time / auto time, worst shape | >= 0.7 | 0.970x | PASS |" in md


def test_same_kernel_pairs_that_disagree_fail_the_run(tmp_path):
    rows = sweep_rows(1.05)  # the identical kernel measured 5% slower on one side
    s = tb.summarize(rows, [pair(1.0)])
    assert not s["same_kernel_check"]["pass"] and not s["valid"]
    assert "FAIL" in tb.verdict_line(s)
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(results(rows, [pair(1.0)])))
    assert tb.main(["--render", str(path), "--out", str(tmp_path / "out")]) == 1
    assert "**FAIL**" in (tmp_path / "out" / "tune.md").read_text()
    # the direct check alone fails it too, and so does a method timed outside a graph
    assert not tb.summarize(sweep_rows(1.0), [pair(1.04), pair(1.03)])["valid"]
    uncaptured = sweep_rows(1.0)
    uncaptured[0]["uncaptured"] = ["jit"]
    assert not tb.summarize(uncaptured, [])["valid"]


def test_targets_per_stratum_and_rmsnorm_rows(tmp_path):
    rows = [row("matmul_tuned", "llm", (i + 1, 64, 64), 10.0, 12.0, 6.0) for i in range(3)]
    rows += [row("rmsnorm_tuned", "random", (i + 1, 64), 10.0, 12.0, 11.0) for i in range(3)]
    del rows[-1]["compiled_us"], rows[-1]["compiled_over_auto"]  # torch.compile did not run
    s = tb.summarize(rows, [])
    t = {(x["library"], x["group"], x["what"]): x["pass"] for x in s["targets"]}
    assert t[("matmul_tuned", "llm", "cuBLAS time / auto time, geomean")] is False  # 0.6x
    assert t[("matmul_tuned", "llm", "cuBLAS time / auto time, worst shape")] is False
    assert t[("rmsnorm_tuned", "random", "JIT time / auto time, geomean")] is True
    assert not any(k[0] == "rmsnorm_tuned" and "torch" in k[2] for k in t)
    rms = next(g for g in s["groups"] if g["library"] == "rmsnorm_tuned" and g["by"] == "stratum")
    assert rms["ratios"]["compiled"]["geomean"] == pytest.approx(1.1)
    md = tb.markdown(results(rows, []) | {"summary": s})
    assert "compiled/auto" in md and "**FAIL**" in md
