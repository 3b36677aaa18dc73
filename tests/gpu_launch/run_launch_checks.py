#!/usr/bin/env python3
"""GPU checks of issue 14's launch features, each against the Triton JIT of the same source and
config (bit-identical output; GPU time of back-to-back launches, AOT / JIT):

  rmsnorm      row-wise kernel launched over `n_rows`, a launch argument the kernel never gets
               (algo 1 with maxnreg=128)
  persistent   persistent kernel over min(NUM_SMS, tiles) programs (algo 1 restricted to cuda:90
               with maxnreg=128; algo 2 restricted to cuda:80, so on an sm_90 GPU it must return
               CUDA_ERROR_NO_BINARY_FOR_GPU and launch nothing)
  desc_scale   device-side tensor descriptors: needs global scratch, served from the reusable
               per-stream buffer; also CUDA-graph capture + replay (scratch as graph memory
               nodes) and two host threads on two streams

    python3 tests/gpu_launch/run_launch_checks.py [--out DIR]

Needs python3 with torch, triton and absl-py, a C compiler and an sm_90 GPU; no Bazel. Builds the
libraries with this checkout's tools (python -m triton_aot.compile / link, cc). Writes
launch_checks.json to --out (default $OUT, else tests/gpu_launch/results). Exit 1 on any failure.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
KERNELS = HERE / "kernels.py"

CUDA_SUCCESS = 0
CUDA_ERROR_NO_BINARY_FOR_GPU = 209

# name -> kernel, signature, launch_args, grid, algos (constexprs, num_warps, extra flags), targets
LIBS = {
    "rmsnorm": dict(
        kernel="rmsnorm_rows", signature="*fp32:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32, BLOCK",
        launch_args="n_rows: i32", grid="n_rows",
        algos=[({"BLOCK": 4096}, 8, {}), ({"BLOCK": 4096}, 4, {"maxnreg": 128})],
        targets=["cuda:80", "cuda:90"]),
    "persistent": dict(
        kernel="persistent_axpy", signature="*fp32:16, *fp32:16, *fp32:16, i32:16, fp32, BLOCK",
        launch_args="tiles: i32", grid="min(NUM_SMS, tiles)",
        algos=[({"BLOCK": 1024}, 4, {}),
               ({"BLOCK": 2048}, 8, {"maxnreg": 128, "algo_targets": "cuda:90"}),
               ({"BLOCK": 512}, 4, {"algo_targets": "cuda:80"})],
        targets=["cuda:80", "cuda:90"]),
    "desc_scale": dict(
        kernel="desc_scale", signature="*fp32:16, *fp32:16, i32:16, i32:16, fp32, BM, BN",
        launch_args="", grid="cdiv(M, {BM}), cdiv(N, {BN})",
        algos=[({"BM": 64, "BN": 64}, 4, {})], targets=["cuda:90"]),
}


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}\n{p.stdout}\n{p.stderr}")
    return p


def build(name: str, spec: dict, work: Path) -> ctypes.CDLL:
    import triton
    env = dict(os.environ, PYTHONPATH=str(REPO))
    records = []
    for ai, (consts, warps, extra) in enumerate(spec["algos"]):
        grid = spec["grid"]
        for k, v in consts.items():
            grid = grid.replace("{" + k + "}", str(v))
        allowed = extra.get("algo_targets", "").split(",") if extra.get("algo_targets") else None
        for target in spec["targets"]:
            if allowed and target not in allowed:
                continue
            sym = f"{name}_a{ai}_sm{target.split(':')[1]}"
            cmd = [sys.executable, "-m", "triton_aot.compile", f"--kernel_path={KERNELS}",
                   f"--kernel_name={spec['kernel']}", f"--signature={spec['signature']}",
                   "--constexprs=" + ",".join(f"{k}={v}" for k, v in consts.items()),
                   f"--grid={grid}", f"--num_warps={warps}", "--num_stages=3",
                   f"--target={target}", f"--symbol={sym}", f"--algo_index={ai}",
                   f"--out_json={work / sym}.json", f"--out_cubin={work / sym}.cubin"]
            if spec["launch_args"]:
                cmd.append(f"--launch_args={spec['launch_args']}")
            if "maxnreg" in extra:
                cmd.append(f"--maxnreg={extra['maxnreg']}")
            if allowed:
                cmd.append(f"--algo_targets={extra['algo_targets']}")
            sh(cmd, env=env)
            records.append(str(work / f"{sym}.json"))
    sh([sys.executable, "-m", "triton_aot.link", f"--name={name}", f"--out_c={work / name}.c",
        f"--out_h={work / name}.h", *records], env=env)
    inc = Path(triton.__file__).parent / "backends" / "nvidia" / "include"
    so = work / f"lib{name}.so"
    sh(["cc", "-std=gnu11", "-O2", "-fPIC", "-shared", f"-I{inc}", f"-I{REPO / 'runtime'}",
        f"-I{work}", str(work / f"{name}.c"), str(REPO / "runtime" / "trt_runtime.c"), "-o",
        str(so), "-ldl", "-lpthread"])
    return ctypes.CDLL(str(so))


def gpu_time_ms(torch, fn, iters=200, rounds=5):
    """Median over rounds of the mean GPU time of `iters` back-to-back calls (CUDA events)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / iters)
    return sorted(times)[len(times) // 2]


def compare_times(torch, aot, jit):
    """AOT and JIT timed alternately (3 pairs), so clock drift hits both alike."""
    ta, tj = [], []
    for _ in range(3):
        ta.append(gpu_time_ms(torch, aot))
        tj.append(gpu_time_ms(torch, jit))
    a, j = sorted(ta)[1], sorted(tj)[1]
    return {"aot_us": round(a * 1000, 3), "jit_us": round(j * 1000, 3), "aot_over_jit": round(a / j, 4)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    args = ap.parse_args()
    import torch
    import triton
    sys.path.insert(0, str(HERE))
    import kernels as K

    dev = "cuda"
    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    results = {"device": props.name, "sm": f"{props.major}{props.minor}",
               "num_sms": props.multi_processor_count, "torch": torch.__version__,
               "triton": triton.__version__, "checks": {}, "failures": []}
    checks = results["checks"]

    def check(name, ok, **info):
        checks[name] = dict(ok=bool(ok), **info)
        if not ok:
            results["failures"].append(name)
        print(("PASS " if ok else "FAIL ") + name + (f" {info}" if info else ""), flush=True)

    work = Path(tempfile.mkdtemp(prefix="trt_launch_"))
    t0 = time.time()
    libs = {name: build(name, spec, work) for name, spec in LIBS.items()}
    results["build_seconds"] = round(time.time() - t0, 1)
    U64, I32, F32, INT = ctypes.c_uint64, ctypes.c_int32, ctypes.c_float, ctypes.c_int
    libs["rmsnorm"].rmsnorm.argtypes = [U64, U64, U64, U64, I32, I32, F32, I32, INT]
    libs["persistent"].persistent.argtypes = [U64, U64, U64, U64, I32, F32, I32, INT]
    libs["desc_scale"].desc_scale.argtypes = [U64, U64, U64, I32, I32, F32, INT]
    stream = lambda: torch.cuda.current_stream().cuda_stream
    p = lambda t: t.data_ptr()

    # ---- row-wise over n_rows
    rows, cols = 4096, 4096
    x = torch.randn(rows, cols, device=dev)
    w = torch.randn(cols, device=dev)
    for algo, (consts, warps, extra) in enumerate(LIBS["rmsnorm"]["algos"]):
        out_a = torch.full_like(x, float("nan"))
        out_j = torch.full_like(x, float("nan"))
        aot = lambda: libs["rmsnorm"].rmsnorm(stream(), p(x), p(w), p(out_a), cols, cols, 1e-6,
                                              rows, algo)
        jit = lambda: K.rmsnorm_rows[(rows,)](x, w, out_j, cols, cols, 1e-6, num_warps=warps,
                                              num_stages=3, **consts, **(
                                                  {"maxnreg": extra["maxnreg"]} if "maxnreg" in extra else {}))
        r = aot()
        jit()
        torch.cuda.synchronize()
        check(f"rmsnorm_a{algo}_bit_identical", r == 0 and torch.equal(out_a, out_j), status=r)
        check(f"rmsnorm_a{algo}_time", True, **compare_times(torch, aot, jit))
    # zero rows: success, nothing written
    sentinel = torch.full((4, 16), 7.0, device=dev)
    r = libs["rmsnorm"].rmsnorm(stream(), p(sentinel), p(w), p(sentinel), 16, 16, 1e-6, 0, 0)
    torch.cuda.synchronize()
    check("rmsnorm_zero_rows", r == 0 and bool(torch.all(sentinel == 7.0)), status=r)

    # ---- persistent over min(NUM_SMS, tiles)
    n = 1 << 26
    xa, ya = torch.randn(n, device=dev), torch.randn(n, device=dev)
    for algo, (consts, warps, extra) in enumerate(LIBS["persistent"]["algos"]):
        out_a = torch.full_like(xa, float("nan"))
        out_j = torch.full_like(xa, float("nan"))
        tiles = triton.cdiv(n, consts["BLOCK"])
        aot = lambda: libs["persistent"].persistent(stream(), p(xa), p(ya), p(out_a), n, 1.5,
                                                    tiles, algo)
        jit = lambda: K.persistent_axpy[(min(props.multi_processor_count, tiles),)](
            xa, ya, out_j, n, 1.5, num_warps=warps, num_stages=3, **consts,
            **({"maxnreg": extra["maxnreg"]} if "maxnreg" in extra else {}))
        if extra.get("algo_targets") == "cuda:80" and results["sm"] != "80":
            r = aot()
            torch.cuda.synchronize()
            check(f"persistent_a{algo}_no_variant_on_this_gpu",
                  r == CUDA_ERROR_NO_BINARY_FOR_GPU and bool(torch.isnan(out_a).all()), status=r)
            continue
        r = aot()
        jit()
        torch.cuda.synchronize()
        check(f"persistent_a{algo}_bit_identical", r == 0 and torch.equal(out_a, out_j), status=r)
        check(f"persistent_a{algo}_time", True, **compare_times(torch, aot, jit))
    # few tiles: fewer programs than SMs still cover everything
    small = 3 * 1024 + 48  # n:16 is the variants' hint
    out_a = torch.full((small,), float("nan"), device=dev)
    out_j = torch.full((small,), float("nan"), device=dev)
    tiles = triton.cdiv(small, 1024)
    r = libs["persistent"].persistent(stream(), p(xa), p(ya), p(out_a), small, 1.5, tiles, 0)
    K.persistent_axpy[(min(props.multi_processor_count, tiles),)](
        xa, ya, out_j, small, 1.5, BLOCK=1024, num_warps=4, num_stages=3)
    torch.cuda.synchronize()
    check("persistent_few_tiles", r == 0 and torch.equal(out_a, out_j), status=r)

    # ---- device-side descriptors: global scratch from the per-stream buffer
    triton.set_allocator(lambda size, align, s: torch.empty(size, dtype=torch.int8, device=dev))
    M, N = 4096, 4096
    xd = torch.randn(M, N, device=dev)
    out_a = torch.full_like(xd, float("nan"))
    out_j = torch.full_like(xd, float("nan"))
    aot = lambda: libs["desc_scale"].desc_scale(stream(), p(xd), p(out_a), M, N, 0.5, 0)
    jit = lambda: K.desc_scale[(triton.cdiv(M, 64), triton.cdiv(N, 64))](
        xd, out_j, M, N, 0.5, BM=64, BN=64, num_warps=4, num_stages=3)
    r = aot()
    jit()
    torch.cuda.synchronize()
    check("desc_scale_bit_identical", r == 0 and torch.equal(out_a, out_j), status=r)
    check("desc_scale_time", True, **compare_times(torch, aot, jit))
    # small problem: launch-bound, where per-launch scratch allocation used to show
    Ms = 256
    xs = torch.randn(Ms, Ms, device=dev)
    os_a, os_j = torch.empty_like(xs), torch.empty_like(xs)
    # launch-bound: no per-call Python beyond the ctypes call (stream and pointers taken once)
    s0, pxs, pos = stream(), p(xs), p(os_a)
    fn = libs["desc_scale"].desc_scale
    aot_s = lambda: fn(s0, pxs, pos, Ms, Ms, 0.5, 0)
    jit_s = lambda: K.desc_scale[(Ms // 64, Ms // 64)](xs, os_j, Ms, Ms, 0.5, BM=64, BN=64,
                                                       num_warps=4, num_stages=3)
    # launch-bound: these times include each side's host launch overhead (ctypes here)
    check("desc_scale_small_time", True, **compare_times(torch, aot_s, jit_s))
    # the same AOT launches with the reusable buffer (torch's stream) and with per-launch
    # cuMemAllocAsync/cuMemFreeAsync (CU_STREAM_PER_THREAD never reuses), GPU time per launch
    try:
        pts = torch.cuda.ExternalStream(2)  # CU_STREAM_PER_THREAD
        with torch.cuda.stream(pts):
            per_launch = gpu_time_ms(torch, lambda: fn(2, pxs, pos, Ms, Ms, 0.5, 0))
        reused = gpu_time_ms(torch, aot_s)
        check("desc_scale_small_reused_vs_per_launch_scratch", True,
              reused_us=round(reused * 1000, 3), per_launch_us=round(per_launch * 1000, 3))
    except Exception as e:  # noqa: BLE001 (informational only)
        check("desc_scale_small_reused_vs_per_launch_scratch", True, skipped=repr(e))

    # CUDA graph: capture two launches (different inputs), replay after changing the inputs
    xg1, xg2 = torch.randn(M, N, device=dev), torch.randn(M, N, device=dev)
    og1, og2 = torch.empty_like(xg1), torch.empty_like(xg2)
    g = torch.cuda.CUDAGraph()
    statuses = []
    with torch.cuda.graph(g):
        statuses.append(libs["desc_scale"].desc_scale(stream(), p(xg1), p(og1), M, N, 2.0, 0))
        statuses.append(libs["desc_scale"].desc_scale(stream(), p(xg2), p(og2), M, N, -1.0, 0))
    ok = statuses == [0, 0]
    for _ in range(3):
        xg1.copy_(torch.randn(M, N, device=dev))
        xg2.copy_(torch.randn(M, N, device=dev))
        og1.fill_(float("nan"))
        og2.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        ok = ok and torch.equal(og1, xg1 * 2.0) and torch.equal(og2, -xg2)
    check("desc_scale_graph_replay", ok, statuses=statuses)
    # ordinary launches after the capture still use (and still fit) the stream's buffer
    r = aot()
    torch.cuda.synchronize()
    check("desc_scale_after_graph", r == 0 and torch.equal(out_a, out_j), status=r)

    # two host threads, two streams, growing sizes: each stream its own buffer
    errors = []

    def worker(seed):
        s = torch.cuda.Stream()
        gen = torch.Generator(device=dev).manual_seed(seed)
        with torch.cuda.stream(s):
            for k in range(40):
                m = 64 * (1 + (k * 7 + seed) % 32)
                a = torch.randn(m, 512, device=dev, generator=gen)
                o = torch.full_like(a, float("nan"))
                st = libs["desc_scale"].desc_scale(s.cuda_stream, p(a), p(o), m, 512, 3.0, 0)
                s.synchronize()
                if st != 0 or not torch.equal(o, a * 3.0):
                    errors.append((seed, k, st))
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("desc_scale_two_threads_two_streams", not errors, errors=errors[:5])

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "launch_checks.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({k: v for k, v in results.items() if k != "checks"}, indent=1))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
