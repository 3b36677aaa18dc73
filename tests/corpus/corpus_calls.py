"""How each corpus kernel is called: the one place that turns a corpus_manifest.json entry
(tests/corpus/corpus.bzl) into a launch, for the Triton JIT and for the built library.

Used by tests/corpus/run_corpus_gpu.py (AOT vs JIT, bit for bit and kernel time) and by
bench/torch/cold_start_bench.py (the first call in a fresh process). Imports nothing heavy at
module level: torch and triton are passed in by the caller, which decides when it pays for
importing them.
"""
from __future__ import annotations

import ast
import ctypes
import importlib
import re
from pathlib import Path

C_SCALAR = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
            "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16,
            "u32": ctypes.c_uint32, "u64": ctypes.c_uint64, "fp32": ctypes.c_float,
            "fp64": ctypes.c_double}


def split_signature(text: str) -> list[str]:
    return [e.strip() for e in text.split(",") if e.strip()]


def runtime_types(signature: str) -> list[str]:
    """The types of the run-time entries (constexpr entries are names)."""
    types = []
    for entry in split_signature(signature):
        base = entry.split(":")[0].strip()
        if base.startswith("*") or base in C_SCALAR or base in ("fp16", "bf16"):
            types.append(base)
    return types


def torch_dtype(torch, name: str):
    return {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
            "i64": torch.int64, "i32": torch.int32}[name]


def make_args(torch, entry: dict, types: list[str], seed: int):
    """(values, tensors) for one launch: tensors are made from a fixed seed, so two calls give
    equal inputs."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    tokens = entry["gpu_args"].split()
    if len(tokens) != len(types):
        raise SystemExit(f"{entry['name']}: gpu_args has {len(tokens)} tokens for "
                         f"{len(types)} run-time arguments")
    values, tensors = [], []
    for token, ty in zip(tokens, types):
        m = re.fullmatch(r"(in|io|out):(\w+)\[([\d,]+)\]", token)
        if m:
            kind, dtype, dims = m.group(1), torch_dtype(torch, m.group(2)), \
                [int(d) for d in m.group(3).split(",")]
            if kind == "out" or not dtype.is_floating_point:
                t = torch.zeros(dims, dtype=dtype, device="cuda")
            else:
                t = torch.randn(dims, dtype=dtype, device="cuda", generator=gen)
            values.append(t)
            tensors.append(t)
        elif ty.startswith("fp"):
            values.append(float(token))
        else:
            values.append(int(token))
    return values, tensors


def jit_function(module_name: str, kernel: str):
    """The @triton.jit function itself (unwrapping autotuners and heuristics)."""
    fn = getattr(importlib.import_module(module_name), kernel)
    while not hasattr(fn, "arg_names") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def runtime_names(fn) -> list[str]:
    """The names of the JIT function's run-time (not constexpr) parameters, in order."""
    return [n for n, p in zip(fn.arg_names, fn.params) if not p.is_constexpr]


def constexpr_values(tl, constexprs: dict) -> dict:
    out = {}
    for k, v in constexprs.items():
        if isinstance(v, str) and v.startswith("tl."):
            v = getattr(tl, v[3:])
        out[k] = v
    return out


def grid_of(entry: dict) -> tuple:
    names = launch_arg_names(entry)
    env = dict(zip(names, entry["launch"]))
    return tuple(eval(part, {}, env) for part in entry["grid"].split(","))  # noqa: S307 - our own manifest


def launch_arg_names(entry: dict) -> list[str]:
    return [a.split(":")[0].strip() for a in entry["launch_args"]]


def jit_launcher(fn, tl, entry: dict, values: list):
    """A no-argument callable launching the JIT function on `values` with the entry's config."""
    kwargs = dict(zip(runtime_names(fn), values))
    constexprs = constexpr_values(tl, entry["constexprs"])
    grid = grid_of(entry)

    def launch():
        fn[grid](**kwargs, **constexprs, num_warps=entry["num_warps"])
    return launch


def c_function(lib, entry: dict, types: list[str] | None = None):
    """The library's entry point for `entry`, with its ctypes signature set: (stream, every
    run-time argument, every launch argument, algo) -> CUresult."""
    types = runtime_types(entry["signature"]) if types is None else types
    cfunc = getattr(lib, entry["name"])
    cfunc.restype = ctypes.c_int
    argtypes = [ctypes.c_void_p]
    for ty in types:
        argtypes.append(ctypes.c_uint64 if ty.startswith("*") else C_SCALAR[ty])
    argtypes += [ctypes.c_int32] * len(entry["launch"]) + [ctypes.c_int]
    cfunc.argtypes = argtypes
    return cfunc


def c_values(values: list) -> list:
    """Tensors as device pointers, scalars as they are."""
    return [v.data_ptr() if hasattr(v, "data_ptr") else v for v in values]


def c_launcher(cfunc, entry: dict, values: list, stream: int):
    """A no-argument callable launching the library's entry point on `values` (raises on a
    non-zero CUresult)."""
    args = c_values(values)
    launch_values = list(entry["launch"])
    name = entry["name"]

    def launch():
        rc = cfunc(stream, *args, *launch_values, 0)
        if rc != 0:
            raise RuntimeError(f"{name}: the C API returned CUresult {rc}")
    return launch


def runtime_names_from_source(site: Path, entry: dict) -> list[str] | None:
    """The kernel's run-time parameter names, read from its source file without importing it (so
    without importing triton): every parameter not annotated `constexpr`. None when the file or
    the function is not found, or when the count does not match the signature's run-time
    entries."""
    path = site.joinpath(*entry["module"].split(".")).with_suffix(".py")
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == entry["kernel"]:
            params = node.args.posonlyargs + node.args.args
            names = [a.arg for a in params
                     if a.annotation is None or "constexpr" not in ast.unparse(a.annotation)]
            if len(names) == len(runtime_types(entry["signature"])):
                return names
            return None
    return None
