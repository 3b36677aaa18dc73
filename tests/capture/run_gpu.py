#!/usr/bin/env python3
"""The captured ops on a GPU (`tools/gpu pack captured`, then `tools/gpu run captured`): each op
against the very launcher it was captured from, run through Triton's JIT on the same inputs.
Both sides run the same kernels with the same configs and grids, so their outputs must be
bit-identical; the op side must compile nothing (Triton's cache stays empty until the JIT side
runs). Also: decode attention against torch's attention in fp32, sizes the examples never used
(the dynamic ones), and a size no example call covers refused by the size-table op.

Prints one PASS/FAIL line per check and writes captured.json into $OUT (or the suite's folder).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="captured_triton_cache_")
sys.path[:0] = [str(HERE), str(HERE / "site"), str(HERE / "launchers")]

import torch  # noqa: E402

RESULTS = []


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append({"check": name, "pass": bool(ok), "detail": detail})
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def same(a, b) -> tuple[bool, str]:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, f"shape/dtype {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} {b.dtype}"
    diff = (a.float() - b.float()).abs().max().item() if a.numel() else 0.0
    return torch.equal(a, b), f"max abs diff {diff:g}"


def cache_files() -> list[str]:
    root = Path(os.environ["TRITON_CACHE_DIR"])
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def main() -> int:
    if not torch.cuda.is_available():
        print("no GPU: skipped")
        return 77
    import liger_ops  # noqa: F401  (registers torch.ops.liger_captured)
    import serving_ops  # noqa: F401  (registers torch.ops.serving_captured)
    liger, serving = torch.ops.liger_captured, torch.ops.serving_captured
    bf, f32, dev = torch.bfloat16, torch.float32, "cuda"
    torch.manual_seed(0)

    # Inputs first, then every op call, before the JIT side runs anything.
    cases = {}
    for rows in (1, 77, 2048):
        x, w = torch.randn(rows, 4096, device=dev), torch.randn(4096, device=dev)
        cases[f"rms_norm rows={rows}"] = (x, w, liger.rms_norm(x, w, 1e-6, 0.0))
    for rows in (3, 2048):
        a, b = (torch.randn(rows, 4096, device=dev, dtype=bf) for _ in range(2))
        cases[f"swiglu rows={rows}"] = (a, b, liger.swiglu(a, b, 1.0))
    for seq in (77, 512):
        q = torch.randn(2, seq, 32, 128, device=dev, dtype=bf).transpose(1, 2)
        k = torch.randn(2, seq, 8, 128, device=dev, dtype=bf).transpose(1, 2)
        cos, sin = (torch.randn(1, seq, 128, device=dev, dtype=bf) for _ in range(2))
        before = [t.clone() for t in (q, k, cos, sin)]
        liger.rope(q, k, cos, sin)
        cases[f"rope seq={seq}"] = (before, (q, k))
    for rows, cols in ((5, 1024), (64, 1024), (300, 4096), (3000, 4096)):
        x, w = torch.randn(rows, cols, device=dev, dtype=bf), torch.randn(cols, device=dev, dtype=bf)
        cases[f"rms_scale {rows}x{cols}"] = (x, w, serving.rms_scale(x, w, 1e-6))
    for batch, seq in ((1, 1000), (4, 4096), (3, 77)):
        q = torch.randn(batch, 32, 128, device=dev, dtype=bf)
        kc, vc = (torch.randn(batch, seq, 32, 128, device=dev, dtype=bf) for _ in range(2))
        cases[f"decode_attention batch={batch} seq={seq}"] = (q, kc, vc, serving.decode_attention(q, kc, vc, 0.088))
    try:
        serving.rms_scale(torch.ones(8, 16384, device=dev, dtype=bf),
                          torch.ones(16384, device=dev, dtype=bf), 1e-6)
        check("rms_scale refuses 16384 columns (no example call covers them)", False, "it ran")
    except RuntimeError as e:
        check("rms_scale refuses 16384 columns (no example call covers them)",
              "no example call of the launcher covers these sizes" in str(e), str(e).splitlines()[0][:160])
    torch.cuda.synchronize()
    files = cache_files()
    check("the ops compiled no Triton kernel", not files, f"{len(files)} cache files")

    # The same launchers through Triton's JIT.
    from liger_kernel.ops.rms_norm import rms_norm_forward
    from liger_kernel.ops.rope import rope_forward
    from liger_kernel.ops.swiglu import swiglu_forward
    import serving_kernels
    for name, case in cases.items():
        if name.startswith("rms_norm"):
            x, w, (y, rstd) = case
            jy, _, jrstd, *_ = rms_norm_forward(x, w, 1e-6, 0.0, "llama", False)
            ok1, d1 = same(y, jy)
            ok2, d2 = same(rstd, jrstd)
            check(f"{name}: Y and RSTD bit-identical to Liger's wrapper (JIT)", ok1 and ok2, f"Y {d1}, RSTD {d2}")
        elif name.startswith("swiglu"):
            a, b, c = case
            ok, d = same(c, swiglu_forward(a, b)[2])
            check(f"{name}: bit-identical to Liger's wrapper (JIT)", ok, d)
        elif name.startswith("rope"):
            before, (q, k) = case
            jq, jk, _, _ = rope_forward(*before)
            ok1, d1 = same(q, jq)
            ok2, d2 = same(k, jk)
            check(f"{name}: q and k rotated in place bit-identical to Liger's wrapper (JIT)", ok1 and ok2, f"q {d1}, k {d2}")
        elif name.startswith("rms_scale"):
            x, w, y = case
            ok, d = same(y, serving_kernels.rms_scale(x, w, 1e-6))
            check(f"{name}: bit-identical to its launcher (JIT)", ok, d)
        else:
            q, kc, vc, out = case
            ok, d = same(out, serving_kernels.decode_attention(q, kc, vc, 0.088))
            check(f"{name}: both launches bit-identical to the launcher's (JIT)", ok, d)
            s = torch.einsum("bhd,bshd->bhs", q.float(), kc.float()) * 0.088
            ref = torch.einsum("bhs,bshd->bhd", s.softmax(-1), vc.float())
            err = (out.float() - ref).abs().max().item()
            check(f"{name}: matches torch's attention in fp32", err < 2e-2, f"max abs err {err:.2e}")
    passed = sum(r["pass"] for r in RESULTS)
    print(f"\n{passed}/{len(RESULTS)} checks passed")
    out = Path(os.environ.get("OUT") or HERE)
    out.mkdir(parents=True, exist_ok=True)
    (out / "captured.json").write_text(json.dumps({
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "checks": RESULTS}, indent=1) + "\n")
    return 0 if passed == len(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
