"""The ops captured from launchers of ours (tests/capture/torch_work_launchers.py), on a CPU torch:

- the in-place launcher (writes into `out`, returns None) is `Tensor(a!) out`: torch.export
  keeps the call and its write (an op torch took as pure would be dropped, `out` left as it was);
  `x`, which the kernel only reads, is not marked;
- the kernel file of a py_library dep and the launcher that checks `x.is_cuda` build ops;
- the launcher that accumulates into `torch.zeros` builds an op whose C++ fills its output with
  0 before the launch (tests/torch_ops/test_generator.py checks the fill's place);
- each launcher computes what torch does in Triton's interpreter.
"""

import json
import os
import subprocess
import sys

import pytest
import torch

from tests.capture import torch_work_ops  # noqa: F401  (loads and registers the ops)

NS = torch.ops.torch_work_captured


def test_schemas_are_the_launchers():
    assert torch_work_ops.SCHEMAS == {
        "accumulate": "torch_work_captured::accumulate(Tensor x) -> Tensor",
        "cuda_checked": "torch_work_captured::cuda_checked(Tensor x) -> Tensor",
        "dep_twice": "torch_work_captured::dep_twice(Tensor x) -> Tensor",
        "in_place": "torch_work_captured::in_place(Tensor x, Tensor(a!) out_arg) -> ()",
    }


def test_in_place_write_survives_export():
    class M(torch.nn.Module):
        def forward(self, x, out):
            NS.in_place(x, out)  # its result unused: only the mutation keeps the call
            return x + 1

    n = torch.export.Dim("n", min=2, max=1 << 20)
    args = (torch.empty(64, device="meta"), torch.empty(64, device="meta"))
    ep = torch.export.export(M(), args, dynamic_shapes=({0: n}, {0: n})).run_decompositions()
    calls = [str(node.args) for node in ep.graph.nodes if node.op == "call_function"]
    assert any("in_place" in c for c in calls), ep.graph  # kept, functionalized
    # out is written back; x, which the kernel only reads, is not
    assert list(ep.graph_signature.user_inputs_to_mutate.values()) == ["out"], ep.graph_signature


def test_fakes_keep_n_symbolic():
    class M(torch.nn.Module):
        def forward(self, x):
            return NS.dep_twice(x), NS.cuda_checked(x)

    n = torch.export.Dim("n", min=2, max=1 << 20)
    ep = torch.export.export(M(), (torch.empty(77, device="meta"),), dynamic_shapes=({0: n},))
    outs = [o.meta["val"] for o in [x for x in ep.graph.nodes if x.op == "output"][0].args[0]]
    assert all(not str(o.shape[0]).isdigit() and o.dtype == torch.float32 for o in outs)


def launchers_in_interpreter():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    from tests.capture import torch_work_launchers as launchers
    torch.manual_seed(0)
    x = torch.randn(1000)
    out = torch.zeros(1000)
    assert launchers.in_place(x, out) is None
    return {"in_place": (out - 2 * x).abs().max().item(),
            "dep_kernel": (launchers.dep_kernel(x) - 2 * x).abs().max().item(),
            "accumulate": (launchers.accumulate_into_zeros(x) - x).abs().max().item()}


def test_launchers_match_torch_in_the_interpreter():
    pytest.importorskip("triton")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--interpreter"],
                          env=dict(os.environ, TRITON_INTERPRET="1"), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    errs = json.loads(proc.stdout.strip().splitlines()[-1])
    assert errs == {"in_place": 0.0, "dep_kernel": 0.0, "accumulate": 0.0}, errs


if __name__ == "__main__" and sys.argv[1:] == ["--interpreter"]:
    print(json.dumps(launchers_in_interpreter()))
