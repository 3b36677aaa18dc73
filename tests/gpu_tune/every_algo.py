#!/usr/bin/env python3
"""every_algo: on the GPU machine, every algo of the tuned matmul libraries through
NAME(stream, ..., algo_id) on operands the tuning sweep never makes: sizes that are not
multiples of 16 (the generic variant), padded rows, a column-major C, C as a column slice of a
wider matrix, a misaligned A, and M = 1. Each result is compared with torch.matmul, and the
memory around C must be untouched (the split-K algos zero C before the launch: reset_to_zero
must zero C and nothing else). The persistent TMA algos fall back to pointer loads where the
layout rules TMA out; the split-K algos zero a column-major C through its column pitch.

    python3 tests/gpu_tune/every_algo.py .gpu/tune/matmul_tuned .gpu/tune/matmul_tuned_bf16 \\
        [--out DIR]

Packs from `tools/gpu pack every_algo` (`tools/gpu run every_algo` runs this). Exit code 0 when every algo passes every case (or
reports "exceeds resources", a launch the device refuses), 1 otherwise, 77 without a GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from triton_aot.tuning import tune  # noqa: E402

SENTINEL = 7.0  # what the memory around C holds; it must still hold it afterwards


def cases(torch, dtype):
    """(name, a, b, c view, the tensor C lives in) for each layout."""
    dev = "cuda"

    def ab(M, N, K):
        return (torch.randn((M, K), device=dev, dtype=dtype) / K ** 0.5,
                torch.randn((K, N), device=dev, dtype=dtype))

    out = []
    a, b = ab(33, 47, 61)
    c_all = torch.full((33, 47), SENTINEL, device=dev, dtype=dtype)
    out.append(("odd sizes (generic variant)", a, b, c_all, c_all))
    a, b = ab(1, 1024, 8192)
    c_all = torch.full((1, 1024), SENTINEL, device=dev, dtype=dtype)
    out.append(("M = 1 decode", a, b, c_all, c_all))
    a_pad = torch.randn((200, 520), device=dev, dtype=dtype) / 512 ** 0.5
    a = a_pad[:, :512]  # rows 520 apart
    b = torch.randn((512, 256), device=dev, dtype=dtype)
    c_all = torch.full((200, 264), SENTINEL, device=dev, dtype=dtype)
    out.append(("padded rows of A and C", a, b, c_all[:, :256], c_all))
    a, b = ab(64, 96, 256)
    c_all = torch.full((96, 64), SENTINEL, device=dev, dtype=dtype)
    out.append(("column-major C", a, b, c_all.t(), c_all))
    a, b = ab(48, 64, 512)
    c_all = torch.full((48, 192), SENTINEL, device=dev, dtype=dtype)
    out.append(("C a column slice of a wider matrix", a, b, c_all[:, 64:128], c_all))
    a_buf = torch.randn((128 * 256 + 1,), device=dev, dtype=dtype) / 16.0
    a = a_buf[1:].view(128, 256)  # 2 bytes past a 16-byte boundary
    b = torch.randn((256, 128), device=dev, dtype=dtype)
    c_all = torch.full((128, 128), SENTINEL, device=dev, dtype=dtype)
    out.append(("A misaligned by one element", a, b, c_all, c_all))
    return out


def run_library(pack: Path, torch) -> tuple[list[dict], int]:
    p = tune.open_pack(pack)
    name, lib, dtype = p.name, p.lib, p.dtype(torch)
    driver = tune.Driver()
    stream = torch.cuda.current_stream().cuda_stream
    rows, failures = [], 0
    for case, a, b, c, c_all in cases(torch, dtype):
        M, K = a.shape
        N = b.shape[1]
        ref = torch.matmul(a.float(), b.float())
        outside = torch.ones_like(c_all, dtype=torch.bool)  # True: not an element of C
        mask_view = outside.as_strided(c.shape, c.stride(),
                                       c.storage_offset() - c_all.storage_offset())
        mask_view.fill_(False)
        for algo in range(lib.num_algos):
            c_all.fill_(SENTINEL)
            args = [a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K, a.stride(0), a.stride(1),
                    b.stride(0), b.stride(1), c.stride(0), c.stride(1)]
            r = lib.fn(stream, *args, algo)
            torch.cuda.synchronize()
            row = {"library": name, "case": case, "algo": algo, "info": lib.infos[algo]}
            if r != 0:
                row["result"] = ("exceeds resources" if r in tune.RESOURCE_ERRORS
                                 else f"failed: {driver.name(r)}")
                if r not in tune.RESOURCE_ERRORS:
                    failures += 1
            else:
                err = (c.float() - ref).abs().max().item()
                ok = bool(torch.allclose(c.float(), ref, atol=3e-2, rtol=3e-2))
                kept = bool((c_all[outside] == SENTINEL).all().item())
                row.update(max_abs_err=err, correct=ok, outside_untouched=kept,
                           result="pass" if ok and kept else "FAIL")
                failures += 0 if ok and kept else 1
            rows.append(row)
            if row["result"] not in ("pass", "exceeds resources"):
                print(f"every_algo: {name} {case} algo {algo} ({lib.infos[algo]}): {row}",
                      flush=True)
    return rows, failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("packs", nargs="+", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("every_algo: SKIP: no torch")
        return 77
    if not torch.cuda.is_available():
        print("every_algo: SKIP: no GPU")
        return 77
    all_rows, failures = [], 0
    for pack in args.packs:
        rows, f = run_library(pack, torch)
        all_rows += rows
        failures += f
    passed = sum(1 for r in all_rows if r["result"] == "pass")
    refused = sum(1 for r in all_rows if r["result"] == "exceeds resources")
    summary = (f"every_algo: {passed} passed, {refused} refused by the device (exceeds "
               f"resources), {failures} failed, of {len(all_rows)} (library, layout, algo) runs "
               f"on {torch.cuda.get_device_name()}")
    print(summary, flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "every_algo.json").write_text(json.dumps(
            {"summary": summary, "rows": all_rows}, indent=1) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
