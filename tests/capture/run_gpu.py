#!/usr/bin/env python3
"""The captured ops on a GPU (`tools/gpu pack captured`, then `tools/gpu run captured`): each op
against the very launcher it was captured from, run through Triton's JIT on the same inputs.
Both sides run the same kernels with the same configs and grids, so their outputs must be
bit-identical; the op side must compile nothing (no cubin in Triton's cache nor in Inductor's
until the JIT side runs).

Every op runs at its example sizes and at two sizes no example used (the dynamic ones), in
eager mode, under torch.compile(fullgraph=True, dynamic=True), and as an AOTInductor package
exported over its dynamic sizes. `accumulate` (into a torch.zeros output) must see its output
filled with 0 in every mode. The composite ops (launchers that compute with torch: a sort
before the kernel, a reduction after it, constants, an input used only by torch, torch work
between two launches) run their torch work through torch: in eager mode they must be
bit-identical to the launcher; under torch.compile and AOTInductor, where Inductor compiles that
torch work, to the launcher under torch.compile(fullgraph=True, dynamic=True), and they must
compile none of the launcher's kernels (Inductor's own kernels for the torch work are counted). The in-place ops (Liger's RoPE, our `in_place`, which returns
None) must write their inputs in every mode. Also: decode attention against torch's attention
in fp32, and a size no example call covers refused by the size-table op.

Prints one PASS/FAIL line per check and writes captured.json into $OUT (or the suite's folder).
"""

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="captured_triton_cache_")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="captured_inductor_cache_")
sys.path[:0] = [str(HERE), str(HERE / "site"), str(HERE / "launchers")]

import torch  # noqa: E402

from gpu_checks import RESULTS, check, finish, same  # noqa: E402
MODES = ("eager", "compile", "aoti")


def cubins() -> list[str]:
    """Every cubin Triton compiled in this process (the JIT's cache and Inductor's)."""
    out = []
    for key in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR"):
        root = Path(os.environ[key])
        out += sorted(str(p) for p in root.rglob("*.cubin"))
    return out


class Case:
    """One op: inputs per size, the op's and the launcher's outputs, its dynamic dimensions."""

    def __init__(self, name, sizes, make, op, jit, dims, unseen_from=1, composite=False):
        self.name, self.sizes, self.make, self.op, self.jit, self.dims = name, sizes, make, op, jit, dims
        self.unseen_from = unseen_from  # sizes[:unseen_from] are the examples'
        self.composite = composite  # torch work in the launcher: Inductor compiles it'


def cases():
    from liger_kernel.ops.rms_norm import rms_norm_forward
    from liger_kernel.ops.rope import rope_forward
    from liger_kernel.ops.swiglu import swiglu_forward
    import serving_kernels
    from tests.capture import torch_work_launchers as ours
    liger, serving = torch.ops.liger_captured, torch.ops.serving_captured
    tw = torch.ops.torch_work_captured
    bf, dev = torch.bfloat16, "cuda"
    Dim = torch.export.Dim

    def rn(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, dtype=dtype)

    def rope_op(q, k, cos, sin):
        liger.rope(q, k, cos, sin)
        return q, k

    def in_place_op(x, out):
        tw.in_place(x, out)
        return (out,)

    def in_place_jit(x, out):
        assert ours.in_place(x, out) is None
        return (out,)

    rows, seq, batch, n = (Dim(k, min=2, max=1 << 16) for k in ("rows", "seq", "batch", "n"))
    return [
        Case("rms_norm", [2048, 77, 3000], lambda r: (rn(r, 4096), rn(4096)),
             lambda x, w: tuple(liger.rms_norm(x, w, 1e-6, 0.0)),
             lambda x, w: (lambda o: (o[0], o[2]))(rms_norm_forward(x, w, 1e-6, 0.0, "llama", False)),
             ({0: rows}, None)),
        Case("swiglu", [2048, 3, 77], lambda r: (rn(r, 4096, dtype=bf), rn(r, 4096, dtype=bf)),
             lambda a, b: (liger.swiglu(a, b, 1.0),), lambda a, b: (swiglu_forward(a, b)[2],),
             ({0: rows}, {0: rows})),
        Case("rope", [512, 77, 1000],
             lambda s: (rn(2, s, 32, 128, dtype=bf).transpose(1, 2), rn(2, s, 8, 128, dtype=bf).transpose(1, 2),
                        rn(1, s, 128, dtype=bf), rn(1, s, 128, dtype=bf)),
             rope_op, lambda q, k, cos, sin: tuple(rope_forward(q, k, cos, sin)[:2]),
             ({2: seq}, {2: seq}, {1: seq}, {1: seq})),
        Case("rms_scale", [64, 2048, 300], lambda r: (rn(r, 4096, dtype=bf), rn(4096, dtype=bf)),
             lambda x, w: (serving.rms_scale(x, w, 1e-6),),
             lambda x, w: (serving_kernels.rms_scale(x, w, 1e-6),), ({0: rows}, None), unseen_from=2),
        Case("decode_attention", [(4, 4096), (1, 1000), (3, 77)],
             lambda bs: (rn(bs[0], 32, 128, dtype=bf), rn(bs[0], bs[1], 32, 128, dtype=bf),
                         rn(bs[0], bs[1], 32, 128, dtype=bf)),
             lambda q, k, v: (serving.decode_attention(q, k, v, 0.088),),
             lambda q, k, v: (serving_kernels.decode_attention(q, k, v, 0.088),),
             ({0: batch}, {0: batch, 1: seq}, {0: batch, 1: seq})),
        Case("in_place", [4096, 77, 100000], lambda s: (rn(s), torch.zeros(s, device=dev)),
             in_place_op, in_place_jit, ({0: n}, {0: n})),
        Case("dep_twice", [4096, 1000, 17], lambda s: (rn(s),), lambda x: (tw.dep_twice(x),),
             lambda x: (ours.dep_kernel(x),), ({0: n},)),
        Case("cuda_checked", [4096, 1000, 17], lambda s: (rn(s),), lambda x: (tw.cuda_checked(x),),
             lambda x: (ours.cuda_checked(x),), ({0: n},)),
        # accumulates into torch.zeros: the op's output must be filled with 0 before the launch
        Case("accumulate", [4096, 1000, 17], lambda s: (rn(s),), lambda x: (tw.accumulate(x),),
             lambda x: (ours.accumulate_into_zeros(x),), ({0: n},)),
    ] + composite_cases(rn, n)


def _tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def composite_cases(rn, n):
    """The launchers that compute with torch (tests/capture:composite_ops)."""
    from tests.capture import torch_work_launchers as ours
    co = torch.ops.composite_captured
    out = []
    for name, count in (("sort_first", 1), ("reduce_after", 1), ("scalar_constant", 1),
                        ("through_torch_only", 2), ("torch_between", 1)):
        op, launcher = getattr(co, name), getattr(ours, name)
        out.append(Case(name, [4096, 77, 1000], lambda s, c=count: tuple(rn(s) for _ in range(c)),
                        lambda *a, op=op: _tuple(op(*a)), lambda *a, f=launcher: _tuple(f(*a)),
                        tuple({0: n} for _ in range(count)), composite=True))
    # a kernel package's own launcher that reduces with torch after its kernel (batchmean)
    from liger_kernel.ops.kl_div import kldiv_forward_triton
    lc = torch.ops.liger_composite

    def kl_inputs(rows):
        return (rn(rows, 4096).log_softmax(-1), rn(rows, 4096).softmax(-1))

    out.append(Case("liger_kldiv", [512, 77, 1000], kl_inputs,
                    lambda p, t: (lc.kldiv(p, t, 1e-10),),
                    lambda p, t: (kldiv_forward_triton(p, t, False, "batchmean", 1e-10),),
                    ({0: n}, {0: n}), composite=True))
    return out


class _Module(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def runners(case, work: Path):
    """The op in each mode: eager, torch.compile(fullgraph=True), an AOTInductor package."""
    compiled = torch.compile(case.op, fullgraph=True, dynamic=True)
    example = case.make(case.sizes[0])
    ep = torch.export.export(_Module(case.op), tuple(t.clone() for t in example),
                             dynamic_shapes=(case.dims,))  # forward(*args)
    package = torch._inductor.aoti_compile_and_package(ep, package_path=str(work / f"{case.name}.pt2"))
    aoti = torch._inductor.aoti_load_package(package)
    return {"eager": case.op, "compile": compiled, "aoti": lambda *a: tuple(aoti(*a))}


def run_op(case, work: Path) -> list:
    """The op of `case` at every size in every mode: (case, size, seen, mode, inputs, out)."""
    try:
        modes = runners(case, work)
    except Exception as e:  # noqa: BLE001 - one FAIL line, the other cases still run
        check(f"{case.name}: compiles and exports", False, f"{type(e).__name__}: {str(e)[:300]}")
        return []
    runs = []
    for i, size in enumerate(case.sizes):
        inputs = case.make(size)
        seen = "example" if i < case.unseen_from else "unseen"
        for mode in MODES:
            args = tuple(t.clone() for t in inputs)
            try:
                runs.append((case, size, seen, mode, inputs, modes[mode](*args)))
            except Exception as e:  # noqa: BLE001
                check(f"{case.name} {seen} size {size} {mode}: runs", False,
                      f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")
    return runs


def refuse_uncovered_sizes() -> None:
    serving = torch.ops.serving_captured
    try:
        serving.rms_scale(torch.ones(8, 16384, device="cuda", dtype=torch.bfloat16),
                          torch.ones(16384, device="cuda", dtype=torch.bfloat16), 1e-6)
        check("rms_scale refuses 16384 columns (no example call covers them)", False, "it ran")
    except RuntimeError as e:
        check("rms_scale refuses 16384 columns (no example call covers them)",
              "no example call of the launcher covers these sizes" in str(e), str(e).splitlines()[0][:160])


def main() -> int:
    if not torch.cuda.is_available():
        print("no GPU: skipped")
        return 77
    import liger_ops  # noqa: F401  (registers torch.ops.liger_captured)
    import serving_ops  # noqa: F401  (registers torch.ops.serving_captured)
    import torch_work_ops  # noqa: F401  (registers torch.ops.torch_work_captured)
    import composite_ops  # noqa: F401  (registers torch.ops.composite_captured)
    import liger_composite_ops  # noqa: F401  (registers torch.ops.liger_composite)
    torch.manual_seed(0)
    work = Path(tempfile.mkdtemp(prefix="captured_aoti_"))

    # The op side first: every case, size and mode, on clones of the same inputs; the ops
    # without torch work first (they must compile nothing at all), then the composites.
    runs = []
    all_cases = cases()
    for composite in (False, True):
        for case in (c for c in all_cases if c.composite == composite):
            runs += run_op(case, work)
        if not composite:
            refuse_uncovered_sizes()
            torch.cuda.synchronize()
            files = cubins()
            check("the ops compiled no Triton kernel (eager, torch.compile, AOTInductor)",
                  not files, f"{len(files)} cubins" + (f": {files[:3]}" if files else ""))
    torch.cuda.synchronize()
    # the composites' launchers' kernels
    kernels = {"scale_kernel", "add_one_kernel", "_kldiv_kernel_forward"}
    files = cubins()
    theirs = [f for f in files if Path(f).stem in kernels]
    check("the composite ops compiled none of their launchers' kernels", not theirs,
          f"{len(theirs)} launcher cubins; Inductor compiled {len(files) - len(theirs)} for "
          "their torch work")

    # The same launchers through Triton's JIT, on clones of the same inputs.
    compiled_launchers = {}
    for case, size, seen, mode, inputs, got in runs:
        jit, how = case.jit, "its launcher (JIT)"
        if case.composite and mode != "eager":  # Inductor compiles the torch work on both sides
            if case.name not in compiled_launchers:
                compiled_launchers[case.name] = torch.compile(case.jit, fullgraph=True, dynamic=True)
            jit, how = compiled_launchers[case.name], "its launcher under torch.compile (JIT)"
        try:
            want = jit(*(t.clone() for t in inputs))
        except Exception as e:  # noqa: BLE001
            check(f"{case.name} {seen} size {size} {mode}: {how} runs", False,
                  f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        results = [same(g, w) for g, w in zip(got, want)]
        ok = len(got) == len(want) and all(r[0] for r in results)
        check(f"{case.name} {seen} size {size} {mode}: bit-identical to {how}", ok,
              "; ".join(r[1] for r in results))
        if case.name == "decode_attention" and mode == "eager":
            q, kc, vc = inputs
            s = torch.einsum("bhd,bshd->bhs", q.float(), kc.float()) * 0.088
            ref = torch.einsum("bhs,bshd->bhd", s.softmax(-1), vc.float())
            err = (got[0].float() - ref).abs().max().item()
            check(f"decode_attention size {size}: matches torch's attention in fp32", err < 2e-2,
                  f"max abs err {err:.2e}")
    return finish("captured.json", HERE)


if __name__ == "__main__":
    sys.exit(main())
