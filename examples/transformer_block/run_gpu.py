"""The transformer block on a GPU: eager, torch.compile and AOTInductor, with no Triton JIT.

Runs on the GPU machine (python3, torch with CUDA, no Bazel, no network) in the folder
`tools/gpu pack block` filled (.gpu/block/): `tools/gpu run block`.

The block (transformer_block/block.py) runs three ways on the same weights and input:
  eager     Block.forward, each op a call into libblock_ops.so
  compile   torch.compile(block, fullgraph=True) with Inductor; its code must call the 11 ops
            and define no kernel of its own
  aoti      torch.export + torch._inductor.aoti_compile_and_package here, then
            torch._inductor.aoti_load_package in a fresh process that loads the op library first
Each output is compared with the torch reference in fp32 (block.reference on upcast weights):
its error must stay within a small multiple of the error torch's own bf16 block makes.

No Triton kernel may be compiled at run time, in any mode: TRITON_CACHE_DIR is a fresh empty
folder that must stay empty (this process and the AOTI child, whatever compiled it), and Triton's
compilation listener and JIT post-compile hook count compiles in each process (Inductor compiles
in this process: TORCHINDUCTOR_COMPILE_THREADS=1). results.json and results.md go to $OUT when
it is set, else to results/ next to this file. Exit code 0 only when every check passed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the transformer_block package (block.py, block_ops.py, the .so)

BATCH, SEQ = 2, 512  # 1024 tokens: the matmuls are 1024 x 1024 x {3072, 1024, 4096} and back
EXPECTED_OPS = {"rms_norm": 2, "matmul": 5, "attention": 1, "swiglu": 1, "add": 2}


def fresh_dirs():
    """Empty Triton and Inductor caches for this run; before torch or triton is imported."""
    root = tempfile.mkdtemp(prefix="block_gpu_")
    for var, sub in [("TRITON_CACHE_DIR", "triton_cache"), ("TORCHINDUCTOR_CACHE_DIR", "inductor_cache")]:
        os.makedirs(os.path.join(root, sub))
        os.environ[var] = os.path.join(root, sub)
    # Inductor compiles in this process (no worker pool), where the hooks below see it.
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    return root


def cache_files():
    out = []
    for d, _, files in os.walk(os.environ["TRITON_CACHE_DIR"]):
        out += [os.path.relpath(os.path.join(d, f), os.environ["TRITON_CACHE_DIR"]) for f in files]
    return sorted(out)


class TritonCompiles:
    """Counts triton.compile calls (the compilation listener sees Inductor's and the JIT's,
    cache hits apart) and JITFunction compiles (jit_post_compile_hook) in this process."""

    def __init__(self):
        self.compiled, self.cache_hits, self.jit, self.names = 0, 0, 0, []
        self.available = False

    def install(self):
        try:
            from triton import knobs
        except ImportError:
            return self  # no triton here: only the cache folder can tell
        self.available = True
        previous_listener = knobs.compilation.listener
        previous_hook = knobs.runtime.jit_post_compile_hook

        def listener(*, src, metadata, metadata_group, times, cache_hit):
            if cache_hit:
                self.cache_hits += 1
            else:
                self.compiled += 1
            self.names.append(str(getattr(src, "name", src))[:80])
            if previous_listener:
                previous_listener(src=src, metadata=metadata, metadata_group=metadata_group,
                                  times=times, cache_hit=cache_hit)

        def post_compile(*args, **kwargs):
            self.jit += 1
            return previous_hook(*args, **kwargs) if previous_hook else False

        knobs.compilation.listener = listener
        knobs.runtime.jit_post_compile_hook = post_compile
        return self

    def snapshot(self):
        return {"compiled": self.compiled, "cache_hits": self.cache_hits, "jit": self.jit}

    def since(self, before):
        now = self.snapshot()
        return {k: now[k] - before[k] for k in now}


def errors(got, ref32, ref16):
    """Max and mean abs error of got and of torch's bf16 block against the fp32 reference."""
    g, r, t = got.float(), ref32.float(), ref16.float()
    return {
        "max_abs_err": (g - r).abs().max().item(),
        "mean_abs_err": (g - r).abs().mean().item(),
        "torch_bf16_max_abs_err": (t - r).abs().max().item(),
        "torch_bf16_mean_abs_err": (t - r).abs().mean().item(),
        "finite": bool(got.isfinite().all().item()),
    }


def accurate(e):
    # bf16 rounding of every intermediate dominates both errors; a wrong mask, weight or
    # stride makes errors of the activations' own size (about 1), far above these bounds.
    return (e["finite"] and e["mean_abs_err"] <= 2 * e["torch_bf16_mean_abs_err"] + 1e-3
            and e["max_abs_err"] <= 4 * e["torch_bf16_max_abs_err"] + 1e-2)


def time_ms(torch, fn, x, iters=20):
    for _ in range(3):
        fn(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn(x)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def aoti_child(package, io_path, result_path):
    """The AOTI mode's second half, in a fresh process: op library first, then the package."""
    counter = TritonCompiles().install()
    import torch
    import torch._inductor  # aoti_load_package; torch does not import Inductor by itself

    t0 = time.perf_counter()
    from transformer_block import block_ops  # noqa: F401  (registers torch.ops.transformer_block)
    loaded_ops = time.perf_counter() - t0
    runner = torch._inductor.aoti_load_package(package)
    io = {k: None if v is None else v.cuda() for k, v in torch.load(io_path).items()}
    x = io["x"]
    with torch.no_grad():
        y = runner(x)
        y = y[0] if isinstance(y, (list, tuple)) else y
        y2 = runner(x)  # a second call: same kernels, same result
        y2 = y2[0] if isinstance(y2, (list, tuple)) else y2
        ms = time_ms(torch, runner, x)
        # the package was exported over a dynamic sequence length: another length, same package
        short = io.get("x_short")
        y_short = runner(short) if short is not None else None
        y_short = y_short[0] if isinstance(y_short, (list, tuple)) else y_short
    torch.cuda.synchronize()
    out = errors(y, io["ref32"], io["ref16"])
    if y_short is not None:
        out["short_seq"] = dict(errors(y_short, io["ref32_short"], io["ref16_short"]),
                                shape=list(y_short.shape))
    out.update({
        "ops_library_load_s": round(loaded_ops, 3),
        "equal_to_eager": None if io["eager"] is None else bool(torch.equal(y, io["eager"])),
        "repeatable": bool(torch.equal(y, y2)),
        "ms_per_call": round(ms, 4),
        "triton": counter.snapshot(),
        "triton_hooks": counter.available,
        "shape": list(y.shape),
        "dtype": str(y.dtype),
    })
    with open(result_path, "w") as f:
        json.dump(out, f, indent=1)


def main():
    root = fresh_dirs()
    counter = TritonCompiles().install()
    import torch

    from transformer_block import block as blk

    results = {"modes": {}, "checks": []}

    def check(name, ok, detail=""):
        results["checks"].append({"check": name, "ok": bool(ok), "detail": detail})
        print(("PASS " if ok else "FAIL ") + name + (f": {detail}" if detail else ""), flush=True)
        return ok

    env = {
        "torch": torch.__version__, "cuda": torch.version.cuda, "python": sys.version.split()[0],
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "batch": BATCH, "seq": SEQ, "hidden": blk.HIDDEN, "heads": blk.HIDDEN // blk.HEAD_DIM,
        "intermediate": blk.INTERMEDIATE, "dtype": "bfloat16",
    }
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    results["env"] = env
    print(json.dumps(env), flush=True)
    if not torch.cuda.is_available():
        check("cuda available", False)
        return finish(results)

    dev = torch.device("cuda", 0)
    gen = torch.Generator().manual_seed(0)
    block = blk.Block(device=dev).init_weights(gen)
    x = torch.randn(BATCH, SEQ, blk.HIDDEN, generator=gen).to(dev, torch.bfloat16)
    with torch.no_grad():
        block32 = blk.Block(dtype=torch.float32, device=dev)
        block32.load_state_dict({k: v.float() for k, v in block.state_dict().items()})
        ref32 = blk.reference(block32, x.float())
        ref16 = blk.reference(block, x)
    torch.cuda.synchronize()
    # The torch reference itself runs cuBLAS and torch's own kernels, not Triton: nothing yet.
    check("torch reference compiled no Triton kernel", counter.compiled == 0 and not cache_files(),
          f"{counter.compiled} compiles, {len(cache_files())} cache files")

    def run_mode(name, fn):
        before, files_before = counter.snapshot(), cache_files()
        t0 = time.perf_counter()
        try:
            info = fn() or {}
        except Exception as e:  # one line here, the traceback on stderr
            traceback.print_exc()
            info = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        info["wall_s"] = round(time.perf_counter() - t0, 2)
        info.setdefault("triton", counter.since(before))
        info["triton_cache_new_files"] = len(cache_files()) - len(files_before)
        results["modes"][name] = info
        return info

    # --- eager ----------------------------------------------------------------------------
    eager_out = {}

    def eager():
        with torch.no_grad():
            y = block(x)
            torch.cuda.synchronize()
            eager_out["y"] = y
            e = errors(y, ref32, ref16)
            # 77 tokens: M no multiple of 16 (the matmul's any-M variant), a partial attention tile
            xs = torch.randn(1, 77, blk.HIDDEN, generator=gen).to(dev, torch.bfloat16)
            e_short = errors(block(xs), blk.reference(block32, xs.float()), blk.reference(block, xs))
            e["ms_per_call"] = round(time_ms(torch, block, x), 4)
            e["torch_bf16_ms_per_call"] = round(time_ms(torch, lambda t: blk.reference(block, t), x), 4)
        e["short_seq_77"] = e_short
        return e

    info = run_mode("eager", eager)
    check("eager matches the fp32 reference", "error" not in info and accurate(info), _summary(info))
    if "error" not in info:
        check("eager, 77 tokens, matches the fp32 reference", accurate(info["short_seq_77"]),
              _summary(info["short_seq_77"]))

    # --- torch.compile (Inductor) -------------------------------------------------------------
    def compiled():
        import torch._inductor.metrics as metrics
        from torch._inductor.utils import run_and_get_code

        torch._dynamo.reset()
        metrics.reset()
        cblock = torch.compile(block, fullgraph=True)
        with torch.no_grad():
            y, codes = run_and_get_code(cblock, x)
            torch.cuda.synchronize()
            e = errors(y, ref32, ref16)
            e["ms_per_call"] = round(time_ms(torch, cblock, x), 4)
        code = "\n".join(codes)
        e["inductor_generated_kernels"] = metrics.generated_kernel_count
        e["inductor_triton_kernel_defs"] = code.count("async_compile.triton(")
        e["op_calls_in_code"] = {n: code.count(f"torch.ops.transformer_block.{n}.default(") for n in EXPECTED_OPS}
        e["equal_to_eager"] = bool(torch.equal(y, eager_out["y"])) if "y" in eager_out else None
        return e

    info = run_mode("compile", compiled)
    check("torch.compile matches the fp32 reference", "error" not in info and accurate(info), _summary(info))
    if "error" not in info:
        check("Inductor generated no kernel of its own",
              info["inductor_generated_kernels"] == 0 and info["inductor_triton_kernel_defs"] == 0,
              f"{info['inductor_generated_kernels']} generated, "
              f"{info['inductor_triton_kernel_defs']} async_compile.triton definitions")
        check("Inductor's code calls the 11 ops", info["op_calls_in_code"] == EXPECTED_OPS,
              json.dumps(info["op_calls_in_code"]))

    # --- AOTInductor --------------------------------------------------------------------------
    def aoti():
        import torch._inductor  # aoti_compile_and_package
        import torch._inductor.metrics as metrics

        work = os.path.join(root, "aoti")
        os.makedirs(work)
        metrics.reset()
        before = counter.snapshot()
        t0 = time.perf_counter()
        with torch.no_grad():
            # one program for every sequence length: each op takes its sizes off its tensors
            seq = torch.export.Dim("seq", min=2, max=4096)
            ep = torch.export.export(block, (x,), dynamic_shapes=({1: seq},))
            package = torch._inductor.aoti_compile_and_package(
                ep, package_path=os.path.join(work, "block.pt2"))
        compile_s = time.perf_counter() - t0
        names = zipfile.ZipFile(package).namelist()
        build = {
            "compile_s": round(compile_s, 1),
            "package_mb": round(os.path.getsize(package) / 2**20, 1),
            "inductor_generated_kernels": metrics.generated_kernel_count,
            "package_gpu_binaries": [n for n in names if n.endswith((".cubin", ".hsaco", ".ptx", ".fatbin"))],
            "triton_while_packaging": counter.since(before),
        }
        io_path = os.path.join(work, "io.pt")
        x_short = torch.randn(BATCH, 77, blk.HIDDEN, generator=gen).to(dev, torch.bfloat16)
        with torch.no_grad():
            ref32_short = blk.reference(block32, x_short.float())
            ref16_short = blk.reference(block, x_short)
        torch.save({"x": x.cpu(), "ref32": ref32.cpu(), "ref16": ref16.cpu(),
                    "eager": eager_out["y"].cpu() if "y" in eager_out else None,
                    "x_short": x_short.cpu(), "ref32_short": ref32_short.cpu(),
                    "ref16_short": ref16_short.cpu()}, io_path)
        result_path = os.path.join(work, "child.json")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--aoti-child", package,
                               io_path, result_path], capture_output=True, text=True)
        build["child_s"] = round(time.perf_counter() - t0, 1)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout + proc.stderr)
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            return {"error": f"AOTI child exited {proc.returncode}: {last}", **build}
        with open(result_path) as f:
            child = json.load(f)
        child["build"] = build
        return child

    # info["triton"]: the fresh process's count; build["triton_while_packaging"]: this one's.
    info = run_mode("aoti", aoti)
    check("AOTI (fresh process) matches the fp32 reference", "error" not in info and accurate(info),
          _summary(info))
    if "error" not in info:
        b = info["build"]
        check("AOTI package has no Inductor kernel",
              b["inductor_generated_kernels"] == 0 and not b["package_gpu_binaries"],
              f"{b['inductor_generated_kernels']} generated, binaries {b['package_gpu_binaries']}")
        short = info.get("short_seq")
        check("AOTI, exported over a dynamic sequence length, matches at 77 tokens",
              short is not None and accurate(short) and short["shape"][1] == 77,
              _summary(short) if short else "not run")
        check("AOTI child compiled no Triton kernel", info["triton"]["compiled"] == 0 and info["triton"]["jit"] == 0,
              json.dumps(info["triton"]) + ("" if info.get("triton_hooks") else " (no triton: hooks not installed)"))

    # --- zero Triton compiles, every mode -------------------------------------------------------
    files = cache_files()
    results["triton_cache_files"] = files
    results["triton_compiles_this_process"] = counter.snapshot()
    results["triton_hooks_installed"] = counter.available
    # Importing Triton's CUDA driver (Inductor does, to ask for the device's properties) builds
    # its device-query helper cuda_utils*.so into the cache: a C module of Triton's, no kernel.
    # Anything else there (cubins, IR, a kernel's launcher module) would be a kernel compiled.
    helpers = [f for f in files if os.path.basename(f).startswith("cuda_utils")]
    kernels = [f for f in files if f not in helpers]
    results["triton_cache_driver_helpers"] = helpers
    check("TRITON_CACHE_DIR holds no Triton kernel after all modes", not kernels,
          f"{len(kernels)} kernel files: {kernels[:5]}; Triton's driver helper: {helpers}")
    check("no triton.compile in this process (listener, JIT hook)",
          counter.compiled == 0 and counter.cache_hits == 0 and counter.jit == 0,
          json.dumps(counter.snapshot()) + (f" {counter.names[:5]}" if counter.names else ""))
    return finish(results)


def _summary(info):
    if "error" in info:
        return info["error"]
    return (f"max abs err {info['max_abs_err']:.4g} (torch bf16 {info['torch_bf16_max_abs_err']:.4g}), "
            f"mean {info['mean_abs_err']:.3g} (torch bf16 {info['torch_bf16_mean_abs_err']:.3g})")


def finish(results):
    passed = sum(c["ok"] for c in results["checks"])
    results["passed"], results["total"] = passed, len(results["checks"])
    print(f"\n{passed}/{len(results['checks'])} checks passed", flush=True)
    out = os.environ.get("OUT") or os.path.join(HERE, "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(results))
    print(f"wrote {out}/results.json and results.md", flush=True)
    return 0 if results["checks"] and passed == len(results["checks"]) else 1


def markdown(r):
    env = r.get("env", {})
    lines = [
        "# Transformer block of rules_triton torch ops on a GPU",
        "",
        f"{env.get('device')}, torch {env.get('torch')} (CUDA {env.get('cuda')}), triton "
        f"{env.get('triton')}, python {env.get('python')}. Block: hidden {env.get('hidden')}, "
        f"{env.get('heads')} heads of 64, SwiGLU {env.get('intermediate')}, bf16; input "
        f"{env.get('batch')} x {env.get('seq')} tokens. Errors against the torch block in fp32; "
        "\"torch bf16\" is torch's own block in bf16 against the same.",
        "",
        "| mode | max abs err | torch bf16 max | mean abs err | torch bf16 mean | ms/call | "
        "Triton compiles | new Triton cache files | Inductor kernels | = eager |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, m in r.get("modes", {}).items():
        if "error" in m:
            lines.append(f"| {name} | error: {m['error']} | | | | | | | | |")
            continue
        kernels = m.get("inductor_generated_kernels", m.get("build", {}).get("inductor_generated_kernels", "-"))
        t = m.get("triton", {})
        lines.append(
            f"| {name} | {m['max_abs_err']:.4g} | {m['torch_bf16_max_abs_err']:.4g} | "
            f"{m['mean_abs_err']:.3g} | {m['torch_bf16_mean_abs_err']:.3g} | {m.get('ms_per_call', '-')} | "
            f"{t.get('compiled', '-')} (+{t.get('cache_hits', 0)} hits, {t.get('jit', 0)} JIT) | "
            f"{m.get('triton_cache_new_files', '-')} | {kernels} | {m.get('equal_to_eager', '-')} |")
    eager = r.get("modes", {}).get("eager", {})
    if "torch_bf16_ms_per_call" in eager:
        lines += ["", f"torch's own bf16 block (cuBLAS, SDPA, eager): {eager['torch_bf16_ms_per_call']} ms/call."]
    aoti = r.get("modes", {}).get("aoti", {})
    if "build" in aoti:
        b = aoti["build"]
        lines += ["", f"AOTI: export + compile {b['compile_s']} s, package {b['package_mb']} MB, "
                      f"GPU binaries in the package: {len(b['package_gpu_binaries'])}; fresh process "
                      f"{b['child_s']} s (op library loaded in {aoti.get('ops_library_load_s')} s)."]
    lines += ["", f"TRITON_CACHE_DIR after every mode: {len(r.get('triton_cache_files', []))} files.", "",
              "| check | result | detail |", "|---|---|---|"]
    for c in r["checks"]:
        lines.append(f"| {c['check']} | {'PASS' if c['ok'] else 'FAIL'} | {c['detail']} |")
    lines += ["", f"{r.get('passed')}/{r.get('total')} checks passed.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aoti-child", nargs=3, metavar=("PACKAGE", "IO", "RESULT"),
                        help="internal: the AOTI mode's fresh process")
    args = parser.parse_args()
    if args.aoti_child:
        aoti_child(*args.aoti_child)
        sys.exit(0)
    sys.exit(main())
