"""The transformer block on a CPU-only torch: its graphs hold only our ops, and it agrees in shape.

The ops' CUDA code needs a GPU (run_gpu.py checks the numbers there); everything here runs on
meta tensors through the ops' fake implementations: the ATen graph torch.compile(fullgraph=True)
hands its backend and the graph torch.export records contain the transformer_block ops and views
of their outputs, nothing that computes, so Inductor and AOTInductor have no kernel of their own
to generate. The attention kernel, the one kernel of this example no other test runs, is also
checked against torch's attention in Triton's interpreter (CPU).
"""

import importlib.util
import json
import math
import operator
import os
import subprocess
import sys
import tempfile
import unittest

# Inductor's cache in the test's own temporary folder, not the machine's /tmp (read at import).
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR",
                      os.path.join(os.environ.get("TEST_TMPDIR", tempfile.gettempdir()), "inductor"))

import torch  # noqa: E402

from transformer_block import block as blk  # noqa: E402

NS = "transformer_block"
BF = torch.bfloat16
# Per forward: 2 norms, 5 projections (QKV, O, gate, up, down), 1 attention, 1 SwiGLU, 2 adds.
EXPECTED_OPS = {"rms_norm": 2, "matmul": 5, "attention": 1, "swiglu": 1, "add": 2}


def meta_block():
    return blk.Block(device="meta")


def meta_x(batch=2, seq=128):
    return torch.empty(batch, seq, blk.HIDDEN, dtype=BF, device="meta")


def classify(gm):
    """(our op name -> count, [targets that are neither our ops, views nor tuple indexing])."""
    ours, other = {}, []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        t = node.target
        if isinstance(t, torch._ops.OpOverload) and t.namespace == NS:
            name = t._schema.name.split("::")[1]
            ours[name] = ours.get(name, 0) + 1
        elif isinstance(t, torch._ops.OpOverload) and t.is_view:
            continue  # aliases its input: no memory written, no FLOP
        elif t is operator.getitem:
            continue  # picks Y out of rms_norm's (Y, RSTD)
        else:
            other.append(str(t))
    return ours, other


def aten_graphs(fn, *args):
    """The ATen graphs torch.compile(fn, fullgraph=True) gives its backend (inference)."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    graphs = []

    def fw(gm, _example_inputs):
        graphs.append(gm)
        return make_boxed_func(gm.forward)

    torch._dynamo.reset()
    out = torch.compile(fn, fullgraph=True, backend=aot_autograd(fw_compiler=fw))(*args)
    return graphs, out


class BlockGraphTest(unittest.TestCase):
    def test_compile_fullgraph_only_our_ops(self):
        block, x = meta_block(), meta_x()
        with torch.no_grad():
            graphs, out = aten_graphs(block, x)
        self.assertEqual(len(graphs), 1)  # fullgraph: one graph, no break
        ours, other = classify(graphs[0])
        self.assertEqual(other, [])
        self.assertEqual(ours, EXPECTED_OPS)
        self.assertEqual((out.shape, out.dtype), (x.shape, BF))

    def test_classify_sees_torch_compute(self):
        # The same check on the torch reference finds its matmuls, attention and pointwise ops:
        # `other` is empty above because the block computes nothing outside the ops.
        block, x = meta_block(), meta_x()
        with torch.no_grad():
            graphs, _ = aten_graphs(lambda t: blk.reference(block, t), x)
        ours, other = classify(graphs[0])
        self.assertEqual(ours, {})
        text = " ".join(other)
        for op in ("aten.mm", "aten.rsqrt", "aten.add", "aten.mul"):
            self.assertIn(op, text)

    def test_inductor_generates_no_kernel(self):
        # Inductor on CPU tensors: it generates the block's code (extern calls of the ops) before
        # running it, and then the ops refuse the CPU tensors. The code must call the 11 ops and
        # define no kernel of Inductor's own (no copy, no fused pointwise op).
        from unittest import mock

        import torch._inductor.metrics as metrics
        from torch._inductor.graph import GraphLowering

        codes = []
        block = blk.Block().init_weights()
        x = torch.randn(2, 64, blk.HIDDEN, dtype=BF)
        torch._dynamo.reset()
        metrics.reset()
        # the same hook torch._inductor.utils.run_and_get_code uses, kept through the refusal
        with mock.patch.object(GraphLowering, "save_output_code", codes.append), torch.no_grad():
            with self.assertRaisesRegex(RuntimeError, "must be a CUDA tensor, got a CPU tensor"):
                torch.compile(block, fullgraph=True, backend="inductor")(x)
        self.assertEqual(len(codes), 1)
        self.assertEqual(metrics.generated_kernel_count, 0)
        calls = {name: codes[0].count(f"torch.ops.{NS}.{name}.default(") for name in EXPECTED_OPS}
        self.assertEqual(calls, EXPECTED_OPS)
        for kernel_marker in ("async_compile.cpp", "async_compile.triton", "cpp_fused", "triton_"):
            self.assertNotIn(kernel_marker, codes[0])

    def test_export_on_meta(self):
        block, x = meta_block(), meta_x(batch=1, seq=256)
        ep = torch.export.export(block, (x,))
        ours, other = classify(ep.graph_module)
        self.assertEqual(other, [])
        self.assertEqual(ours, EXPECTED_OPS)
        out = [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0]
        self.assertEqual((tuple(out.meta["val"].shape), out.meta["val"].dtype), ((1, 256, blk.HIDDEN), BF))
        # the parameters travel with the program (AOTInductor packages them)
        self.assertEqual(set(ep.state_dict), {n for n, _ in block.named_parameters()})

    def test_export_with_a_dynamic_sequence_length(self):
        # every op's schema takes sizes off its tensors (SymInt), so one program serves every
        # sequence length: the exported graph keeps seq a symbol through all 11 ops
        block, x = meta_block(), meta_x(batch=2, seq=256)
        seq = torch.export.Dim("seq", min=2, max=4096)
        ep = torch.export.export(block, (x,), dynamic_shapes=({1: seq},))
        ours, other = classify(ep.graph_module)
        # besides the ops, only size arithmetic: reading seq off x and batch * seq (rows)
        sizes = [o for o in other if o == "aten.sym_size.int" or o.startswith("<built-in function")]
        self.assertEqual((ours, other), (EXPECTED_OPS, sizes))
        self.assertIn("aten.sym_size.int", sizes)
        out = [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0].meta["val"]
        self.assertFalse(str(out.shape[1]).isdigit(), out.shape)
        self.assertEqual((out.shape[0], out.shape[2]), (2, blk.HIDDEN))

    def test_reference_agrees_in_shape_and_dtype(self):
        block = meta_block()
        for batch, seq in [(1, 1), (2, 128), (3, 77)]:
            x = meta_x(batch, seq)
            with torch.no_grad():
                got, want = block(x), blk.reference(block, x)
            self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype))
            self.assertEqual((got.shape, got.dtype), (x.shape, BF))

    def test_block_refuses_what_the_kernels_were_not_built_for(self):
        # hidden 1024 = 16 heads of 64; a 32-wide head has no kernel
        with self.assertRaisesRegex(ValueError, "hidden / heads must be 64"):
            blk.Block(hidden=1024, heads=32, device="meta")
        # a SwiGLU row of 2048 is not the 4096 the kernel was compiled for
        block = blk.Block(intermediate=2048, device="meta")
        with self.assertRaisesRegex(RuntimeError, r"swiglu: check failed: a.size\(1\) == 4096"):
            block(meta_x())


def attention_in_interpreter():
    """Runs kernels/attention.py in Triton's interpreter against torch; returns the errors.

    Needs TRITON_INTERPRET=1 before triton is first imported (triton.language's own helpers are
    @triton.jit functions decorated at import), so the test runs it in a fresh process."""
    import builtins

    import numpy as np
    import triton

    path = os.environ["ATTENTION_PY"]
    spec = importlib.util.spec_from_file_location("attention_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    # Triton 3.6's interpreter hands `range` its scalar arguments as 1-element numpy arrays,
    # which numpy >= 2 no longer converts to int; the compiled kernel never sees this.
    def as_int(v):
        v = getattr(v, "value", v)
        handle = getattr(v, "handle", None)
        return int(np.asarray(handle.data).reshape(-1)[0]) if handle is not None else int(v)

    mod.range = lambda *a: builtins.range(*[as_int(v) for v in a])
    torch.manual_seed(0)
    errs = {}
    # fp16 (the interpreter's numpy has no bf16); 77 keys: a partial last block of either size
    for causal in (True, False):
        batch, seq, heads, dim = 2, 77, 3, 64
        qkv = torch.randn(batch, seq, 3, heads, dim, dtype=torch.float16)
        q, k, v = qkv.unbind(2)  # strided views, as the block passes them
        o = torch.empty(batch, seq, heads, dim, dtype=torch.float16)
        mod.attention_kernel[(triton.cdiv(seq, 32), batch * heads)](
            q, k, v, o, 1 / math.sqrt(dim), *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
            *o.stride()[:3], heads, seq, HEAD_DIM=dim, BLOCK_M=32, BLOCK_N=16, CAUSAL=causal)
        want = torch.nn.functional.scaled_dot_product_attention(
            *(t.float().transpose(1, 2) for t in (q, k, v)), is_causal=causal).transpose(1, 2)
        errs[f"causal={causal}"] = (o.float() - want).abs().max().item()
    return errs


@unittest.skipIf(importlib.util.find_spec("triton") is None, "no triton in this interpreter")
class AttentionInterpreterTest(unittest.TestCase):
    def test_matches_torch(self):
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--attention-interpreter"],
                              env=dict(os.environ, TRITON_INTERPRET="1"), capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        errs = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertEqual(set(errs), {"causal=True", "causal=False"})
        for case, err in errs.items():
            self.assertLess(err, 2e-3, f"{case}: max abs error {err}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--attention-interpreter"]:
        print(json.dumps(attention_in_interpreter()))
    else:
        unittest.main()
