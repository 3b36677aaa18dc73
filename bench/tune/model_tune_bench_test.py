"""bench/tune/model_tune_bench.py without a GPU: the batch sizes it evaluates on are never the
tuned ones, and its summary and report from result rows."""

import importlib.util
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
spec = importlib.util.spec_from_file_location("model_tune_bench", HERE / "model_tune_bench.py")
mtb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mtb)

from triton_aot.tuning import model_shapes  # noqa: E402


def test_evaluation_batches_are_never_tuned_ones():
    tuned = set(model_shapes.batch_sizes("1:8192", 20))
    rng = random.Random(1)
    for high in (256, 8192):
        ms = mtb.eval_batches(rng, tuned, high)
        assert len(ms) == mtb.EVAL_M_PER_LAYER and not set(ms) & tuned
        assert all(1 <= m <= high for m in ms) and ms == sorted(set(ms))


def _row(lib, cublas, new, old, oracle):
    return {"library": lib, "cublas_us": cublas, "new_us": new, "old_us": old,
            "oracle_us": oracle, "new_vs_oracle": oracle / new, "old_vs_oracle": oracle / old,
            "new_vs_cublas": cublas / new, "old_vs_cublas": cublas / old}


def test_summary_and_report():
    rows = [_row("mm", 5.0, 5.0, 10.0, 5.0), _row("mm", 50.0, 60.0, 60.0, 50.0)]
    s = mtb.summary(rows)
    every = next(g for g in s if g["cublas_time"] == "all")
    assert every["shapes"] == 2 and every["new_below_0.85_oracle"] == 1
    assert abs(every["new_vs_oracle"]["geomean"] - (50 / 60) ** 0.5) < 1e-9
    assert every["old_vs_oracle"]["worst"] == 0.5
    assert [g["cublas_time"] for g in s] == ["all", "<10us", "10-100us"]
    res = {"environment": {"gpu": "G", "torch": "t", "date": "d"}, "summary": s,
           "tuning": [{"library": "mm", "calls": 264, "gpus": "all", "seconds": 80.2}]}
    md = mtb.markdown(res)
    assert "| mm | 264 | all | 80 s |" in md and "| mm | all | 2 | 0.913 (0.833)" in md


def test_same_kernel_check_reports_the_pick_timed_twice():
    rows = [{"repeat_disagreement": d} for d in (0.001, 0.004, 0.03)] + [{"repeat_disagreement": None}]
    same = mtb.same_kernel_check(rows)
    assert same["pairs"] == 3 and same["valid"] and abs(same["median"] - 0.004) < 1e-12
    assert not mtb.same_kernel_check([{"repeat_disagreement": 0.05}])["valid"]
    assert not mtb.same_kernel_check([])["valid"]
    md = mtb.markdown({"environment": {"gpu": "g", "torch": "t", "date": "d"}, "tuning": [],
                       "summary": [], "same_kernel": same})
    assert "3 pairs, disagreement median 0.40%, max 3.00%: PASS" in md
