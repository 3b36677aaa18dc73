"""The composite ops of launchers that compute with torch (tests/capture/torch_work_launchers.py),
on a CPU torch:

- the schema is the launcher's (every tensor it reads, also only through torch; what it
  returns, also a tensor no kernel touched), and each launch is a primitive op whose arguments
  are the tensors its kernel gets, `Tensor(a!)` those it stores to;
- on FakeTensor inputs at sizes no example used, the op's outputs have the launcher's shapes
  and dtypes;
- traced (make_fx, torch.export), the op is aten ops and the primitive kernel ops, not one
  opaque op, and the sizes stay symbolic;
- in Triton's interpreter (the primitive ops' CPU kernels replaced by the kernel launches
  themselves), the op returns what the launcher returns, bit for bit.
"""

import json
import os
import subprocess
import sys

import pytest
import torch

from tests.capture import composite_ops  # noqa: F401  (loads and registers the ops)

NS = torch.ops.composite_captured
HERE = os.path.dirname(os.path.abspath(__file__))

# launcher -> its example call's tensors (all fp32 of n elements)
LAUNCHERS = {"sort_first": 1, "reduce_after": 1, "scalar_constant": 1, "through_torch_only": 2,
             "torch_between": 1}


def test_schemas():
    assert {k: v.split("::")[1] for k, v in composite_ops.SCHEMAS.items()} == {
        "reduce_after": "reduce_after(Tensor x) -> Tensor",
        "reduce_after__0": "reduce_after__0(Tensor X, Tensor(a!) Y) -> ()",
        "scalar_constant": "scalar_constant(Tensor x) -> Tensor",
        "scalar_constant__0": "scalar_constant__0(Tensor X, Tensor ONE, Tensor(a!) Y) -> ()",
        "sort_first": "sort_first(Tensor x) -> Tensor",
        "sort_first__0": "sort_first__0(Tensor X, Tensor(a!) Y) -> ()",
        # bias reaches no kernel; the int32 zeros no kernel touches are returned
        "through_torch_only": "through_torch_only(Tensor x, Tensor bias) -> (Tensor, Tensor)",
        "through_torch_only__0": "through_torch_only__0(Tensor X, Tensor(a!) Y) -> ()",
        "torch_between": "torch_between(Tensor x) -> Tensor",
        "torch_between__0": "torch_between__0(Tensor X, Tensor(a!) Y) -> ()",
        "torch_between__1": "torch_between__1(Tensor X, Tensor(a!) Y) -> ()",
    }


def _launcher(name):
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    from tests.capture import torch_work_launchers
    return getattr(torch_work_launchers, name)


def _flat(value):
    return list(value) if isinstance(value, tuple) else [value]


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
@pytest.mark.parametrize("n", [77, 1000])
def test_fake_outputs_are_the_launchers(name, n, monkeypatch):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from triton.runtime.jit import JITFunction
    monkeypatch.setattr(JITFunction, "run", lambda *a, **k: None)  # the launches: no values
    launcher = _launcher(name)
    with FakeTensorMode():
        args = [torch.empty(n) for _ in range(LAUNCHERS[name])]
        theirs = _flat(launcher(*args))
        ours = _flat(getattr(NS, name)(*args))
    assert [(o.shape, o.dtype) for o in ours] == [(t.shape, t.dtype) for t in theirs]


# the calls a trace shows, for each op: aten ops and the primitive ops (the composite itself
# never appears)
TRACED = {
    "sort_first": ["aten.sort.default", "aten.empty_like.default", "sort_first__0"],
    "reduce_after": ["aten.empty_like.default", "reduce_after__0", "aten.sum.default",
                     "aten.div.Tensor"],
    "scalar_constant": ["aten.full.default", "aten.empty_like.default", "scalar_constant__0",
                        "aten.full.default", "aten.add.Tensor", "aten.mul.Tensor"],
    "through_torch_only": ["aten.empty_like.default", "through_torch_only__0", "aten.add.Tensor",
                           "aten.zeros.default"],
    "torch_between": ["aten.empty_like.default", "torch_between__0", "aten.mul.Tensor",
                      "aten.empty_like.default", "torch_between__1"],
}


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_trace_shows_aten_and_primitive_ops(name):
    from torch.fx.experimental.proxy_tensor import make_fx
    op = getattr(NS, name)
    args = [torch.empty(77, device="meta") for _ in range(LAUNCHERS[name])]
    graph = make_fx(lambda *a: op(*a), tracing_mode="symbolic")(*args)
    calls = [str(node.target).removeprefix("composite_captured.").removesuffix(".default")
             if "composite_captured" in str(node.target) else str(node.target)
             for node in graph.graph.nodes if node.op == "call_function"
             and str(node.target).startswith(("aten.", "composite_captured."))
             and "sym_size" not in str(node.target)]
    assert calls == TRACED[name], graph.code
    outputs = [node for node in graph.graph.nodes if node.op == "output"][0].args[0]
    first = outputs[0] if isinstance(outputs, (list, tuple)) else outputs
    shape = first.meta["val"].shape
    assert all(not str(s).isdigit() for s in shape[:1]), shape  # n stays symbolic


def test_export_functionalizes_the_primitive_ops():
    class M(torch.nn.Module):
        def forward(self, x, b):
            y, zeros = NS.through_torch_only(x, b)
            return NS.torch_between(y) + NS.reduce_after(x), zeros

    n = torch.export.Dim("n", min=2, max=1 << 20)
    args = (torch.empty(64, device="meta"), torch.empty(64, device="meta"))
    ep = torch.export.export(M(), args, dynamic_shapes=({0: n}, {0: n})).run_decompositions()
    calls = [node for node in ep.graph.nodes if node.op == "call_function"]
    kernels = [str(c.args[0]) if "auto_functionalized" in str(c.target) else str(c.target)
               for c in calls if "composite_captured" in str(c.args[0] if c.args else "")
               or "composite_captured" in str(c.target)]
    assert [k.split(".")[1] for k in kernels] == [
        "through_torch_only__0", "torch_between__0", "torch_between__1", "reduce_after__0"], ep
    assert not any(name in str(c.target) for c in calls for name in LAUNCHERS)
    outs = [o.meta["val"] for o in [x for x in ep.graph.nodes if x.op == "output"][0].args[0]]
    assert [o.dtype for o in outs] == [torch.float32, torch.int32]
    assert not str(outs[0].shape[0]).isdigit() and outs[1].shape[1] == 2


def test_compile_sees_aten_and_primitive_ops_once_for_all_sizes():
    from torch._dynamo.backends.common import aot_autograd
    graphs = []

    def forward_compiler(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x, b):
        y, zeros = NS.through_torch_only(x, b)
        return NS.sort_first(y) + NS.reduce_after(x), zeros

    torch._dynamo.reset()
    compiled = torch.compile(f, backend=aot_autograd(fw_compiler=forward_compiler),
                             fullgraph=True, dynamic=True)
    for n in (77, 1000):
        out, zeros = compiled(torch.empty(n, device="meta"), torch.empty(n, device="meta"))
        assert out.shape == (n,) and zeros.shape == (n, 2) and zeros.dtype == torch.int32
    assert len(graphs) == 1  # one graph for both sizes: n stayed dynamic
    text = graphs[0].code
    for primitive in ("through_torch_only__0", "sort_first__0", "reduce_after__0"):
        assert f"composite_captured.{primitive}" in text, text
    assert "aten.sort" in text and "aten.sum" in text and "aten.zeros" in text, text
    assert not any(f"composite_captured.{name}.default(" in text for name in LAUNCHERS), text


def run_in_interpreter():
    """Each op against its launcher, both on CPU with the kernels in Triton's interpreter: the
    primitive ops' CPU kernels launch the launchers' own kernels."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    import triton
    from tests.capture import torch_work_launchers as launchers

    def scale(X, Y):
        launchers.scale_kernel[(triton.cdiv(X.numel(), 256),)](X, Y, X.numel(), 2.0, BLOCK=256)

    def add_one(X, ONE, Y):
        launchers.add_one_kernel[(triton.cdiv(X.numel(), 256),)](X, ONE, Y, X.numel(), BLOCK=256)

    library = torch.library.Library("composite_captured", "IMPL")
    for name in composite_ops.SCHEMAS:
        if "__" in name:
            library.impl(name, add_one if name.startswith("scalar_constant") else scale, "CPU")
    errors = {}
    for name, count in LAUNCHERS.items():
        for n in (77, 1000):
            torch.manual_seed(n)
            args = [torch.randn(n) for _ in range(count)]
            theirs = _flat(getattr(launchers, name)(*[a.clone() for a in args]))
            ours = _flat(getattr(NS, name)(*[a.clone() for a in args]))
            errors[f"{name}/{n}"] = all(
                o.shape == t.shape and o.dtype == t.dtype and torch.equal(o, t)
                for o, t in zip(ours, theirs)) and len(ours) == len(theirs)
    return errors


def test_ops_return_what_the_launchers_return_in_the_interpreter():
    pytest.importorskip("triton")
    root = os.path.dirname(os.path.dirname(HERE))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--interpreter"],
                          env=dict(os.environ, TRITON_INTERPRET="1",
                                   PYTHONPATH=os.pathsep.join([root] + sys.path)),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    same = json.loads(proc.stdout.strip().splitlines()[-1])
    assert same and all(same.values()), same


if __name__ == "__main__" and sys.argv[1:] == ["--interpreter"]:
    print(json.dumps(run_in_interpreter()))
