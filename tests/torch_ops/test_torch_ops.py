"""triton_torch_library on a CPU-only torch: registration, refusals, fake implementations.

The ops' CUDA path needs a GPU (tests/torch_ops/run_gpu.py); everything before it runs here:
every check refuses before any CUDA call, and the fake implementations serve torch.compile and
torch.export on meta tensors.
"""

import pytest
import torch

from tests.torch_ops import aligned_ops, example_ops  # noqa: F401  (loads and registers the ops)

NS = torch.ops.rules_triton_test
H, BF, F = torch.float16, torch.bfloat16, torch.float32


def refusal(op, *args):
    with pytest.raises(RuntimeError) as info:
        op(*args)
    return str(info.value).splitlines()[0]


def test_schemas():
    want = {
        "matmul": "rules_triton_test::matmul(Tensor a, Tensor b) -> Tensor",
        "matmul_algo": "rules_triton_test::matmul_algo(Tensor a, Tensor b, int algo_id) -> Tensor",
        "add": "rules_triton_test::add(Tensor x, Tensor y) -> Tensor",
        "softmax": "rules_triton_test::softmax(Tensor x) -> Tensor",
        "rms_norm": "rules_triton_test::rms_norm(Tensor X, Tensor W, float eps=9.9999999999999995e-07) -> (Tensor, Tensor)",
        "swiglu": "rules_triton_test::swiglu(Tensor a, Tensor b, float gate_multiplier=1.) -> Tensor",
    }
    for name, schema in want.items():
        assert str(getattr(NS, name).default._schema) == schema
    assert set(example_ops.SCHEMAS) == set(want)
    assert str(torch.ops.rules_triton_aligned.add.default._schema) == \
        "rules_triton_aligned::add(Tensor x, Tensor y) -> Tensor"


def test_library_is_next_to_module():
    assert example_ops.LIBRARY.endswith("/libexample_ops.so")
    # importing the module again (e.g. under another name) does not register the ops twice
    example_ops._load()


def test_dtype_refused():
    assert refusal(NS.matmul, torch.ones(4, 8, dtype=H), torch.ones(8, 3)) == \
        "rules_triton_test::matmul: argument 'b' must be float16, got float32"
    assert refusal(NS.swiglu, torch.ones(2, 4096, dtype=BF), torch.ones(2, 4096, dtype=H)) == \
        "rules_triton_test::swiglu: argument 'b' must be bfloat16, got float16"
    assert refusal(NS.add, torch.ones(3, dtype=torch.int32), torch.ones(3)) == \
        "rules_triton_test::add: argument 'x' must be float32, got int32"


def test_rank_refused():
    assert refusal(NS.matmul, torch.ones(8, dtype=H), torch.ones(8, 3, dtype=H)) == \
        "rules_triton_test::matmul: argument 'a' must have at least 2 dimension(s), got 1"
    assert refusal(NS.swiglu, torch.tensor(1.0, dtype=BF), torch.tensor(1.0, dtype=BF)) == \
        "rules_triton_test::swiglu: argument 'a' must have at least 1 dimension(s), got 0"


def test_checks_refused():
    assert refusal(NS.matmul, torch.ones(4, 8, dtype=H), torch.ones(7, 3, dtype=H)) == \
        "rules_triton_test::matmul: check failed: a.size(1) == b.size(0)"
    assert refusal(NS.matmul, torch.ones(4, 8, 2, dtype=H), torch.ones(8, 3, dtype=H)) == \
        "rules_triton_test::matmul: check failed: a.dim() == 2"
    assert refusal(NS.softmax, torch.ones(4, 2048)) == \
        "rules_triton_test::softmax: check failed: x.size(1) <= 1024"
    assert refusal(NS.softmax, torch.ones(8, 4).t()) == \
        "rules_triton_test::softmax: check failed: x.stride(1) == 1"
    assert refusal(NS.swiglu, torch.ones(2, 1024, dtype=BF), torch.ones(2, 1024, dtype=BF)) == \
        "rules_triton_test::swiglu: check failed: a.size(-1) == 4096"
    assert refusal(NS.rms_norm, torch.ones(2, 64), torch.ones(32)) == \
        "rules_triton_test::rms_norm: check failed: W.size(0) == X.size(1)"
    assert refusal(NS.add, torch.ones(4), torch.ones(5)) == \
        "rules_triton_test::add: check failed: y.numel() == x.numel()"


def test_contiguity_refused():
    # add takes no strides: both tensors must be dense
    assert refusal(NS.add, torch.ones(4, 8), torch.ones(8, 4).t()) == \
        "rules_triton_test::add: argument 'y' must be contiguous"
    assert refusal(NS.swiglu, torch.ones(4096, 2, dtype=BF).t(), torch.ones(2, 4096, dtype=BF)) == \
        "rules_triton_test::swiglu: argument 'a' must be contiguous"


def test_int32_range_refused():
    # 2^31 rows of an expanded (memory-less) tensor: M does not fit the C API's int32_t
    a = torch.ones(1, 8, dtype=H).expand(2**31, 8)
    assert refusal(NS.matmul, a, torch.ones(8, 3, dtype=H)) == \
        "rules_triton_test::matmul: M = a.size(0) = 2147483648 does not fit the kernel's int32_t"


def test_algo_id_refused():
    a, b = torch.ones(4, 8, dtype=H), torch.ones(8, 3, dtype=H)
    assert refusal(NS.matmul_algo, a, b, 28) == \
        "rules_triton_test::matmul_algo: argument 'algo_id' is not an algo of matmul_tuned (0..27)"
    assert refusal(NS.matmul_algo, a, b, -1).startswith(
        "rules_triton_test::matmul_algo: argument 'algo_id' is not an algo")


def test_hints_refused_when_no_variant_takes_them():
    op = torch.ops.rules_triton_aligned.add
    buf = torch.zeros(64 + 1)
    x = buf[1:]  # 4 bytes past a 16-byte boundary
    msg = refusal(op, x, torch.zeros(64))
    assert msg.startswith("rules_triton_aligned::add: argument 'x' must be 16-byte aligned "
                          "(every variant of add_aligned assumes x_ptr:16), got address 0x"), msg
    assert refusal(op, torch.zeros(17), torch.zeros(17)) == (
        "rules_triton_aligned::add: n = x.numel() must be a multiple of 16 "
        "(every variant of add_aligned assumes n:16), got 17")


def test_device_refused_last():
    # Everything else holds: the one remaining refusal is the device.
    assert refusal(NS.matmul, torch.ones(4, 8, dtype=H), torch.ones(8, 3, dtype=H)) == \
        "rules_triton_test::matmul: argument 'a' must be a CUDA tensor, got a CPU tensor"
    assert refusal(torch.ops.rules_triton_aligned.add, torch.zeros(32), torch.zeros(32)) == \
        "rules_triton_aligned::add: argument 'x' must be a CUDA tensor, got a CPU tensor"
    x = torch.ones(2, 4096, dtype=BF)
    assert refusal(NS.swiglu, x, x) == \
        "rules_triton_test::swiglu: argument 'a' must be a CUDA tensor, got a CPU tensor"
    assert refusal(NS.rms_norm, torch.ones(2, 64), torch.ones(64)) == \
        "rules_triton_test::rms_norm: argument 'X' must be a CUDA tensor, got a CPU tensor"


def meta(*shape, dtype=F):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_fake_shapes_and_dtypes():
    assert NS.matmul(meta(64, 32, dtype=H), meta(32, 16, dtype=H)).shape == (64, 16)
    y, rstd = NS.rms_norm(meta(8, 256), meta(256))
    assert (y.shape, y.dtype, rstd.shape, rstd.dtype) == ((8, 256), F, (8,), F)
    c = NS.swiglu(meta(2, 3, 4096, dtype=BF), meta(2, 3, 4096, dtype=BF))
    assert (c.shape, c.dtype) == ((2, 3, 4096), BF)
    assert NS.add(meta(3, 5), meta(3, 5)).shape == (3, 5)
    with pytest.raises(RuntimeError, match="argument 'b' must be float16, got float32"):
        NS.matmul(meta(4, 8, dtype=H), meta(8, 3))


def _ops_in(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def test_torch_compile_fullgraph():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(a, b, x, w):
        c = NS.matmul(a, b)
        y, rstd = NS.rms_norm(x, w, 1e-5)
        return torch.relu(c) + 1, y * 2, rstd

    compiled = torch.compile(f, fullgraph=True, backend=backend)
    c, y, rstd = compiled(meta(64, 32, dtype=H), meta(32, 16, dtype=H), meta(8, 256), meta(256))
    assert (c.shape, c.dtype, y.shape, rstd.shape) == ((64, 16), H, (8, 256), (8,))
    assert len(graphs) == 1  # fullgraph: one graph, the ops inside it
    targets = _ops_in(graphs[0])
    assert NS.matmul.default in targets or NS.matmul in targets, targets
    assert NS.rms_norm.default in targets or NS.rms_norm in targets, targets
    # aot_eager traces through the fake implementations as well
    out = torch.compile(f, fullgraph=True, backend="aot_eager")(
        meta(64, 32, dtype=H), meta(32, 16, dtype=H), meta(8, 256), meta(256))
    assert out[0].shape == (64, 16)


def test_torch_compile_refuses_through_fake():
    f = torch.compile(lambda a, b: NS.matmul(a, b), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match="argument 'b' must be float16, got float32"):
        f(meta(4, 8, dtype=H), meta(8, 3))


def test_torch_export():
    class M(torch.nn.Module):
        def forward(self, a, b, x, y):
            return NS.matmul(a, b), NS.add(x, y)

    ep = torch.export.export(M(), (meta(64, 32, dtype=H), meta(32, 16, dtype=H), meta(5), meta(5)))
    targets = _ops_in(ep.graph_module)
    assert NS.matmul.default in targets and NS.add.default in targets, targets
    outs = [n for n in ep.graph.nodes if n.op == "output"][0].args[0]
    assert outs[0].meta["val"].shape == (64, 16) and outs[0].meta["val"].dtype == H
