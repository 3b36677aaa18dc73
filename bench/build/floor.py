"""The floor of the build benchmark: triton.compile in one warm process, per specialization.

    python3 floor.py --kernels_dir DIR [--rounds N] [--execroot DIR --params P...] --out FLOOR.json META.json...

Reads the specializations from the variant metadata JSONs that the build wrote (so they are
exactly the ones Bazel compiled: argument types, hints, constexprs, num_warps, num_stages,
num_ctas, target), imports each kernel file once from --kernels_dir, compiles one
specialization untimed to warm the process up, and then times `triton.compile` for every
specialization, --rounds times (round-robin), each time with a fresh, empty Triton cache
directory (as the compile tool does, so that nothing is a cache hit). `import triton` and the
kernel imports are outside the timed region: this is the cost of compiling, nothing else.

With --execroot and --params (the TritonCompile actions' param files, left in bazel-out by the
build), it also times our compile tool in the same warm process (triton_aot.compile.compile, exactly the
actions' arguments, outputs redirected to a scratch folder), interleaved with the floor: the
difference between the two is the tool's own overhead, the rest of a Bazel action's time is
Bazel's and the process start's.

The floor uses only triton's public compile API (ASTSource, GPUTarget, triton.compile), not triton_aot.
Runs under the interpreter the TritonCompile actions use (run_build_bench starts it in the
same rootfs), so both sides run the same Python and the same triton wheel.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def load_module(path: Path):
    name = f"rules_triton_floor_{path.stem}"  # the tool imports the kernel file as path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def triton_type(t: dict) -> str:
    """Triton's spelling of a record's argument type (its JSON form, core/arg_type.py's)."""
    if t["kind"] == "pointer":
        return "*" + ("k" if t["const"] else "") + t["elem"]
    if t["kind"] == "tensordesc":
        return f"tensordesc<{t['elem']}[{', '.join(map(str, t['block']))}]>"
    return t["name"]


def triton_args(meta: dict):
    """(signature, constexprs, attrs) for ASTSource, from variant metadata."""
    import triton.language as tl
    signature, constexprs, attrs = {}, {}, {}
    for index, arg in enumerate(meta["args"]):
        name = arg["name"]
        if arg["type"]["kind"] == "constexpr":
            value = arg["value"]
            if isinstance(value, str) and value.startswith("tl."):
                value = getattr(tl, value[3:])
            signature[name] = "constexpr"
            constexprs[name] = value
        elif arg["hint"] == 1:
            signature[name] = "constexpr"
            constexprs[name] = 1
        else:
            signature[name] = triton_type(arg["type"])
            if arg["hint"] == 16:
                attrs[(index, )] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


def compile_one(fn, meta: dict, scratch: Path) -> float:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    cache = Path(tempfile.mkdtemp(prefix="cache_", dir=scratch))
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    signature, constexprs, attrs = triton_args(meta)
    target = GPUTarget(meta["target"]["backend"], meta["target"]["arch"], meta["target"]["warp_size"])
    options = {"num_warps": meta["num_warps"], "num_stages": meta["num_stages"],
               "num_ctas": meta["num_ctas"],
               "launch_cooperative_grid": meta["launch_cooperative_grid"],
               "launch_pdl": meta["launch_pdl"]}
    start = time.perf_counter()
    compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target,
                              options=options)
    elapsed = time.perf_counter() - start
    if len(compiled.asm["cubin"]) == 0:
        raise RuntimeError(f"{meta['symbol']}: empty cubin")
    shutil.rmtree(cache, ignore_errors=True)
    return elapsed


def tool_argv(params: Path, scratch: Path) -> list[str]:
    """The action's arguments (multiline param file) with every --out_X redirected to scratch."""
    argv = []
    for line in params.read_text().splitlines():
        if line.startswith("--out_") and "=" in line:
            flag, _, path = line.partition("=")
            line = f"{flag}={scratch / Path(path).name}"
        if line:
            argv.append(line)
    return argv


def run_tool(argv: list[str], execroot: Path) -> float:
    from triton_aot.compile import compile as tool
    import io
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(execroot)
    try:
        start = time.perf_counter()
        code = tool.run_command_line(argv, err)
        elapsed = time.perf_counter() - start
    finally:
        os.chdir(cwd)
    if code != 0:
        raise RuntimeError(f"triton_aot.compile.compile failed: {err.getvalue()[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels_dir", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--execroot", type=Path, default=None)
    parser.add_argument("--params", type=Path, nargs="*", default=[])
    parser.add_argument("metadata", nargs="+", type=Path)
    args = parser.parse_args()

    sys.dont_write_bytecode = True  # no __pycache__ next to the kernels
    metas = [json.loads(p.read_text()) for p in sorted(args.metadata)]
    params = {p.name.split(".")[0]: p for p in args.params}
    with_tool = bool(args.execroot and params)
    if with_tool:
        for rel in ("external/rules_triton~", "external/_main~", "."):
            if (args.execroot / rel / "triton_aot" / "compile" / "compile.py").exists():
                sys.path.insert(0, str(args.execroot / rel))
                break
    scratch = Path(tempfile.mkdtemp(prefix="rules_triton_floor_"))
    os.environ["TRITON_HOME"] = str(scratch)
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"  # as the compile tool
    t0 = time.perf_counter()
    import triton  # noqa: F401  (not timed per specialization)
    import_s = time.perf_counter() - t0
    modules = {}
    for meta in metas:
        name = meta["kernel_file"]
        if name not in modules:
            modules[name] = load_module(args.kernels_dir / name)
    fns = [getattr(modules[m["kernel_file"]], m["kernel_name"]) for m in metas]

    warmup_s = compile_one(fns[0], metas[0], scratch)
    out_dir = scratch / "tool_outputs"
    out_dir.mkdir()
    if with_tool:
        run_tool(tool_argv(params[metas[0]["symbol"]], out_dir), args.execroot)  # warm-up
    times: dict[str, list[float]] = {m["symbol"]: [] for m in metas}
    tool_times: dict[str, list[float]] = {m["symbol"]: [] for m in metas if m["symbol"] in params}
    for _ in range(args.rounds):
        for fn, meta in zip(fns, metas):
            times[meta["symbol"]].append(compile_one(fn, meta, scratch))
            if with_tool and meta["symbol"] in params:
                tool_times[meta["symbol"]].append(
                    run_tool(tool_argv(params[meta["symbol"]], out_dir), args.execroot))
    shutil.rmtree(scratch, ignore_errors=True)

    per_spec = {sym: statistics.median(ts) for sym, ts in times.items()}
    tool_per_spec = {sym: statistics.median(ts) for sym, ts in tool_times.items() if ts}
    result = {
        "python": sys.version.split()[0],
        "triton": triton.__version__,
        "import_triton_s": import_s,
        "warmup_compile_s": warmup_s,
        "rounds": args.rounds,
        "specializations": len(metas),
        "per_spec_s": per_spec,
        "all_times_s": times,
        "sum_of_medians_s": sum(per_spec.values()),
        "mean_per_spec_s": sum(per_spec.values()) / len(per_spec),
        "tool_per_spec_s": tool_per_spec,
        "tool_all_times_s": tool_times,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    tool_note = ""
    if tool_per_spec:
        tool_note = (f"; triton_aot.compile.compile in-process {sum(tool_per_spec.values()) / len(tool_per_spec):.3f} s")
    print(f"floor: {len(metas)} specializations, {result['mean_per_spec_s']:.3f} s mean per "
          f"specialization{tool_note} (import triton {import_s:.2f} s, not counted)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
