"""Liger-Kernel's KL divergence forward (`liger_kernel.ops.kl_div.kldiv_forward_triton`, the
installed package's own launcher), captured as a composite op on a CPU torch: the launcher
allocates with `torch.zeros`, launches `_kldiv_kernel_forward`, then reduces with torch
(`batchmean`: `out.sum() / BT`). The op must keep the reduction and keep BT dynamic; on the GPU,
`tools/gpu run captured` compares it with the launcher bit for bit.
"""

import pytest
import torch

from tests.capture import liger_composite_ops

NS = torch.ops.liger_composite


def test_schema_is_the_launchers():
    assert {k: v.split("::")[1] for k, v in liger_composite_ops.SCHEMAS.items()} == {
        "kldiv": "kldiv(Tensor y_pred, Tensor y_true, float eps) -> Tensor",
        "kldiv__0": "kldiv__0(Tensor y_ptr, Tensor gt_ptr, Tensor(a!) loss_ptr, float eps) -> ()",
    }


@pytest.mark.parametrize("rows", [77, 1000])
def test_fake_output_is_the_launchers(rows, monkeypatch):
    from liger_kernel.ops.kl_div import kldiv_forward_triton
    from torch._subclasses.fake_tensor import FakeTensorMode
    from triton.runtime.jit import JITFunction
    monkeypatch.setattr(JITFunction, "run", lambda *a, **k: None)  # the launch: no values
    with FakeTensorMode():
        y_pred, y_true = torch.empty(rows, 4096), torch.empty(rows, 4096)
        theirs = kldiv_forward_triton(y_pred, y_true, False, "batchmean", 1e-10)
        ours = NS.kldiv(y_pred, y_true, 1e-10)
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype) == (torch.Size([]), torch.float32)


def test_trace_keeps_the_reduction_and_the_dynamic_rows():
    from torch.fx.experimental.proxy_tensor import make_fx
    args = [torch.empty(77, 4096, device="meta") for _ in range(2)]
    graph = make_fx(lambda a, b: NS.kldiv(a, b, 1e-10), tracing_mode="symbolic")(*args)
    calls = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"
             and str(n.target).startswith(("aten.", "liger_composite."))
             and "sym_size" not in str(n.target)]
    assert calls == ["aten.zeros.default", "liger_composite.kldiv__0.default", "aten.sum.default",
                     "aten.div.Tensor"], graph.code
    # the division is by the rows of the call, not by the example's 512
    assert "512" not in graph.code, graph.code
