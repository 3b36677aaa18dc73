"""The variant records of //tests/autotune:scale and :pruned, built from tuned.py's
@triton.autotune configs (tuned_algos.bzl), @triton.heuristics, defaults and a None argument."""

import glob
import os

import pytest

from triton_aot.variant import VariantRecord

HERE = os.path.dirname(os.path.abspath(__file__))


def records(name):
    found = sorted(glob.glob(os.path.join(HERE, "_triton", name, "*.json")))
    assert found, f"no records of :{name}"
    return [VariantRecord.from_json(open(p).read()) for p in found]


def test_scale_algos_are_the_pruned_configs_plus_one():
    recs = sorted(records("scale"), key=lambda r: r.algo_index)
    # configs 0-3 survive keep_big_blocks (config 4, BLOCK=128, is pruned at build time)
    assert [(r.constexprs["BLOCK"], r.launch.num_warps) for r in recs] == [
        ("256", 2), ("256", 4), ("1024", 2), ("1024", 4), ("512", 4)]
    assert [r.autotune.config for r in recs] == [0, 1, 2, 3, None]
    assert all(r.autotune.key == ("n",) for r in recs)


def test_scale_values_from_defaults_heuristics_and_none():
    recs = sorted(records("scale"), key=lambda r: r.algo_index)
    for r in recs:
        c = r.constexprs
        assert c["bias_ptr"] == "None"  # None: a constexpr, not in the C API
        assert [a.name for a in r.c_args] == ["x_ptr", "out_ptr", "n"]
        assert c["alpha"] == "2.0"  # the Python default
        assert c["ALIGNED"] == "True"  # heuristic n % 16 == 0 under the n:16 hint
        # heuristic over a constexpr and a launch option
        assert c["WIDE"] == str(c["BLOCK"] == "1024" and r.launch.num_warps >= 4)
    assert recs[-1].constexprs["ACTIVATION"] == "'leaky_relu'"
    assert recs[-1].constexprs["OUT_DTYPE"] == "tl.float16"
    assert recs[0].constexprs["ACTIVATION"] == "'none'"
    assert recs[0].constexprs["OUT_DTYPE"] == "tl.float32"


def test_pruned_keeps_every_config():
    recs = sorted(records("pruned"), key=lambda r: r.algo_index)
    assert [r.autotune.config for r in recs] == [0, 1, 2, 3, 4]
    assert recs[4].launch.maxnreg == 128 and recs[4].launch.num_stages == 2
