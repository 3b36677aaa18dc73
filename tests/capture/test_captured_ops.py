"""The torch ops generated from captured launchers (tests/capture:liger_ops), on a CPU torch:
their schema is the launcher's, the static sizes the examples fixed are checked, and the fakes
keep the dynamic sizes symbolic under torch.export."""

import pytest
import torch

from tests.capture import liger_ops  # noqa: F401  (loads and registers the ops)

NS = torch.ops.liger_captured
BF, F = torch.bfloat16, torch.float32


def test_schemas_are_the_launchers():
    assert liger_ops.SCHEMAS == {
        "rms_norm": "liger_captured::rms_norm(Tensor X, Tensor W, float eps, float offset) -> (Tensor, Tensor)",
        "rope": "liger_captured::rope(Tensor(a!) q, Tensor(b!) k, Tensor cos, Tensor sin) -> ()",
        "swiglu": "liger_captured::swiglu(Tensor a, Tensor b, float gate_multiplier) -> Tensor",
    }


def test_static_size_of_the_examples_is_checked():
    with pytest.raises(RuntimeError, match=r"check failed: X.size\(1\) == 4096"):
        NS.rms_norm(torch.ones(2, 1024), torch.ones(1024), 1e-6, 0.0)
    with pytest.raises(RuntimeError, match="argument 'b' must be bfloat16"):
        NS.swiglu(torch.ones(2, 4096, dtype=BF), torch.ones(2, 4096), 1.0)


def test_export_keeps_rows_dynamic():
    class M(torch.nn.Module):
        def forward(self, x, w, a, b):
            y, rstd = NS.rms_norm(x, w, 1e-6, 0.0)
            return y, rstd, NS.swiglu(a, b, 1.0)

    rows = torch.export.Dim("rows", min=2, max=1 << 20)
    args = (torch.empty(8, 4096, device="meta"), torch.empty(4096, device="meta"),
            torch.empty(8, 4096, dtype=BF, device="meta"), torch.empty(8, 4096, dtype=BF, device="meta"))
    ep = torch.export.export(M(), args, dynamic_shapes=({0: rows}, None, {0: rows}, {0: rows}))
    outs = [n for n in ep.graph.nodes if n.op == "output"][0].args[0]
    shapes = [tuple(str(s) for s in o.meta["val"].shape) for o in outs]
    assert shapes[0][1] == "4096" and shapes[1] == (shapes[0][0],) and shapes[2][1] == "4096"
    assert not shapes[0][0].isdigit(), shapes  # the rows stay a symbol
    targets = {n.target for n in ep.graph.nodes if n.op == "call_function"}
    assert NS.rms_norm.default in targets and NS.swiglu.default in targets
