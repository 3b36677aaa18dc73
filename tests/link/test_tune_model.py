"""Tuning for a model (triton_aot.tuning.model_shapes) on every GPU of a host
(triton_aot.tuning.shards), without a GPU: the model's calls from its layers or its config.json,
the plan that splits them between GPUs, the merge, and the tuning command on three fake GPUs
(one worker process each, the stub torch and fake driver of test_tune_command) giving the same
table as on one."""

from __future__ import annotations

import pytest

from test_tune_command import run_tune
from triton_aot.contract import tuning_table as tuning
from triton_aot.core.errors import UserError
from triton_aot.tuning import model_shapes, shards
from triton_aot.tuning.call_hints import Call

LLAMA3_8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
             "num_key_value_heads": 8, "vocab_size": 128256}
MIXTRAL = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8, "num_local_experts": 8, "vocab_size": 32000}
DEEPSEEK_V2_LITE = {"hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
                    "n_routed_experts": 64, "n_shared_experts": 2, "num_attention_heads": 16,
                    "vocab_size": 102400}
GEMMA2_2B = {"text_config": {"hidden_size": 2304, "intermediate_size": 9216, "head_dim": 256,
                             "num_attention_heads": 8, "num_key_value_heads": 4,
                             "vocab_size": 256000}}


def pairs(cfg):
    return [(layer.name, layer.n, layer.k) for layer in model_shapes.layers_of_config(cfg)]


def test_layers_of_a_dense_config():
    # q and o share 4096x4096: one layer
    assert pairs(LLAMA3_8B) == [("q", 4096, 4096), ("k/v", 1024, 4096), ("qkv", 6144, 4096),
                                ("gate/up", 14336, 4096), ("gate_up", 28672, 4096),
                                ("down", 4096, 14336), ("lm_head", 128256, 4096)]
    # head_dim given (q is 8 x 256 = 2048, not the hidden size), and a nested text_config
    assert pairs(GEMMA2_2B)[:4] == [("q", 2048, 2304), ("k/v", 1024, 2304),
                                    ("qkv", 4096, 2304), ("o", 2304, 2048)]


def test_layers_of_moe_configs():
    # Mixtral: the experts are the MLP (intermediate_size); no dense MLP besides them
    got = pairs(MIXTRAL)
    assert ("expert gate/up", 14336, 4096) in got and ("expert down", 4096, 14336) in got
    assert not any(name in ("gate/up", "down") for name, _, _ in got)
    # DeepSeek-V2-Lite: the dense MLP of its first layer, the experts and the shared experts
    got = pairs(DEEPSEEK_V2_LITE)
    assert ("gate/up", 10944, 2048) in got and ("expert gate/up", 1408, 2048) in got
    # the 2 shared experts' gate/up (2 x 1408) is the experts' fused gate_up: one layer
    assert ("expert down", 2048, 1408) in got and ("expert gate_up", 2816, 2048) in got
    assert ("shared expert gate_up", 5632, 2048) in got


def test_bad_model_inputs_name_the_flag():
    with pytest.raises(UserError, match="hidden_size and num_attention_heads"):
        model_shapes.layers_of_config({"model_type": "bert"})
    with pytest.raises(UserError, match="--layers: '4096' is not NxK"):
        model_shapes.parse_layers("4096")
    with pytest.raises(UserError, match="--batch='8:1'"):
        model_shapes.batch_sizes("8:1", 4)


def test_batch_sizes_and_calls():
    assert model_shapes.batch_sizes("1:8192", 14) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
                                                      1024, 2048, 4096, 8192]
    assert model_shapes.batch_sizes("300,1,16", 20) == [1, 16, 300]
    calls = model_shapes.model_calls([model_shapes.Layer("o", 64, 32),
                                      model_shapes.Layer("lm_head", 1000, 32)], [1, 300])
    # the LM head only at batch sizes a server gives it
    assert [c.key for c in calls] == [(1, 64, 32), (300, 64, 32), (1, 1000, 32)]
    assert calls[0].options == (("layout", "nt"),)


def test_plan_balances_and_is_deterministic():
    calls = [Call((m, n, 4096)) for m in (1, 64, 1024, 8192) for n in (1024, 4096, 14336)]
    plan = shards.plan(calls, 3)
    assert sorted(c.key for s in plan for c in s) == sorted(c.key for c in calls)
    assert plan == shards.plan(list(calls), 3)
    loads = [sum(model_shapes.cost(c) for c in s) for s in plan]
    # the costliest first, each to the least loaded: no shard exceeds another by more than a call
    assert max(loads) - min(loads) <= max(model_shapes.cost(c) for c in calls)
    assert shards.plan(calls, 1) == [calls]


def test_merge_keeps_the_table_order_and_refuses_overlaps():
    algos = (tuning.TunedAlgo(0, "a", "f0"), tuning.TunedAlgo(1, "b", "f1"))
    base = tuning.Table("mm", ("M", "N", "K"), algos, (tuning.Device("G", 90, "tune", (
        tuning.Point((8, 8, 8), (1.0, 2.0), 0, ""), tuning.Point((1, 8, 8), (1.0, 2.0), 0, ""))),))
    a = tuning.Table("mm", base.key, algos, (tuning.Device("G", 90, "tune", (
        tuning.Point((8, 8, 8), (3.0, 2.0), 1, ""),)),))
    b = tuning.Table("mm", base.key, algos, (tuning.Device("G", 90, "tune", (
        tuning.Point((4, 8, 8), (1.0, 2.0), 0, ""),)),))
    merged = shards.merge(base, [a, b])
    assert merged == shards.merge(base, [b, a])  # not the order the workers finished in
    assert [(p.key, p.winner) for p in merged.device(90).points] == [
        ((1, 8, 8), 0), ((4, 8, 8), 0), ((8, 8, 8), 1)]
    with pytest.raises(UserError, match="shards 0 and 1 both measured 8x8x8"):
        shards.merge(base, [a, a])


def test_visible_devices(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert shards.visible_devices(3) == ["0", "1", "2"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    assert shards.visible_devices(2) == ["4", "6"]


LAYERS = ("--layers=64x64,128x32,96x48", "--batch=1:4096", "--batch_count=4")


def test_tuning_a_model_on_three_fake_gpus_equals_one(tmp_path, fake_dir):
    p1, one = run_tune(tmp_path / "one", fake_dir, flags=LAYERS + ("--gpus=1",))
    p3, three = run_tune(tmp_path / "three", fake_dir, flags=LAYERS + ("--gpus=3",))
    keys = sorted(p.key for p in three.device(90).points)
    assert keys == sorted((m, n, k) for n, k in ((64, 64), (128, 32), (96, 48))
                          for m in (1, 16, 256, 4096))
    assert three.to_json() == one.to_json()  # the merge is deterministic
    assert three.device(80) is not None  # the other SM's device is kept
    for i in range(3):
        assert f"shard {i} of 3" in p3.stderr
    assert "3 GPUs (0, 1, 2), one tuning process each" in p3.stderr
    # again with --missing_only: the table has every point, no shard measures one
    p3, again = run_tune(tmp_path / "again", fake_dir, device=three.device(90),
                         flags=LAYERS + ("--gpus=3", "--missing_only"))
    assert again.to_json() == three.to_json()
    assert ": algo " not in p3.stderr and p3.stderr.count(": 0 shapes in") == 3
