"""bench/tune/headroom.py without a GPU: its shapes are never tuning points, its library configs
are the tuning table's algos, and its committed report renders from its committed results."""

import importlib.util
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # the imports below are from the source tree: leave it clean
sys.path.insert(0, str(HERE))
spec = importlib.util.spec_from_file_location("headroom", HERE / "headroom.py")
headroom = importlib.util.module_from_spec(spec)
spec.loader.exec_module(headroom)
RESULTS = HERE.parents[1] / "bench" / "results"
sys.path.insert(0, str(HERE.parent))  # bench/: results_store
import results_store  # noqa: E402
if os.environ.get("HEADROOM_KERNELS"):  # under Bazel: the examples module's runfiles
    headroom.KERNELS = Path(os.environ["HEADROOM_KERNELS"]).resolve().parent


def test_shapes_are_llm_layers_drawn_apart_from_the_tuning_points():
    shapes = headroom.draw_shapes(24)
    spec = importlib.util.spec_from_file_location(
        "matmul_tuning", headroom.KERNELS / "matmul_tuning.py")
    inputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inputs)
    tuned = headroom.tune_bench.tuning_points(inputs)
    keys = [tuple(e["shape"]) for e in shapes]
    assert len(set(keys)) == 24
    assert not set(keys) & tuned
    layers = {(n, k) for _, _, n, k in headroom.tune_bench.LLM_LAYERS}
    assert all((n, k) in layers and 1 <= m <= 8192 for m, n, k in keys)
    assert headroom.draw_shapes(24) == shapes  # seeded


def test_library_configs_are_the_tuning_tables_algos():
    for dtype, name in (("fp16", "matmul_tuned"), ("bf16", "matmul_tuned_bf16")):
        table = json.loads((headroom.KERNELS / f"{name}.tuning.json").read_text())
        configs = headroom.library_configs(dtype)
        assert sorted(configs) == sorted(f"lib:{a['index']}" for a in table["algos"])
        for algo in table["algos"]:
            cfg = configs[f"lib:{algo['index']}"]
            assert f"BLOCK_M={cfg['BLOCK_M']} BLOCK_N={cfg['BLOCK_N']}" in algo["info"]
            assert f"num_warps={cfg['num_warps']} num_stages={cfg['num_stages']}" in algo["info"]
            assert headroom.needs_zero(cfg) == ("reset_to_zero" in algo["info"])


def test_committed_report_renders_from_committed_results():
    res = results_store.load(RESULTS / "headroom.json.gz")
    assert headroom.render(res) == (RESULTS / "headroom.md").read_text()
    assert headroom.summarize(res) == json.loads(json.dumps(res["summary"]))


def test_held_out_layers_were_never_tuned():
    """tune_bench --held_out: no tuning point has a held-out layer's (N, K), in any layout; its
    strata draw only those layers, M within a server's range."""
    tb = headroom.tune_bench
    spec = importlib.util.spec_from_file_location(
        "matmul_tuning", headroom.KERNELS / "matmul_tuning.py")
    inputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inputs)
    tuned_nk = {(n, k) for _, n, k in tb.tuning_points(inputs)}
    held = {(n, k) for _, _, n, k in tb.HELD_OUT_LAYERS}
    assert not held & tuned_nk
    fresh = {(n, k) for _, _, n, k in tb.FRESH_LAYERS}
    assert not fresh & (tuned_nk | held)
    kind = type("HeldOut", (tb.Matmul,), {"counts": dict(tb.HELD_OUT_COUNTS)})
    entries = tb.plan(kind, inputs)
    assert len(entries) == sum(tb.HELD_OUT_COUNTS.values())
    assert all(tuple(e["shape"][1:]) in held for e in entries)
    assert {e["layout"] for e in entries if e["stratum"] == "heldout-nn"} == {"nn"}
    assert all(e["shape"][0] <= 256 for e in entries if e["label"].endswith("lm_head"))
