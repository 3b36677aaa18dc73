"""The serving-stack patterns captured from our own launchers (tests/capture/serving_kernels.py):

- rms_scale's size-table choice became dispatch: a call no example covers is refused, naming
  the conditions the examples did cover;
- decode_attention's two launches are one op, whose fake keeps batch and sequence symbolic;
- the launchers themselves compute what torch does (Triton's interpreter on CPU), so the
  captured kernels are kernels worth capturing.
"""

import builtins
import json
import math
import os
import subprocess
import sys

import pytest
import torch

from tests.capture import serving_ops  # noqa: F401  (loads and registers the ops)

NS = torch.ops.serving_captured
BF = torch.bfloat16


def test_schemas_are_the_launchers():
    assert serving_ops.SCHEMAS == {
        "decode_attention": "serving_captured::decode_attention(Tensor q, Tensor k_cache, Tensor v_cache, float sm_scale) -> Tensor",
        "rms_scale": "serving_captured::rms_scale(Tensor x, Tensor w, float eps) -> Tensor",
    }


def test_size_no_example_covers_is_refused():
    with pytest.raises(RuntimeError, match=r"rms_scale: no example call of the launcher covers "
                                           r"these sizes \(x.size\(1\) == 1024 and"):
        NS.rms_scale(torch.ones(8, 2048, dtype=BF), torch.ones(2048, dtype=BF), 1e-6)


def test_every_covered_size_passes_the_choice():
    # the choice is made before the device check: a CPU tensor of a covered size gets that far
    for rows, cols in ((8, 1024), (8, 4096), (1030, 4096)):
        with pytest.raises(RuntimeError, match="must be a CUDA tensor"):
            NS.rms_scale(torch.ones(rows, cols, dtype=BF), torch.ones(cols, dtype=BF), 1e-6)


def test_decode_attention_is_one_op_with_dynamic_sizes():
    class M(torch.nn.Module):
        def forward(self, q, k, v):
            return NS.decode_attention(q, k, v, 0.088)

    batch, seq = torch.export.Dim("batch", min=2, max=256), torch.export.Dim("seq", min=2, max=1 << 16)
    meta = dict(dtype=BF, device="meta")
    ep = torch.export.export(M(), (torch.empty(4, 32, 128, **meta), torch.empty(4, 300, 32, 128, **meta),
                                   torch.empty(4, 300, 32, 128, **meta)),
                             dynamic_shapes=({0: batch}, {0: batch, 1: seq}, {0: batch, 1: seq}))
    calls = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert calls == [NS.decode_attention.default], calls
    out = [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0].meta["val"]
    assert str(out.shape[0]) == "batch" or not str(out.shape[0]).isdigit()
    assert tuple(out.shape[1:]) == (32, 128) and out.dtype == BF


def launchers_in_interpreter():
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import serving_kernels as k

    def as_int(v):  # Triton 3.6's interpreter passes range() 1-element arrays
        v = getattr(v, "value", v)
        handle = getattr(v, "handle", None)
        return int(np.asarray(handle.data).reshape(-1)[0]) if handle is not None else int(v)

    k.range = lambda *a: builtins.range(*[as_int(v) for v in a])
    torch.manual_seed(0)
    errs = {}
    batch, heads, dim, seq = 2, 4, 16, 100  # 8 splits of 13 keys, the last one shorter
    q = torch.randn(batch, heads, dim)
    kc, vc = torch.randn(batch, seq, heads, dim), torch.randn(batch, seq, heads, dim)
    got = k.decode_attention(q, kc, vc, 1 / math.sqrt(dim))
    want = torch.nn.functional.scaled_dot_product_attention(
        q[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2))[:, :, 0]
    errs["decode_attention"] = (got - want).abs().max().item()
    for rows in (3, 1030):
        x, w = torch.randn(rows, 1000), torch.randn(1000)
        want = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        errs[f"rms_scale rows={rows}"] = (k.rms_scale(x, w, 1e-6) - want).abs().max().item()
    return errs


def test_launchers_match_torch_in_the_interpreter():
    pytest.importorskip("triton")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--interpreter"],
                          env=dict(os.environ, TRITON_INTERPRET="1"), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    errs = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(errs) == 3, errs
    for case, err in errs.items():
        assert err < 1e-4, f"{case}: max abs error {err}"


if __name__ == "__main__" and sys.argv[1:] == ["--interpreter"]:
    print(json.dumps(launchers_in_interpreter()))
