#!/usr/bin/env python3
"""The corpus on a GPU: each Liger-Kernel kernel built by rules_triton against the Triton JIT.

For every entry of tests/corpus/corpus.bzl (packed as corpus_manifest.json by
`tools/gpu pack corpus`), with the same source (the locked liger-kernel wheel, unpacked), the same
config and the same arguments:

  output     every tensor argument after one launch, bit for bit, AOT vs JIT
  cubin      whether the JIT compiled the very cubin that the library embeds (sha256)
  time       kernel time, AOT / JIT: the median of interleaved single launches, each timed with
             CUDA events behind a GPU sleep so that host launch cost is not counted

    python3 tests/corpus/run_corpus_gpu.py [--gpu-dir .gpu/corpus] [--out DIR]

Needs python3 with torch and triton (the same triton version as the build) and a GPU; no
Bazel, no network. Writes corpus_gpu.json and corpus_gpu.md to --out (default $OUT, else
tests/corpus/results). Exit 1 when a kernel fails to launch, differs from the JIT, or its time
ratio is outside [0.98, 1.02].
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import importlib.metadata
import json
import os
import statistics
import sys
from pathlib import Path

from corpus_calls import (c_function, c_launcher, constexpr_values, grid_of, jit_function,
                          make_args, runtime_names, runtime_types)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TIME_TOLERANCE = 0.02
REPS = 100


def same_bits(torch, a, b) -> bool:
    if a.dtype.is_floating_point:
        view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        return torch.equal(a.view(view), b.view(view))
    return torch.equal(a, b)


def jit_cubin_sha(fn) -> str | None:
    """sha256 of the cubin the JIT compiled for fn (its only specialization here)."""
    try:
        caches = fn.device_caches
        kernels = [k for cache in caches.values() for k in cache[0].values()]
        if len(kernels) != 1:
            return None
        return hashlib.sha256(kernels[0].asm["cubin"]).hexdigest()
    except Exception:  # noqa: BLE001 - the cache layout differs between triton versions
        return None


def time_launches(torch, launch_a, launch_b, reps: int) -> tuple[float, float]:
    """Median GPU time (us) of single launches of a and b, interleaved; a GPU sleep before each
    keeps the stream busy while the host enqueues, so only kernel time is measured."""
    times = ([], [])
    for _ in range(5):
        launch_a()
        launch_b()
    torch.cuda.synchronize()
    for _ in range(reps):
        for i, launch in enumerate((launch_a, launch_b)):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(200_000)
            start.record()
            launch()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times[0]), statistics.median(times[1])


def run_entry(torch, tl, lib, entry: dict, cubin_shas: set[str]) -> dict:
    name = entry["name"]
    result = {"name": name, "module": entry["module"], "kernel": entry["kernel"]}
    fn = jit_function(entry["module"], entry["kernel"])
    types = runtime_types(entry["signature"])
    constexprs = constexpr_values(tl, entry["constexprs"])
    grid = grid_of(entry)

    jit_vals, jit_tensors = make_args(torch, entry, types, seed=1234)
    aot_vals, aot_tensors = make_args(torch, entry, types, seed=1234)
    kwargs = dict(zip(runtime_names(fn), jit_vals))

    def launch_jit(kw=kwargs):
        fn[grid](**kw, **constexprs, num_warps=entry["num_warps"])

    cfunc = c_function(lib, entry, types)
    stream = torch.cuda.current_stream().cuda_stream
    launch_aot = c_launcher(cfunc, entry, aot_vals, stream)

    launch_jit()
    launch_aot()
    torch.cuda.synchronize()
    diffs = [i for i, (a, b) in enumerate(zip(jit_tensors, aot_tensors)) if not same_bits(torch, a, b)]
    result["bit_identical"] = not diffs
    if diffs:
        result["differing_tensor_args"] = diffs
    sha = jit_cubin_sha(fn)
    result["jit_cubin_sha256"] = sha
    result["cubin_identical"] = sha in cubin_shas if sha else None
    # Timing: both launch over the same buffers (the JIT's), so neither gains from where its
    # tensors happen to lie or what the L2 holds; values do not steer these kernels.
    launch_aot_on_jit_buffers = c_launcher(cfunc, entry, jit_vals, stream)

    jit_us, aot_us = time_launches(torch, launch_jit, launch_aot_on_jit_buffers, REPS)
    result.update(jit_us=round(jit_us, 3), aot_us=round(aot_us, 3),
                  time_ratio=round(aot_us / jit_us, 4))
    result["pass"] = (result["bit_identical"]
                      and abs(result["time_ratio"] - 1.0) <= TIME_TOLERANCE)
    return result


def write_markdown(path: Path, report: dict) -> None:
    lines = [f"# Corpus on the GPU: rules_triton vs the Triton JIT",
             "",
             f"{report['device']}, driver {report['driver']}, torch {report['torch']}, "
             f"triton {report['triton']}, liger-kernel {report['liger_kernel']}.",
             "",
             "Kernel time: median of interleaved single launches (CUDA events behind a GPU sleep).",
             "",
             "| kernel | built | output vs JIT | same cubin as JIT | JIT us | AOT us | AOT/JIT |",
             "|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        if "error" in r:
            lines.append(f"| {r['name']} | yes | error: {r['error']} | | | | |")
            continue
        lines.append(f"| {r['name']} (`{r['module']}.{r['kernel']}`) | yes | "
                     f"{'bit-identical' if r['bit_identical'] else 'DIFFERS'} | "
                     f"{ {True: 'yes', False: 'no', None: '?'}[r['cubin_identical']] } | "
                     f"{r['jit_us']} | {r['aot_us']} | {r['time_ratio']:.3f} |")
    lines += ["", f"{report['passed']}/{len(report['results'])} pass (bit-identical, time "
              f"within {TIME_TOLERANCE:.0%})."]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu-dir", default=str(REPO / ".gpu" / "corpus"))
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("-k", default="", help="only entries whose name contains this")
    a = ap.parse_args()
    gpu = Path(a.gpu_dir)
    if not (gpu / "libcorpus_kernels.so").is_file():
        print(f"error: {gpu}/libcorpus_kernels.so is missing: run tools/gpu pack corpus on the "
              "build machine first", file=sys.stderr)
        return 2
    sys.path.insert(0, str(gpu / "site"))
    # as in the build's compile actions (triton_adapter.hermetic_env): no line info, so the JIT's
    # cubin can be compared with the library's byte for byte
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
    import torch
    import triton
    import triton.language as tl
    import liger_kernel  # noqa: F401 - the packed source, before any kernel module

    manifest = json.loads((gpu / "corpus_manifest.json").read_text())
    cubin_shas = {hashlib.sha256(p.read_bytes()).hexdigest() for p in (gpu / "cubins").glob("*.cubin")}
    lib = ctypes.CDLL(str(gpu / "libcorpus_kernels.so"))
    torch.cuda.init()
    results = []
    for entry in manifest:
        if a.k not in entry["name"]:
            continue
        try:
            r = run_entry(torch, tl, lib, entry, cubin_shas)
        except Exception as e:  # noqa: BLE001 - one kernel's failure is reported, not fatal
            r = {"name": entry["name"], "module": entry["module"], "kernel": entry["kernel"],
                 "error": f"{type(e).__name__}: {e}"[:300], "pass": False}
        print(json.dumps(r), flush=True)
        results.append(r)
    props = torch.cuda.get_device_properties(0)
    driver = "?"
    try:
        import subprocess
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, check=False).stdout.strip() or "?"
    except OSError:
        pass
    report = {"device": props.name, "sm": f"{props.major}{props.minor}", "driver": driver,
              "torch": torch.__version__, "triton": triton.__version__,
              "liger_kernel": importlib.metadata.version("liger-kernel"),
              "passed": sum(1 for r in results if r.get("pass")), "results": results}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "corpus_gpu.json").write_text(json.dumps(report, indent=1) + "\n")
    write_markdown(out / "corpus_gpu.md", report)
    print(f"corpus: {report['passed']}/{len(results)} pass; results in {out}")
    return 0 if report["passed"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
