"""The variant records of //tests/autotune:scale and :pruned, built from tuned.py's
@triton.autotune configs (tuned_algos.bzl), @triton.heuristics, defaults and a None argument."""

import glob
import os

import pytest

from triton_aot.contract import record_reader

HERE = os.path.dirname(os.path.abspath(__file__))


def records(name):
    found = sorted(glob.glob(os.path.join(HERE, "_triton", name, "*.json")))
    assert found, f"no records of :{name}"
    return [record_reader.read_json(open(p).read()) for p in found]


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


def test_a_launch_heuristic_keeps_the_algos_apart():
    """num_warps = 4 for every config: configs 0 and 1 (BLOCK=256, 2 and 4 warps) compile the
    same, but stay two algos, named by what the config asked for."""
    recs = sorted(records("pruned"), key=lambda r: r.algo_index)
    assert {r.launch.num_warps for r in recs} == {4}
    assert [r.heuristics for r in recs] == [("num_warps",)] * 5
    assert recs[0].algo_launch.num_warps == 2 and recs[1].algo_launch is None
    assert recs[0].algo_config != recs[1].algo_config
    c = open(os.path.join(HERE, "pruned.c")).read()
    assert '"BLOCK=256 num_warps=2 num_stages=1 heuristics: num_warps=4"' in c


def test_heuristic_values_differ_per_specialization():
    recs = records("scale_two_specializations")
    aligned = {(r.algo_index, r.hint_summary()): r.constexprs["ALIGNED"] for r in recs}
    for algo in range(4):
        assert aligned[(algo, "x_ptr%16 out_ptr%16 n%16")] == "True"
        assert aligned[(algo, "n==1")] == "False"  # 1 % 16 == 0 is False
    assert all(r.heuristics == ("ALIGNED", "WIDE") for r in recs)
    c = open(os.path.join(HERE, "scale_two_specializations.c")).read()
    assert "heuristics per variant: ALIGNED,WIDE" in c
