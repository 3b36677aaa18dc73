"""Argument types of triton_torch_library ops on a CPU-only torch (the examples' scale kernel).

`scale` takes `entry = "algo"` and a defaulted argument: its module must import, with algo_id
before the defaulted alpha. `scale_head` takes `n: int`, a SymInt in the schema: a size from a
dynamic dimension stays symbolic under torch.export, and the C++ reads the int64 it carries.
"""

import pytest
import torch

from tests.torch_ops import scale_ops  # loads and registers the ops: the module must import

NS = torch.ops.rules_triton_scale


def refusal(op, *args):
    with pytest.raises(RuntimeError) as info:
        op(*args)
    return str(info.value).splitlines()[0]


def meta(*shape):
    return torch.empty(*shape, device="meta")


def test_schemas():
    want = {
        # entry = "algo": algo_id after the arguments without a default, before those with one
        "scale": "rules_triton_scale::scale(Tensor x, int algo_id, float alpha=1.) -> Tensor",
        # an int argument is a SymInt
        "scale_head": "rules_triton_scale::scale_head(Tensor x, SymInt n, float alpha=1.) -> Tensor",
    }
    for name, schema in want.items():
        assert str(getattr(NS, name).default._schema) == schema
    assert sorted(scale_ops.SCHEMAS) == sorted(want)


def test_algo_id_before_defaulted_argument():
    x = torch.ones(8)
    assert refusal(NS.scale, x, 2) == \
        "rules_triton_scale::scale: argument 'algo_id' is not an algo of scale (0..1)"
    cpu = "rules_triton_scale::scale: argument 'x' must be a CUDA tensor, got a CPU tensor"
    assert refusal(NS.scale, x, 1) == cpu
    assert refusal(NS.scale, x, 1, 0.5) == cpu
    assert NS.scale(meta(3, 5), 0).shape == (3, 5)
    assert NS.scale(meta(3, 5), algo_id=1, alpha=2.0).shape == (3, 5)


def test_symint_argument_reaches_the_checks_as_int64():
    x = torch.ones(8)
    assert refusal(NS.scale_head, x, 9) == "rules_triton_scale::scale_head: check failed: n <= x.numel()"
    assert refusal(NS.scale_head, x, -1) == "rules_triton_scale::scale_head: check failed: n >= 0"
    assert refusal(NS.scale_head, x, 2**40) == \
        "rules_triton_scale::scale_head: check failed: n <= x.numel()"
    assert refusal(NS.scale_head, x, 5) == \
        "rules_triton_scale::scale_head: argument 'x' must be a CUDA tensor, got a CPU tensor"
    assert NS.scale_head(meta(8), 5).shape == (5,)


def _outputs(ep):
    return [node.meta["val"] for node in [n for n in ep.graph.nodes if n.op == "output"][0].args[0]]


def test_torch_export_dynamic_size_into_int_argument():
    # An `int` schema argument would specialize the size: "Constraints violated (n)! ... You
    # marked n as dynamic but your code specialized it to be a constant (33)".
    class M(torch.nn.Module):
        def forward(self, x):
            return NS.scale_head(x, x.size(0), 2.0), NS.scale(x, 1)

    n = torch.export.Dim("n", max=1 << 20)
    ep = torch.export.export(M(), (meta(33),), dynamic_shapes={"x": {0: n}})
    targets = [node.target for node in ep.graph.nodes if node.op == "call_function"]
    assert NS.scale_head.default in targets and NS.scale.default in targets, targets
    head, scaled = _outputs(ep)
    assert isinstance(head.shape[0], torch.SymInt), head.shape
    assert str(head.shape[0]) == str(scaled.shape[0]), (head.shape, scaled.shape)
    # the exported program serves other lengths than the example's
    for size in (5, 40):
        got = ep.module()(meta(size))
        assert got[0].shape == (size,) and got[1].shape == (size,)


def test_torch_export_derived_size_into_int_argument():
    # a size computed from a dynamic dimension (x.size(0) // 2) stays symbolic too, and the
    # fake's checks (0 <= n <= x.numel(), true for every size) add no guard. (min=4: torch
    # itself guards a new tensor's size away from 0 and 1.)
    class M(torch.nn.Module):
        def forward(self, x):
            return NS.scale_head(x, x.size(0) // 2)

    n = torch.export.Dim("n", min=4, max=1 << 20)
    ep = torch.export.export(M(), (meta(34),), dynamic_shapes={"x": {0: n}})
    (head,) = _outputs(ep)
    assert isinstance(head.shape[0], torch.SymInt), head.shape
    assert ep.module()(meta(10)).shape == (5,)
