#!/usr/bin/env python3
"""Tuned kernels benchmark, on the GPU machine (python3 + torch + triton + absl-py, no Bazel),
from the repository root, after `tools/gpu pack tune_bench` packed the libraries built with
their committed tables, as users build them (`tools/gpu run tune_bench` runs these two):

    python3 bench/tune/tune_bench.py .gpu/tuned/matmul_tuned .gpu/tuned/matmul_tuned_bf16
    python3 bench/tune/tune_bench.py .gpu/tuned/rmsnorm_tuned --stem tune_rmsnorm
    python3 bench/tune/tune_bench.py --dry-run [PACKS...]      # no GPU: the sweep, leak check
    python3 bench/tune/tune_bench.py --render bench/results/tune.json.gz   # no GPU: re-render

Methods, side by side in one process, on each library's dtype:
  auto      NAME_auto(stream, args...) of the ahead-of-time library: the tuning table's choice
  jit       the same kernel file through Triton's JIT with @triton.autotune over the library's
            own configs (its records), the autotuner's do_bench shortened (warmup 3, rep 10 ms)
  cublas    (matmul) torch.matmul(a, b, out=c): cuBLAS writing into a given C, as auto does
  torch     (rmsnorm) torch.nn.functional.rms_norm(x, (n,), w, eps), eager, into a fresh output
  compiled  (rmsnorm) torch.compile of that call (static shapes), into a fresh output
The library and the JIT write into given buffers; a fresh output inside a CUDA graph is
allocated once, at capture, so it costs no GPU time in the replays that are timed.

How every method is timed (time_methods): per shape one batch size B for every method, from
the fastest method's GPU time of one launch (B launches ~ TARGET_US of GPU time, 1..MAX_BATCH);
each method captured once into a CUDA graph of B back-to-back launches (triton_aot.tuning.tune's
capture_launches); then `rounds` rounds whose method order rotates, each timing `reps` replays of
every method's graph between CUDA events, every replay queued behind a GPU busy-wait so the host
has queued the events and the replay before the GPU reaches them (no launch gap in the timing:
GPU time only). A method's time is the median over rounds of each round's median. L2: warm, the
same for all: each replay follows that method's previous replay on the same inputs, and B
launches run back to back. Split-K configs zero C with the driver's cuMemsetD2D16Async on the
stream for the JIT too (the library's reset_to_zero; a memset node in the graph), not a torch
fill kernel.

Sanity checks (a failure exits 1): where NAME_auto launches the very kernel the autotuner chose
(same config and the variant of the call's JIT hints), the two times must agree: the median
disagreement over those pairs must be <= 2%; and directly, on a few shapes, NAME(..., algo)
against the JIT launched with that algo's config, for every algo.

Evaluation shapes are drawn from a seed of their own (never the tuning seed), stratified, and
checked against the tuning inputs (none may be a tuning point): matmul: LLM linear layers in
torch.nn.Linear's layout (B = W.t(), W row-major [N, K]) with M log-uniform in 1..8192, random
log-uniform shapes with B = W.t() and with row-major B; rmsnorm: LLM hidden sizes with rows
log-uniform, random shapes. Reported per stratum and per baseline-time stratum, with targets.

Writes STEM.json, STEM.md and (with matplotlib) STEM.png into --out.
"""

from __future__ import annotations

import argparse
import ast
import ctypes
import importlib.util
import inspect
import json
import math
import platform
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

KERNELS = REPO / "examples" / "kernels"
FORMAT = "rules_triton.tune_bench.v2"
# The evaluation shapes' seed: the tuning inputs draw theirs from another (matmul_tuning.py).
EVAL_SEED = 20261127
TARGET_US, MAX_BATCH = 200.0, 200  # GPU time of one graph replay; launches per graph at most
BUSY_WAIT_US = 300.0  # the head start the host gets before each timed replay
SAME_KERNEL_TOLERANCE = 0.02  # the median disagreement allowed where both run one kernel
JIT_TARGET = 1.0  # NAME_auto at least as fast as the autotuned JIT, geomean, in every stratum
TIME_STRATA = (("<10us", 0.0, 10.0), ("10-100us", 10.0, 100.0), (">100us", 100.0, math.inf))

# (model, layer, N, K) of open models' linear layers: y = x @ W.t() with W [N, K].
LLM_LAYERS = [
    ("Llama-3-8B", "q/o", 4096, 4096), ("Llama-3-8B", "k/v", 1024, 4096),
    ("Llama-3-8B", "gate/up", 14336, 4096), ("Llama-3-8B", "down", 4096, 14336),
    ("Llama-3-8B", "lm_head", 128256, 4096),
    ("Qwen2.5-7B", "q/o", 3584, 3584), ("Qwen2.5-7B", "k/v", 512, 3584),
    ("Qwen2.5-7B", "gate/up", 18944, 3584), ("Qwen2.5-7B", "down", 3584, 18944),
    ("Phi-3-mini", "qkv", 9216, 3072), ("Phi-3-mini", "o", 3072, 3072),
    ("Phi-3-mini", "gate_up", 16384, 3072), ("Phi-3-mini", "down", 3072, 8192),
    ("Llama-3.2-1B", "q/o", 2048, 2048), ("Llama-3.2-1B", "k/v", 512, 2048),
    ("Llama-3.2-1B", "gate/up", 8192, 2048), ("Llama-3.2-1B", "down", 2048, 8192),
    ("Gemma-2-2B", "q", 2048, 2304), ("Gemma-2-2B", "k/v", 1024, 2304),
    ("Gemma-2-2B", "o", 2304, 2048), ("Gemma-2-2B", "gate/up", 9216, 2304),
    ("Gemma-2-2B", "down", 2304, 9216), ("Gemma-2-2B", "lm_head", 256000, 2304),
    ("Qwen2.5-0.5B", "q/o", 896, 896), ("Qwen2.5-0.5B", "k/v", 128, 896),
    ("Qwen2.5-0.5B", "gate/up", 4864, 896), ("Qwen2.5-0.5B", "down", 896, 4864),
    ("DeepSeek-V2-Lite", "expert gate/up", 1408, 2048),
    ("DeepSeek-V2-Lite", "expert down", 2048, 1408),
]
# Hidden sizes of the same models: the rows RMSNorm normalises.
# (model, layer, N, K) of open models whose layers the tuning inputs never had: no tuning
# point has their (N, K), in any layout (tune_bench_test checks it). --held_out measures
# NAME_auto on these against the per-shape best of the library's configs (the oracle).
HELD_OUT_LAYERS = [
    ("Qwen2.5-14B", "q/o", 5120, 5120), ("Qwen2.5-14B", "k/v", 1024, 5120),
    ("Qwen2.5-14B", "qkv", 7168, 5120), ("Qwen2.5-14B", "gate/up", 13824, 5120),
    ("Qwen2.5-14B", "down", 5120, 13824),
    ("Mistral-Nemo-12B", "q", 4096, 5120), ("Mistral-Nemo-12B", "o", 5120, 4096),
    ("Mistral-Nemo-12B", "gate/up", 14336, 5120), ("Mistral-Nemo-12B", "down", 5120, 14336),
    ("Mixtral-8x22B", "q/o", 6144, 6144), ("Mixtral-8x22B", "k/v", 1024, 6144),
    ("Mixtral-8x22B", "expert gate/up", 16384, 6144),
    ("Mixtral-8x22B", "expert down", 6144, 16384), ("Mixtral-8x22B", "lm_head", 32768, 6144),
    ("Llama-3.2-1B", "k/v", 512, 2048), ("Llama-3.2-1B", "gate/up", 8192, 2048),
    ("Llama-3.2-1B", "down", 2048, 8192), ("Llama-3.2-1B", "qkv", 3072, 2048),
    ("Gemma-2-2B", "q", 2048, 2304), ("Gemma-2-2B", "k/v", 1024, 2304),
    ("Gemma-2-2B", "o", 2304, 2048), ("Gemma-2-2B", "gate/up", 9216, 2304),
    ("Gemma-2-2B", "down", 2304, 9216), ("Gemma-2-2B", "lm_head", 256000, 2304),
    ("Qwen2.5-0.5B", "q/o", 896, 896), ("Qwen2.5-0.5B", "k/v", 128, 896),
    ("Qwen2.5-0.5B", "gate/up", 4864, 896), ("Qwen2.5-0.5B", "down", 896, 4864),
    ("Yi-34B", "q/o", 7168, 7168), ("Yi-34B", "k/v", 1024, 7168),
    ("Yi-34B", "gate/up", 20480, 7168), ("Yi-34B", "down", 7168, 20480),
]
# A second set for --held_out_layers=fresh, of models in neither the tuning inputs nor the set
# above, drawn with a seed of its own: it measures a selection chosen while looking at the
# first set's results on shapes that choice never saw.
FRESH_LAYERS = [
    ("Falcon-7B", "qkv", 4672, 4544), ("Falcon-7B", "o", 4544, 4544),
    ("Falcon-7B", "up", 18176, 4544), ("Falcon-7B", "down", 4544, 18176),
    ("Phi-2", "qkv", 7680, 2560), ("Phi-2", "o", 2560, 2560),
    ("Phi-2", "fc1", 10240, 2560), ("Phi-2", "fc2", 2560, 10240),
    ("StableLM-2-1.6B", "gate/up", 5632, 2048), ("StableLM-2-1.6B", "down", 2048, 5632),
    ("Baichuan2-13B", "W_pack", 15360, 5120), ("Baichuan2-13B", "gate/up", 13696, 5120),
    ("Baichuan2-13B", "down", 5120, 13696),
    ("MPT-7B", "Wqkv", 12288, 4096), ("MPT-7B", "up", 16384, 4096),
    ("MPT-7B", "down", 4096, 16384),
]
FRESH_SEED = 20261129
# The held-out targets (the selection's own: the JIT and the oracle time the same configs)
HELD_OUT_TARGETS = {"jit": 0.98, "oracle": 0.97, "oracle_worst": 0.85}
HELD_OUT_COUNTS = {"heldout-nt": 32, "heldout-nn": 12}
HIDDEN_SIZES = [("Llama-3-8B", 4096), ("Qwen2.5-7B", 3584), ("Phi-3-mini", 3072),
                ("Llama-3.2-1B", 2048), ("Gemma-2-2B", 2304), ("Qwen2.5-0.5B", 896)]
# The LLM strata go through these in a seeded order, every layer once before any twice (so a
# short run still spans the models).
_LAYER_CYCLE = random.Random(EVAL_SEED).sample(LLM_LAYERS, len(LLM_LAYERS))
_HELD_OUT_CYCLE = random.Random(EVAL_SEED).sample(HELD_OUT_LAYERS, len(HELD_OUT_LAYERS))
_HIDDEN_CYCLE = random.Random(EVAL_SEED).sample(HIDDEN_SIZES, len(HIDDEN_SIZES))
_FRESH_CYCLE = random.Random(FRESH_SEED).sample(FRESH_LAYERS, len(FRESH_LAYERS))


def log(msg: str) -> None:
    print(f"tune_bench: {msg}", file=sys.stderr, flush=True)


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def use_torch_scratch(torch, triton) -> None:
    """Kernels that make their tensor descriptors on the device (persistent TMA algos) need
    global scratch, which the JIT's launcher asks this allocator for (the library's runtime
    provides its own)."""
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                 device="cuda"))


def log_uniform(rng, high: int, low: int = 1) -> int:
    return int(math.exp(rng.uniform(math.log(low), math.log(high + 1))))


def shape_text(shape) -> str:
    return "x".join(map(str, shape))


def tuning_points(inputs) -> set:
    """The key values of every tuning call: the entries of the inputs file's SHAPES and of any
    other upper-case list named *SHAPES (an entry may carry a layout after the key: whatever
    the layout, its key values count as tuned)."""
    n = len(inputs.KEY)
    lists = [v for k, v in vars(inputs).items()
             if k.isupper() and k.endswith("SHAPES") and isinstance(v, (list, tuple))]
    return {tuple(s[:n]) for entries in lists for s in entries
            if isinstance(s, (list, tuple)) and len(s) >= n}


def make_args(inputs, torch, dtype, shape, layout):
    """The C API's arguments for one evaluation shape. Matmul layouts: "nn" (row-major B) and
    "nt" (B = W.t(), W row-major [N, K]: nn.Linear's weight); inputs files without a `layout`
    argument make row-major B, and "nt" is then made here the same way."""
    kw = dict(zip(inputs.KEY, shape))
    if layout is None or layout == "nn":
        return inputs.make_args(torch, dtype, **kw)
    if "layout" in inspect.signature(inputs.make_args).parameters:
        return inputs.make_args(torch, dtype, **kw, layout=layout)
    M, N, K = shape
    a = torch.randn((M, K), device="cuda", dtype=dtype) / K ** 0.5
    b = torch.randn((N, K), device="cuda", dtype=dtype).t()
    c = torch.empty((M, N), device="cuda", dtype=dtype)
    return [a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1)]


_MEMSETS = {}


def memset_like_library(torch, c) -> None:
    """Zeroes the matrix C as the library's reset_to_zero does (runtime/trt_runtime.c): one
    cuMemsetD2D{16,32}Async on the current stream (a memset node under capture)."""
    unit = c.element_size()
    if unit not in _MEMSETS:
        fn = getattr(ctypes.CDLL("libcuda.so.1"), f"cuMemsetD2D{8 * unit}Async")
        value = {2: ctypes.c_ushort, 4: ctypes.c_uint}[unit]
        fn.argtypes = [ctypes.c_uint64, ctypes.c_size_t, value, ctypes.c_size_t, ctypes.c_size_t,
                       ctypes.c_void_p]
        fn.restype = ctypes.c_int
        _MEMSETS[unit] = fn
    r = _MEMSETS[unit](c.data_ptr(), c.stride(0) * unit, 0, c.shape[1], c.shape[0],
                       torch.cuda.current_stream().cuda_stream)
    if r != 0:
        raise RuntimeError(f"cuMemsetD2D{8 * unit}Async returned CUresult {r}")


class Matmul:
    """C = A @ B (examples/kernels/matmul_tuned.py): against cuBLAS."""
    kernel_file, kernel_name = KERNELS / "matmul_tuned.py", "matmul_tuned_kernel"
    # B's strides are in the key: the autotuner would otherwise reuse one layout's choice for the
    # other's shape with the same M, N, K.
    key = ["M", "N", "K", "stride_bk", "stride_bn"]
    baselines = {"cublas": "cuBLAS: torch.matmul(a, b, out=c), into a given C as NAME_auto"}
    counts = {"llm": 48, "random-nt": 32, "random-nn": 32}
    # stratum: (geomean of baseline time / auto time at least, no shape below)
    targets = {"llm": (0.95, 0.7), "random-nt": (0.85, 0.5), "random-nn": (0.85, 0.5)}
    tolerance = 3e-2

    @staticmethod
    def draw(stratum: str, rng, i: int):
        """(shape, layout, label) of the i-th shape of a stratum."""
        if stratum == "llm":
            model, layer, N, K = _LAYER_CYCLE[i % len(_LAYER_CYCLE)]
            return (log_uniform(rng, 8192), N, K), "nt", f"{model} {layer}"
        if stratum.startswith("heldout"):
            model, layer, N, K = _HELD_OUT_CYCLE[i % len(_HELD_OUT_CYCLE)]
            high = 256 if layer == "lm_head" else 8192  # one row per sequence
            return (log_uniform(rng, high), N, K), stratum.split("-")[1], f"{model} {layer}"
        return tuple(log_uniform(rng, 8192) for _ in range(3)), stratum.split("-")[1], None

    @staticmethod
    def class_shape(shape):
        """A small shape the JIT specialises the same way (each size 1, % 16 == 0, or neither;
        the strides follow the sizes in both layouts)."""
        return tuple(1 if v == 1 else 16 if v % 16 == 0 else 17 for v in shape)

    @staticmethod
    def pre_hook(kwargs):
        # Split-K configs add into C with atomics: zeroed before every launch, as the library's
        # reset_to_zero algos do (Triton's own split-K configs carried this pre_hook).
        if kwargs.get("SPLIT_K", 1) > 1:
            import torch
            return lambda nargs: memset_like_library(torch, nargs["c_ptr"])
        return None

    @staticmethod
    def jit_args(args, out):
        a, b, c, M, N, K, *strides = args
        return [a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                out.stride(0), out.stride(1)]

    @staticmethod
    def grid(triton, shape, num_sms):
        M, N, _ = shape

        def grid(meta_):  # the library's per-algo grids (examples/kernels/kernels.bzl)
            tiles = triton.cdiv(M, meta_["BLOCK_M"]) * triton.cdiv(N, meta_["BLOCK_N"])
            if meta_.get("PERSISTENT"):
                return (min(num_sms, tiles),)
            return (tiles, meta_.get("SPLIT_K", 1))
        return grid

    @staticmethod
    def output(args):
        return args[2]

    @staticmethod
    def baseline_launches(torch, args, compiled):
        a, b, out = args[0], args[1], torch.empty_like(args[2])
        return {"cublas": lambda stream=None: torch.matmul(a, b, out=out)}

    @staticmethod
    def reference(torch, inputs, args, rows):
        return torch.matmul(args[0][rows], args[1]).float()

    @staticmethod
    def flops(shape):
        M, N, K = shape
        return 2.0 * M * N * K


class RmsNorm:
    """y = rmsnorm(x) * w over rows (examples/kernels/rmsnorm_tuned.py): against torch."""
    kernel_file, kernel_name = KERNELS / "rmsnorm_tuned.py", "rmsnorm_kernel"
    key = ["n_rows", "n_cols"]
    baselines = {"torch": "torch.nn.functional.rms_norm, eager, into a fresh output",
                 "compiled": "torch.compile(F.rms_norm), static shapes, into a fresh output"}
    counts = {"llm": 32, "random": 32}
    targets = {}  # against the JIT only
    tolerance = 2e-2

    @staticmethod
    def draw(stratum: str, rng, i: int):
        if stratum == "llm":
            model, hidden = _HIDDEN_CYCLE[i % len(_HIDDEN_CYCLE)]
            return (log_uniform(rng, 8192), hidden), None, f"{model} hidden"
        return (log_uniform(rng, 8192), log_uniform(rng, 16384)), None, None

    class_shape = Matmul.class_shape

    @staticmethod
    def pre_hook(kwargs):
        return None

    @staticmethod
    def jit_args(args, out):
        y, x, w, xs, ys, n_rows, n_cols, eps = args
        return [out, x, w, x.stride(0), out.stride(0), n_rows, n_cols, eps]

    @staticmethod
    def grid(triton, shape, num_sms):
        return (shape[0],)

    @staticmethod
    def output(args):
        return args[0]

    @staticmethod
    def baseline_launches(torch, args, compiled):
        x, w, eps = args[1], args[2], args[7]
        rms_norm = torch.nn.functional.rms_norm
        out = {"torch": lambda stream=None: rms_norm(x, (x.shape[-1],), w, eps=eps)}
        if compiled is not None:
            out["compiled"] = lambda stream=None: compiled(x, w, eps)
        return out

    @staticmethod
    def reference(torch, inputs, args, rows):
        return inputs.reference(torch, args[1][rows], args[2]).float()

    @staticmethod
    def flops(shape):
        return 3.0 * shape[0] * shape[1]


def algos_of_pattern(pack: Path, name: str) -> dict[str, set[int]]:
    """The algos each hint pattern (call_hints spelling) of the packed library has a variant
    of: a pruned library compiles only some algos in a pattern."""
    from triton_aot.contract import hint_patterns, library
    meta = json.loads((pack / "pack.json").read_text())
    description = library.read_library(pack / meta["library"])
    out: dict[str, set[int]] = {}
    for v in description.variants:
        pattern = description.specializations[v.specialization]
        out.setdefault(hint_patterns.spelling(pattern), set()).add(v.algo)
    return out


def adapter(name: str):
    return RmsNorm if name.startswith("rmsnorm") else Matmul


def plan(kind, inputs, quick: bool = False, max_shapes: int | None = None) -> list[dict]:
    """The evaluation shapes of one library: each stratum drawn from its own seeded generator,
    redrawing a shape that is a tuning point or already drawn; then the strata interleaved (so
    that a time budget or --max-shapes cuts every stratum alike)."""
    tuned = tuning_points(inputs)
    strata = []
    for stratum, count in kind.counts.items():
        rng = random.Random(f"{EVAL_SEED}/{stratum}")
        drawn, seen = [], set()
        for i in range(4 if quick else count):
            while True:
                shape, layout, label = kind.draw(stratum, rng, i)
                if shape not in tuned and shape not in seen:
                    break
            seen.add(shape)
            drawn.append({"stratum": stratum, "shape": shape, "layout": layout, "label": label})
        strata.append(drawn)
    order = [e for i in range(max(map(len, strata))) for s in strata if i < len(s) for e in [s[i]]]
    return order[:max_shapes] if max_shapes else order


def leak_check(entries: list[dict], inputs) -> dict:
    """The evaluation shapes that are tuning points (there must be none)."""
    tuned = tuning_points(inputs)
    leaked = [list(e["shape"]) for e in entries if tuple(e["shape"]) in tuned]
    return {"shapes": len(entries), "tuning_points": len(tuned), "leaked": leaked}


# ---- timing -------------------------------------------------------------------------------------

def busy_cycles_for(torch, us: float) -> int:
    """torch.cuda._sleep cycles that keep the GPU busy for about `us` microseconds."""
    from triton_aot.tuning import tune
    cycles = 2_000_000
    torch.cuda._sleep(1000)  # loads the kernel
    took = statistics.median(tune.replay_times(
        torch, None, lambda stream: torch.cuda._sleep(cycles), 1, 3))
    return max(1000, int(cycles * us / took))


def time_methods(torch, methods: dict, reps: int, rounds: int, busy: int):
    """Every method timed the same way (module docstring): one batch size for all, one graph
    capture each, rounds in rotating order, each replay behind a busy-wait. Returns the batch,
    {method: [median us per launch, one per round]} and the methods that could not be captured
    (timed as plain launches: their host cost may show)."""
    from triton_aot.tuning import tune
    one = min(statistics.median(tune.replay_times(torch, None, fn, 1, 3, busy))
              for fn in methods.values())
    batch = max(1, min(MAX_BATCH, int(TARGET_US / max(one, 0.5))))
    graphs = {m: tune.capture_launches(torch, fn, batch) for m, fn in methods.items()}
    per = {m: [] for m in methods}
    order = list(methods)
    for rnd in range(rounds):
        k = rnd % len(order)
        for m in order[k:] + order[:k]:
            per[m].append(statistics.median(
                tune.replay_times(torch, graphs[m], methods[m], batch, reps, busy)))
    return batch, per, [m for m, g in graphs.items() if g is None]


# ---- the JIT ------------------------------------------------------------------------------------

def load_kernel_module(kind, tag: str):
    spec = importlib.util.spec_from_file_location(tag, kind.kernel_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, kind.kernel_name)


def jit_configs(triton, kind, recs) -> dict:
    """{algo: triton.Config} of the library's algos (its records hold the constexprs as Python
    literals: "128", "True")."""
    out = {}
    for i in sorted(recs):
        r = recs[i]
        kwargs = {k: ast.literal_eval(v) for k, v in r.constexprs.items()}
        out[i] = triton.Config(kwargs, num_warps=r.launch.num_warps,
                               num_stages=r.launch.num_stages, pre_hook=kind.pre_hook(kwargs))
    return out


def jit_kernel(triton, kind, configs: dict):
    """The kernel file's @triton.jit function under @triton.autotune over the library's configs."""
    def short_bench(fn, quantiles):  # the autotuner's own timer, shortened to fit the GPU budget
        return triton.testing.do_bench(fn, warmup=3, rep=10, quantiles=quantiles)

    return triton.autotune(configs=list(configs.values()), key=kind.key, do_bench=short_bench)(
        load_kernel_module(kind, "jit_" + kind.kernel_name))


def _warm_one(task) -> str:
    """Compiles one (library, size classes, layout, algo) of the JIT kernel into the shared
    on-disk cache, in a worker process: the autotuner then loads it instead of compiling it in
    the timed process, one config after another."""
    pack, shape, layout, algo = task
    import torch
    from triton_aot.tuning import tune
    p = tune.open_pack(Path(pack))
    kind = adapter(p.name)
    r = p.records[algo]
    fn = load_kernel_module(kind, "warm_" + kind.kernel_name)
    args = make_args(p.inputs, torch, p.dtype(torch), shape, layout)
    kwargs = {k: ast.literal_eval(v) for k, v in r.constexprs.items()}
    fn.warmup(*kind.jit_args(args, kind.output(args)), grid=(1,), num_warps=r.launch.num_warps,
              num_stages=r.launch.num_stages, **kwargs)
    return f"{p.name} {shape_text(shape)} {layout or ''} algo {algo}"


def prewarm_jit(plans: dict, jobs: int) -> float:
    """Fills the Triton cache with every (library, size class, layout, algo) the sweep will
    autotune, on `jobs` processes; returns the seconds it took."""
    import multiprocessing
    from triton_aot.tuning import tune
    tasks = []
    for pack, entries in plans.items():
        p = tune.open_pack(pack)
        kind = adapter(p.name)
        classes = sorted({(kind.class_shape(e["shape"]), e["layout"] or "") for e in entries})
        tasks += [(str(pack), cls, layout or None, algo)
                  for cls, layout in classes for algo in sorted(p.records)]
    t0 = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for i, done in enumerate(pool.imap_unordered(_warm_one, tasks)):
            if i % 100 == 0:
                log(f"JIT cache: {i + 1}/{len(tasks)} compiled ({done})")
    return time.monotonic() - t0


# ---- one library --------------------------------------------------------------------------------

def compiled_rms_norm(torch):
    """torch.compile of F.rms_norm, static shapes (one compile per shape, the best code torch
    makes for it), with the recompile limits raised so no shape falls back to eager."""
    cfg = torch._dynamo.config
    for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                  "accumulated_cache_size_limit"):
        if hasattr(cfg, limit):
            setattr(cfg, limit, 4096)
    rms_norm = torch.nn.functional.rms_norm
    return torch.compile(lambda x, w, eps: rms_norm(x, (x.shape[-1],), w, eps=eps), dynamic=False)


def kernels_per_call(torch, fn) -> int | None:
    """How many GPU kernels one call of `fn` launches (torch's profiler), None if unknown."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type.name == "CUDA")
    except Exception:  # no CUPTI: the count is informative only
        return None


class CompileFailed(Exception):
    """torch.compile failed on this machine."""


class Library:
    """One packed library with its JIT twin, ready to time shapes."""

    def __init__(self, pack: Path, torch, triton):
        from triton_aot.tuning import tune
        self.p = p = tune.open_pack(pack)
        self.torch, self.triton = torch, triton
        self.name, self.kind = p.name, adapter(p.name)
        if p.lib.auto is None:
            raise SystemExit(f"error: {pack}/{p.meta['so']} has no {p.name}_auto: set tuning_key")
        self.auto_algo = getattr(p.lib.lib, f"{p.name}_auto_algo")
        self.auto_algo.restype = ctypes.c_int
        self.auto_algo.argtypes = [ctypes.c_int] + p.lib.fn.argtypes[1:-1]
        self.configs = jit_configs(triton, self.kind, p.records)
        self.kernel = jit_kernel(triton, self.kind, self.configs)
        self.variant_hints = tune.pack_hint_patterns(p)
        self.algos_of_pattern = algos_of_pattern(pack, p.name)
        self.ref_record = next(iter(p.records.values()))
        major, minor = torch.cuda.get_device_capability()
        self.sm = major * 10 + minor
        self.num_sms = torch.cuda.get_device_properties(0).multi_processor_count
        self.dtype = p.dtype(torch)

    def setup(self, entry: dict) -> dict:
        """Arguments, buffers and hints of one shape."""
        from triton_aot.contract import hint_patterns
        from triton_aot.tuning import tune
        torch, kind, shape = self.torch, self.kind, tuple(entry["shape"])
        args = make_args(self.p.inputs, torch, self.dtype, shape, entry["layout"])
        cargs = tune.c_values(args)
        out_jit = torch.empty_like(kind.output(args))
        jit_hints = hint_patterns.of_call(self.ref_record, cargs)
        # the variant the library runs: the first (most hints) whose hints the call has
        ran = next(h for h in self.variant_hints if set(h) <= set(jit_hints))
        return {"args": args, "cargs": cargs, "out_jit": out_jit,
                "jit_args": kind.jit_args(args, out_jit),
                "grid": kind.grid(self.triton, shape, self.num_sms),
                "hints": hint_patterns.spelling(jit_hints), "auto_hints": hint_patterns.spelling(ran)}

    def run_auto(self, cargs, algo=None):
        lib = self.p.lib

        def launch(stream):
            r = lib.auto(stream, *cargs) if algo is None else lib.fn(stream, *cargs, algo)
            if r != 0:
                raise RuntimeError(f"{self.name} returned CUresult {r}")
        return launch

    def measure(self, entry: dict, opts, compiled) -> dict:
        torch, kind, inputs = self.torch, self.kind, self.p.inputs
        shape = tuple(entry["shape"])
        row = {"library": self.name, "dtype": inputs.DTYPES[self.name], "shape": list(shape),
               "stratum": entry["stratum"], "layout": entry["layout"], "label": entry["label"],
               "baselines": list(kind.baselines)}
        s = self.setup(entry)
        kernel, grid, jit_args = self.kernel, s["grid"], s["jit_args"]
        methods = {"auto": self.run_auto(s["cargs"]),
                   "jit": lambda stream=None: kernel[grid](*jit_args),
                   **kind.baseline_launches(torch, s["args"], compiled)}
        try:
            for m, fn in methods.items():  # the autotuner times every config here (untimed)
                try:
                    fn(torch.cuda.current_stream().cuda_stream)
                except Exception as e:
                    if m == "compiled":
                        raise CompileFailed(f"{type(e).__name__}: {e}"[:300]) from e
                    raise
            if getattr(opts, "oracle", False):
                methods.update(self.config_launches(s, row))
            torch.cuda.synchronize()
            # the first and last rows (all of them up to 512): the edge tiles, in bounded memory
            # (an LM head's output is gigabytes)
            n = shape[0]
            rows = torch.cat([torch.arange(min(n, 256)),
                              torch.arange(min(n, max(256, n - 256)), n)]).cuda()
            ref = kind.reference(torch, inputs, s["args"], rows)
            tol = kind.tolerance
            row["auto_ok"] = bool(torch.allclose(kind.output(s["args"])[rows].float(), ref,
                                                 atol=tol, rtol=tol))
            row["jit_ok"] = bool(torch.allclose(s["out_jit"][rows].float(), ref, atol=tol,
                                                rtol=tol))
            row["batch"], per, row["uncaptured"] = time_methods(torch, methods, opts.reps,
                                                                opts.rounds, opts.busy)
            configs = {int(m[3:]): statistics.median(ts) for m, ts in per.items()
                       if m.startswith("cfg")}
            for m, ts in per.items():
                if m.startswith("cfg"):
                    continue
                row[f"{m}_us"] = statistics.median(ts)
                # how much one method's rounds disagree: the noise floor of the ratios below
                row[f"{m}_spread"] = (max(ts) - min(ts)) / statistics.median(ts)
            if configs:  # the oracle: the per-shape best config, timed with the rest
                row["config_us"] = {str(a): round(t, 3) for a, t in sorted(configs.items())}
                row["oracle_algo"] = min(configs, key=configs.get)
                row["oracle_us"] = configs[row["oracle_algo"]]
            row["auto_algo"] = self.auto_algo(self.sm, *s["cargs"])
            row["auto_algo_info"] = self.p.lib.infos[row["auto_algo"]]
            best = kernel.best_config
            row["jit_config"] = str(best)
            row["jit_algo"] = next((i for i, c in self.configs.items()
                                    if (c.kwargs, c.num_warps, c.num_stages)
                                    == (best.kwargs, best.num_warps, best.num_stages)), None)
            row["hints"], row["auto_hints"] = s["hints"], s["auto_hints"]
            # the very kernel on both sides: the same algo, on the variant of the call's hints
            row["same_kernel"] = (row["auto_algo"] == row["jit_algo"]
                                  and s["hints"] == s["auto_hints"])
            for m in ["jit", *kind.baselines, "oracle"]:
                if f"{m}_us" in row:
                    row[f"{m}_over_auto"] = row[f"{m}_us"] / row["auto_us"]
            row["tflops_auto"] = kind.flops(shape) / row["auto_us"] / 1e6
        except CompileFailed:
            raise
        except Exception as e:  # one shape's failure is reported, never ends the run
            row["error"] = f"{type(e).__name__}: {e}"[:300]
            torch.cuda.synchronize()
        return row

    def config_launches(self, s: dict, row: dict) -> dict:
        """Each config of the library launched alone through the JIT (the oracle's
        candidates, on the shape of `s`): those that launch, as methods cfgN; the others'
        errors go into row["configs_failed"]."""
        torch, kernel = self.torch, self.kernel
        nargs = dict(zip(kernel.fn.arg_names, s["jit_args"]))
        out, failed = {}, {}
        for algo, cfg in self.configs.items():
            def run_cfg(stream=None, cfg=cfg):
                if cfg.pre_hook:
                    cfg.pre_hook(nargs)
                kernel.fn[s["grid"]](*s["jit_args"], num_warps=cfg.num_warps,
                                     num_stages=cfg.num_stages, **cfg.kwargs)
            try:
                run_cfg()
                torch.cuda.synchronize()
                out[f"cfg{algo}"] = run_cfg
            except Exception as e:  # a config the device refuses (shared memory, say)
                failed[str(algo)] = f"{type(e).__name__}: {e}"[:120]
                torch.cuda.synchronize()
        if failed:
            row["configs_failed"] = failed
        return out

    def direct(self, entry: dict, opts) -> list[dict]:
        """NAME(..., algo) against the JIT launched with that algo's config, every algo, on the
        variant of the call's hints (the shape is chosen where the library has it)."""
        torch = self.torch
        s = self.setup(entry)
        nargs = dict(zip(self.kernel.fn.arg_names, s["jit_args"]))
        out = []
        for algo, cfg in self.configs.items():
            pair = {"library": self.name, "shape": list(entry["shape"]),
                    "stratum": entry["stratum"], "algo": algo, "hints": s["hints"]}
            if algo not in self.algos_of_pattern.get(s["hints"], ()):
                # pruned there (NAME_auto never launches it for this pattern): NAME(..., algo)
                # runs a variant with fewer hints, not the JIT's kernel
                pair["skipped"] = "no variant of the call's hints has this algo"
                out.append(pair)
                continue

            def run_jit(stream=None, cfg=cfg):
                if cfg.pre_hook:
                    cfg.pre_hook(nargs)
                self.kernel.fn[s["grid"]](*s["jit_args"], num_warps=cfg.num_warps,
                                          num_stages=cfg.num_stages, **cfg.kwargs)
            try:
                r = self.p.lib.fn(torch.cuda.current_stream().cuda_stream, *s["cargs"], algo)
                if r != 0:
                    pair["skipped"] = f"the library returned CUresult {r}"
                    out.append(pair)
                    continue
                run_jit()
                torch.cuda.synchronize()
                pair["agree"] = bool(torch.allclose(
                    self.kind.output(s["args"]).float(), s["out_jit"].float(),
                    atol=self.kind.tolerance, rtol=self.kind.tolerance))
                pair["batch"], per, pair["uncaptured"] = time_methods(
                    torch, {"library": self.run_auto(s["cargs"], algo), "jit": run_jit},
                    opts.reps, 3, opts.busy)
                pair["library_us"] = statistics.median(per["library"])
                pair["jit_us"] = statistics.median(per["jit"])
                pair["jit_over_library"] = pair["jit_us"] / pair["library_us"]
            except Exception as e:
                pair["error"] = f"{type(e).__name__}: {e}"[:300]
                torch.cuda.synchronize()
            out.append(pair)
        return out


def bench_library(pack: Path, entries: list[dict], torch, triton, args, res: dict,
                  deadline: float, t_start: float) -> None:
    lib = Library(pack, torch, triton)
    compiled = None
    if "compiled" in lib.kind.baselines and not args.no_compile:
        compiled = compiled_rms_norm(torch)
    rows = []
    for i, entry in enumerate(entries):
        where = (f"[{i + 1}/{len(entries)}, {time.monotonic() - t_start:.0f} s] {lib.name} "
                 f"{entry['stratum']} {shape_text(entry['shape'])}")
        if time.monotonic() > deadline:
            log(f"{where}: time budget spent, not measured")
            rows.append({"library": lib.name, "shape": list(entry["shape"]),
                         "stratum": entry["stratum"], "skipped": "time budget"})
            continue
        try:
            row = lib.measure(entry, args, compiled)
        except CompileFailed as e:  # the rest of the run goes without that baseline
            res["environment"]["compiled_error"] = str(e)
            log(f"torch.compile'd baseline dropped: {e}")
            compiled = None
            row = lib.measure(entry, args, compiled)
        if "error" in row:
            log(f"{where}: {row['error']}")
        else:
            others = ", ".join(f"{m} {row[f'{m}_us']:.1f}" for m in ["jit", *lib.kind.baselines]
                               if f"{m}_us" in row)
            log(f"{where}: auto {row['auto_us']:.1f} us (algo {row['auto_algo']}), {others} "
                f"(JIT algo {row['jit_algo']}; {row['batch']} launches/graph)"
                + (f"; NOT CAPTURED: {row['uncaptured']}" if row["uncaptured"] else ""))
        rows.append(row)
    res["rows"] += rows
    if "torch" in lib.kind.baselines and rows:
        x = torch.randn((64, 4096), device="cuda", dtype=lib.dtype)
        w = torch.randn((4096,), device="cuda", dtype=lib.dtype)
        res["environment"]["rms_norm_kernels_per_call"] = kernels_per_call(
            torch, lambda: torch.nn.functional.rms_norm(x, (4096,), w, eps=1e-6))
    # the direct check: shapes where the library has the variant of the call's hints, one per
    # stratum first, small enough to time every algo quickly
    ok = [r for r in rows if "auto_us" in r and r["hints"] == r["auto_hints"]
          and r[f"{r['baselines'][0]}_us"] < 300.0]
    picked = []
    for r in ok:  # one per stratum first
        if len(picked) < args.direct and r["stratum"] not in {q["stratum"] for q in picked}:
            picked.append(r)
    for r in ok:
        if len(picked) < args.direct and r not in picked:
            picked.append(r)
    if len(picked) < args.direct:
        log(f"{lib.name}: only {len(picked)} shape(s) for the direct check (the library has the "
            "variant of the call's hints on those)")
    for r in picked:
        entry = {"shape": r["shape"], "layout": r["layout"], "stratum": r["stratum"]}
        pairs = lib.direct(entry, args)
        timed = [q for q in pairs if "jit_over_library" in q]
        log(f"direct check {lib.name} {shape_text(r['shape'])}: {len(timed)} algos, JIT/library "
            + (f"{min(q['jit_over_library'] for q in timed):.3f}-"
               f"{max(q['jit_over_library'] for q in timed):.3f}" if timed else "n/a"))
        res["direct"] += pairs


# ---- summary ------------------------------------------------------------------------------------

def _ratio_stats(sel: list, ratio: str) -> dict | None:
    vals = [(r[ratio], r) for r in sel if r.get(ratio)]
    if not vals:
        return None
    worst_value, worst = min(vals, key=lambda v: v[0])
    return {"geomean": geomean([v for v, _ in vals]), "worst": worst_value,
            "worst_shape": f"{worst['dtype']} {shape_text(worst['shape'])}"
                           + (f" ({worst['label']})" if worst.get("label") else "")}


def methods_of(kind, rows: list) -> list[str]:
    """The methods whose ratios are reported: the JIT, the baselines and, when the run timed
    every config (--held_out), the oracle."""
    return ["jit", *kind.baselines] + (["oracle"] if any("oracle_us" in r for r in rows) else [])


def time_stratum(r: dict) -> str:
    t = r[f"{r['baselines'][0]}_us"]
    return next(name for name, lo, hi in TIME_STRATA if lo <= t < hi)


def disagreement(values: list) -> dict:
    d = sorted(abs(v - 1.0) for v in values)
    return {"pairs": len(d), "median": statistics.median(d) if d else None,
            "max": d[-1] if d else None, "beyond_tolerance": sum(v > SAME_KERNEL_TOLERANCE for v in d),
            "pass": (statistics.median(d) <= SAME_KERNEL_TOLERANCE) if d else True}


def summarize(rows: list, direct: list) -> dict:
    ok = [r for r in rows if "auto_us" in r]
    groups, targets = [], []
    for lib in sorted({r["library"] for r in rows}):
        kind = adapter(lib)
        mine = [r for r in ok if r["library"] == lib]
        names = list(kind.counts) + sorted({r["stratum"] for r in mine} - set(kind.counts))
        split = [("stratum", st, [r for r in mine if r["stratum"] == st]) for st in names]
        split += [("time", name, [r for r in mine if time_stratum(r) == name])
                  for name, _, _ in TIME_STRATA]
        for how, name, sel in split:
            if not sel:
                continue
            skipped = sum(1 for r in rows if r["library"] == lib and how == "stratum"
                          and r.get("stratum") == name and "auto_us" not in r)
            g = {"library": lib, "by": how, "group": name, "shapes": len(sel), "not_measured": skipped,
                 "same_kernel": sum(1 for r in sel if r["same_kernel"]),
                 "all_correct": all(r["auto_ok"] and r["jit_ok"] for r in sel),
                 "ratios": {m: _ratio_stats(sel, f"{m}_over_auto")
                            for m in methods_of(kind, sel)}}
            groups.append(g)
            jit = g["ratios"]["jit"]
            held = all(r["stratum"].startswith("heldout") for r in sel)
            limit = HELD_OUT_TARGETS["jit"] if held else JIT_TARGET
            targets.append({"library": lib, "group": name, "what": "JIT time / auto time, geomean",
                            "limit": limit, "measured": jit["geomean"],
                            "pass": jit["geomean"] >= limit})
            oracle = g["ratios"].get("oracle")
            if held and oracle:
                for what, limit, v in (
                        ("oracle time / auto time, geomean", HELD_OUT_TARGETS["oracle"],
                         oracle["geomean"]),
                        ("oracle time / auto time, worst shape", HELD_OUT_TARGETS["oracle_worst"],
                         oracle["worst"])):
                    targets.append({"library": lib, "group": name, "what": what, "limit": limit,
                                    "measured": v, "pass": v >= limit})
            base = g["ratios"][next(iter(kind.baselines))]
            if how == "stratum" and name in kind.targets and base:
                label = kind.baselines[next(iter(kind.baselines))].split(":")[0]
                gmin, wmin = kind.targets[name]
                targets.append({"library": lib, "group": name,
                                "what": f"{label} time / auto time, geomean", "limit": gmin,
                                "measured": base["geomean"], "pass": base["geomean"] >= gmin})
                targets.append({"library": lib, "group": name,
                                "what": f"{label} time / auto time, worst shape", "limit": wmin,
                                "measured": base["worst"], "pass": base["worst"] >= wmin})
    same = [r for r in ok if r["same_kernel"]]
    same_check = disagreement([r["jit_over_auto"] for r in same])
    same_check["worst"] = [[r["library"], r["shape"], round(r["jit_over_auto"], 4), r["auto_algo"]]
                           for r in sorted(same, key=lambda r: -abs(r["jit_over_auto"] - 1))[:5]]
    timed = [q for q in direct if "jit_over_library" in q]
    direct_check = disagreement([q["jit_over_library"] for q in timed])
    direct_check["worst"] = [[q["library"], q["shape"], q["algo"], round(q["jit_over_library"], 4)]
                             for q in sorted(timed, key=lambda q: -abs(q["jit_over_library"] - 1))[:5]]
    direct_check["results_disagree"] = [[q["library"], q["shape"], q["algo"]] for q in timed
                                        if not q["agree"]]
    uncaptured = sorted({m for r in ok for m in r["uncaptured"]})
    errors = sum(1 for r in rows if "error" in r) + sum(1 for q in direct if "error" in q)
    return {"groups": groups, "targets": targets, "same_kernel_check": same_check,
            "direct_check": direct_check, "uncaptured_methods": uncaptured, "errors": errors,
            "valid": (same_check["pass"] and direct_check["pass"] and not errors
                      and not uncaptured and not direct_check["results_disagree"])}


# ---- rendering ----------------------------------------------------------------------------------

def _x(v) -> str:
    return "n/a" if v is None else f"{v:.3f}x"


def markdown(res: dict) -> str:
    env, s = res["environment"], res["summary"]
    libs = sorted({r["library"] for r in res["rows"]})
    kinds = {lib: adapter(lib) for lib in libs}
    baselines = {m: d for k in kinds.values() for m, d in k.baselines.items()}
    lines = [f"# Tuned {', '.join(libs)}: NAME_auto vs {', '.join(baselines)} vs the autotuned JIT",
             "", f"{env['gpu']} (sm_{env['sm']}), torch {env['torch']}, triton {env['triton']}, "
             f"{env['date']}. Generated by bench/tune/tune_bench.py in {res['seconds']} s "
             f"(the JIT's cache filled first in {res.get('jit_cache_warmup_seconds')} s).", "",
             "Timing, the same for every method: per shape one launch count per CUDA graph for "
             f"all methods (about {TARGET_US:.0f} us of the fastest method's GPU time, at most "
             f"{MAX_BATCH}); each method captured once; {res['rounds']} rounds in rotating order "
             f"of {res['reps']} replays each, every replay queued behind a GPU busy-wait so the "
             "events time the GPU alone; a method's time is the median over rounds. L2 warm "
             "(each replay follows the same method's previous one on the same inputs). "
             "Ratios are baseline time / auto time (> 1: NAME_auto faster).", "", "Methods:", "",
             "- auto: NAME_auto of the ahead-of-time library (the tuning table's choice)",
             "- jit: the same kernel file, Triton's JIT with @triton.autotune over the library's "
             "configs"]
    lines += [f"- {m}: {d}" for m, d in baselines.items()]
    if env.get("rms_norm_kernels_per_call") is not None:
        lines.append(f"- F.rms_norm ran {env['rms_norm_kernels_per_call']} GPU kernel(s) per "
                     "call here (64 x 4096)")
    if env.get("compiled_error"):
        lines.append(f"- torch.compile'd baseline dropped: {env['compiled_error']}")
    leak = res["leak_check"]
    lines += ["", f"Evaluation shapes: seed {res['seed']}, "
              + "; ".join(f"{lib}: {v['shapes']} shapes, {len(v['leaked'])} of them among its "
                          f"{v['tuning_points']} tuning points" for lib, v in leak.items()), ""]
    v = s["same_kernel_check"]
    verdict = lambda ok: "PASS" if ok else "**FAIL**"  # noqa: E731
    lines += ["## Sanity checks", "",
              f"- same kernel on both sides (auto's algo = the autotuner's, on the variant of the "
              f"call's hints): {v['pairs']} pairs, JIT/auto disagreement median "
              f"{_pct(v['median'])}, max {_pct(v['max'])}, {v['beyond_tolerance']} beyond "
              f"{SAME_KERNEL_TOLERANCE:.0%}: {verdict(v['pass'])} (median <= "
              f"{SAME_KERNEL_TOLERANCE:.0%})"]
    d = s["direct_check"]
    lines.append(f"- direct: NAME(..., algo) against the JIT launched with that algo's config, "
                 f"{d['pairs']} pairs: disagreement median {_pct(d['median'])}, max "
                 f"{_pct(d['max'])}: {verdict(d['pass'])}"
                 + (f"; results differ on {d['results_disagree']}" if d["results_disagree"] else ""))
    if s["uncaptured_methods"]:
        lines.append(f"- **not captured in a graph** (timed as plain launches, host cost "
                     f"included): {s['uncaptured_methods']}")
    if s["errors"]:
        lines.append(f"- **{s['errors']} error(s)** (rows below)")
    lines += [f"- worst same-kernel pairs (library, shape, JIT/auto, algo): {v['worst']}",
              f"- worst direct pairs (library, shape, algo, JIT/library): {d['worst']}", "",
              "## Targets", "", "| library | stratum | what | target | measured | |",
              "|---|---|---|---|---|---|"]
    for t in s["targets"]:
        lines.append(f"| {t['library']} | {t['group']} | {t['what']} | >= {t['limit']} | "
                     f"{_x(t['measured'])} | {verdict(t['pass'])} |")
    lines += ["", "## Strata", "", "Per shape stratum, then per stratum of the first baseline's "
              "time. Geometric mean (worst shape).", ""]
    for lib in libs:
        ms = methods_of(kinds[lib], [r for r in res["rows"] if r["library"] == lib])
        lines += [f"| {lib} | shapes | same kernel | " + " | ".join(f"{m}/auto" for m in ms)
                  + " | correct |", "|---" * (len(ms) + 4) + "|"]
        for g in (g for g in s["groups"] if g["library"] == lib):
            cells = [f"{_x(g['ratios'][m]['geomean'])} ({_x(g['ratios'][m]['worst'])}, "
                     f"{g['ratios'][m]['worst_shape']})" if g["ratios"][m] else "n/a" for m in ms]
            n = f"{g['shapes']}" + (f" (+{g['not_measured']} not measured)"
                                    if g["not_measured"] else "")
            lines.append(f"| {g['group']} | {n} | {g['same_kernel']} | " + " | ".join(cells)
                         + f" | {g['all_correct']} |")
        lines.append("")
    ms = ["jit", *baselines] + (["oracle"] if any("oracle_us" in r for r in res["rows"]) else [])
    lines += ["## Shapes", "", "| library | stratum | shape | layer | auto us (algo) | "
              + " | ".join(f"{m} us" for m in ms) + " | " + " | ".join(f"{m}/auto" for m in ms)
              + " | launches/graph |", "|---" * (2 * len(ms) + 6) + "|"]
    for r in res["rows"]:
        head = f"| {r['library']} | {r['stratum']} | {shape_text(r['shape'])} | {r.get('label') or ''}"
        if "auto_us" not in r:
            lines.append(f"{head} | {r.get('error') or r.get('skipped')} |"
                         + " |" * (2 * len(ms) + 1))
            continue
        jit_algo = f"{r['jit_algo']}{'' if r['same_kernel'] else '*'}"
        times = [f"{r[f'{m}_us']:.1f}" + (f" ({jit_algo})" if m == "jit" else "")
                 + (f" ({r['oracle_algo']})" if m == "oracle" else "")
                 if f"{m}_us" in r else "" for m in ms]
        ratios = [f"{r[f'{m}_over_auto']:.3f}" if f"{m}_over_auto" in r else "" for m in ms]
        lines.append(f"{head} | {r['auto_us']:.1f} ({r['auto_algo']}) | " + " | ".join(times)
                     + " | " + " | ".join(ratios) + f" | {r['batch']} |")
    lines += ["", "`*`: not the same kernel as auto's (another algo, or auto's library has no "
              "variant of the call's hints).", "", "Algos (index: config):", ""]
    for lib, infos in res.get("algos", {}).items():
        lines += [f"- {lib} {i}: {info}" for i, info in enumerate(infos)]
    return "\n".join(lines) + "\n"


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.2f}%"


def chart(res: dict, path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart"
    rows = sorted((r for r in res["rows"] if "auto_us" in r),
                  key=lambda r: (r["library"], r["stratum"], r[f"{r['baselines'][0]}_us"]))
    if not rows:
        return "no results to chart"
    fig, ax = plt.subplots(figsize=(max(8, 0.16 * len(rows)), 5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[f"{r['baselines'][0]}_over_auto"] for r in rows], 0.4,
           label="baseline (cuBLAS / torch) time / auto time")
    ax.bar([x + 0.2 for x in xs], [r["jit_over_auto"] for r in rows], 0.4,
           label="autotuned JIT time / auto time")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['dtype'][:4]} {r['stratum']} {shape_text(r['shape'])}"
                        for r in rows], rotation=90, fontsize=5)
    ax.set_ylabel("speed of NAME_auto relative to (>1: auto faster)")
    ax.set_title(f"Tuned kernels on {res['environment']['gpu']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return None


def write_results(res: dict, out: Path, stem: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(res, indent=1) + "\n")
    note = chart(res, out / f"{stem}.png")
    md = markdown(res) + (f"\n({note})\n" if note else f"\n![chart]({stem}.png)\n")
    (out / f"{stem}.md").write_text(md)
    log(f"wrote {out}/{stem}.json, {stem}.md{'' if note else f', {stem}.png'}")
    print(md)


def verdict_line(summary: dict) -> str:
    v, d = summary["same_kernel_check"], summary["direct_check"]
    return (f"same-kernel pairs: {v['pairs']}, median disagreement {_pct(v['median'])}, max "
            f"{_pct(v['max'])}; direct pairs: {d['pairs']}, median {_pct(d['median'])}, max "
            f"{_pct(d['max'])}; errors: {summary['errors']}; "
            + ("VALID" if summary["valid"] else "FAIL: the measurement is not trustworthy"))


# ---- main ---------------------------------------------------------------------------------------

def load_plans(packs: list[Path], args) -> tuple[dict, dict]:
    """{pack: entries} and {library: leak check}; with no packs (--dry-run), the repository's
    inputs files for every kind."""
    from triton_aot.contract import library
    from triton_aot.tuning import call_hints
    sources = []
    for pack in packs:
        meta = json.loads((pack / "pack.json").read_text())
        name = library.read_library(pack / meta["library"]).name
        sources.append((pack, name, call_hints.load_inputs(pack / meta["inputs"])))
    if not packs:
        for name, inputs in (("matmul_tuned", "matmul_tuning.py"),
                             ("rmsnorm_tuned", "rmsnorm_tuning.py")):
            sources.append((None, name, call_hints.load_inputs(KERNELS / inputs)))
    plans, leaks = {}, {}
    for pack, name, inputs in sources:
        entries = plan(adapter(name), inputs, args.quick, args.max_shapes)
        leaks[name] = leak_check(entries, inputs)
        plans[pack or name] = entries
        counts = {st: sum(e["stratum"] == st for e in entries) for st in adapter(name).counts}
        log(f"{name}: {len(entries)} evaluation shapes {counts}; "
            f"{len(leaks[name]['leaked'])} of them among the {leaks[name]['tuning_points']} "
            "tuning points")
        if leaks[name]["leaked"]:
            raise SystemExit(f"error: evaluation shapes {leaks[name]['leaked']} are tuning "
                             "points; change EVAL_SEED")
    return plans, leaks


def _results_store():
    """bench/results_store.py (how committed raw results are stored), for --render."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import results_store
    return results_store


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("packs", nargs="*", type=Path, help="tuning bundles tools/gpu packed (.gpu/tuned/NAME)")
    ap.add_argument("--render", type=Path, metavar="TUNE_JSON",
                    help="no GPU: rewrite the summary, STEM.md and STEM.png of an earlier run's "
                         "JSON into --out")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: print the evaluation shapes and check none is a tuning point")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--stem", default="tune", help="result file names: STEM.json, .md, .png")
    ap.add_argument("--quick", action="store_true", help="4 shapes per stratum, 3 rounds, 1 "
                    "direct-check shape")
    ap.add_argument("--max-shapes", type=int, default=None,
                    help="at most this many shapes per library (taken across the strata alike)")
    ap.add_argument("--reps", type=int, default=5, help="graph replays per method and round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--direct", type=int, default=3,
                    help="shapes per library for the direct check (every algo, library vs JIT)")
    ap.add_argument("--no-compile", action="store_true",
                    help="rmsnorm: leave out the torch.compile'd baseline")
    ap.add_argument("--jobs", type=int, default=14,
                    help="processes that fill the JIT's cache before the timed run (0: none)")
    ap.add_argument("--budget_s", "--budget-s", type=float, default=280.0,
                    help="measuring time for all libraries (each gets its share); shapes left "
                         "when it is spent are not measured")
    ap.add_argument("--held_out", "--held-out", action="store_true",
                    help="matmul: the layers of models the tuning never saw (HELD_OUT_LAYERS), "
                         "in both layouts, every config timed too (the per-shape oracle)")
    ap.add_argument("--held_out_layers", choices=("models", "fresh"), default="models",
                    help="with --held_out: HELD_OUT_LAYERS (models), or FRESH_LAYERS drawn with "
                         "FRESH_SEED (fresh)")
    args = ap.parse_args(argv)
    args.oracle = args.held_out
    if args.held_out_layers == "fresh":
        global EVAL_SEED, _HELD_OUT_CYCLE
        EVAL_SEED, _HELD_OUT_CYCLE = FRESH_SEED, _FRESH_CYCLE
    if args.held_out:
        Matmul.counts, Matmul.targets = dict(HELD_OUT_COUNTS), {}
    if args.quick:
        args.rounds, args.direct = min(args.rounds, 3), min(args.direct, 1)
    if args.render:
        res = _results_store().load(args.render)
        if res.get("format") != FORMAT:
            raise SystemExit(f"error: {args.render} is not {FORMAT} (an older run): rerun it")
        res["summary"] = summarize(res["rows"], res["direct"])
        write_results(res, args.out, args.stem)
        log(verdict_line(res["summary"]))
        return 0 if res["summary"]["valid"] else 1
    if not args.packs and not args.dry_run:
        ap.error("give the packed libraries (or --render TUNE_JSON, or --dry-run)")
    plans, leaks = load_plans(args.packs, args)
    if args.dry_run:
        for pack, entries in plans.items():
            for e in entries:
                print(f"{Path(str(pack)).name}\t{e['stratum']}\t{shape_text(e['shape'])}\t"
                      f"{e['layout'] or ''}\t{e['label'] or ''}")
        return 0

    import torch
    import triton
    from triton_aot.tuning import tune

    use_torch_scratch(torch, triton)
    warm_s = prewarm_jit(plans, args.jobs) if args.jobs > 0 else None
    t0 = time.monotonic()
    args.busy = busy_cycles_for(torch, BUSY_WAIT_US)
    major, minor = torch.cuda.get_device_capability()
    res = {"format": FORMAT, "seed": EVAL_SEED, "reps": args.reps, "rounds": args.rounds,
           "leak_check": leaks, "environment": {
               "gpu": torch.cuda.get_device_name(), "sm": major * 10 + minor,
               "torch": torch.__version__, "triton": triton.__version__,
               "python": platform.python_version(), "busy_wait_cycles": args.busy,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
           "rows": [], "direct": [], "algos": {}}
    for i, (pack, entries) in enumerate(plans.items()):
        deadline = t0 + args.budget_s * (i + 1) / len(plans)
        bench_library(pack, entries, torch, triton, args, res, deadline, t0)
        p = tune.open_pack(pack)
        res["algos"][p.name] = [a.info for a in p.description.algos]
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["jit_cache_warmup_seconds"] = warm_s and round(warm_s, 1)
    res["summary"] = summarize(res["rows"], res["direct"])
    write_results(res, args.out, args.stem)
    log(verdict_line(res["summary"]))
    return 0 if res["summary"]["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
