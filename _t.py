import sys; sys.path.insert(0, "bazel-bin/tests/capture")
import torch
import composite_ops
print(composite_ops.SCHEMAS)
from torch.fx.experimental.proxy_tensor import make_fx
NS = torch.ops.composite_captured
for name in ["sort_first", "reduce_after", "scalar_constant", "through_torch_only", "torch_between"]:
    op = getattr(NS, name)
    args = (torch.empty(77, device="meta"),) * (2 if name == "through_torch_only" else 1)
    out = op(*args)
    print(name, [ (o.shape, o.dtype) for o in (out if isinstance(out, tuple) else (out,))])
    g = make_fx(lambda *a: op(*a), tracing_mode="symbolic")(*args)
    print([str(n.target) for n in g.graph.nodes if n.op == "call_function"])
class M(torch.nn.Module):
    def forward(self, x, b):
        return NS.through_torch_only(x, b)[0].sum() + NS.reduce_after(x)
n = torch.export.Dim("n", min=2, max=1 << 20)
ep = torch.export.export(M(), (torch.empty(64, device="meta"), torch.empty(64, device="meta")), dynamic_shapes=({0: n}, {0: n}))
print(ep.graph)
ep = ep.run_decompositions()
print([str(n.target) for n in ep.graph.nodes if n.op == "call_function"])
