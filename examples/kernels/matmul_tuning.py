"""Inputs of the tuning command for matmul_tuned and matmul_tuned_bf16 (tuning_inputs in
BUILD.bazel): which shapes to time, and the C API's arguments for one shape.

Read by `python3 -m triton_aot.tuning.tune` on the GPU machine (python3 + torch, no Bazel); like the
inputs of a Triton benchmark, this file only makes tensors.
"""

KEY = ("M", "N", "K")

# Square matrices, then the linear layers of LLMs at decode (M = 1, 16) and prefill batch sizes:
# (N, K) of Llama-2-7B (q/k/v/o, gate/up, down) and Llama-2-70B (q/o, gate/up, down, k/v with
# grouped-query attention).
SQUARE = [(n, n, n) for n in (256, 512, 1024, 2048, 4096, 8192)]
LLM_NK = [
    (4096, 4096),
    (11008, 4096),
    (4096, 11008),
    (8192, 8192),
    (28672, 8192),
    (8192, 28672),
    (1024, 8192),
]
LLM = [(m, n, k) for m in (1, 16, 64, 256, 1024, 4096) for n, k in LLM_NK]
# Off the grid: what a server meets between and beyond those points. Odd M with the LLM layers,
# and shapes drawn log-uniformly in 1..8192 (mostly not multiples of 16, so the sweep times
# every hint pattern the JIT would specialise on: N or K not divisible by 16 leaves B's and C's
# rows, or A's, without 16-byte alignment). The seed is the tuning's own; the benchmark draws
# its shapes from another (bench/tune/tune_bench.py) and checks they were never tuned.
ODD_M = [(m, n, k) for m in (7, 100, 777, 3000) for n, k in LLM_NK[:3]]
ODD_NK = [(m, n, k) for m in (1, 64, 300, 2048) for n, k in ((1000, 4096), (4096, 1000),
                                                             (3000, 3000))]


def _log_uniform_shapes(seed, count, low=2, high=8192):
    import math
    import random
    rng = random.Random(seed)
    draw = lambda: int(math.exp(rng.uniform(math.log(low), math.log(high + 1))))  # noqa: E731
    return [(draw(), draw(), draw()) for _ in range(count)]


# N = 1 (a matrix-vector product) and K = 1 (an outer product): the JIT makes a size of 1 a
# constant, and the strides with it.
ONE = ([(m, 1, k) for m in (1, 7, 64, 300, 2048) for k in (100, 3001, 4096, 6000)]
       + [(m, n, 1) for m in (1, 7, 64, 300, 2048) for n in (100, 3001, 4096, 6000)])
OFF_GRID = ODD_M + ODD_NK + ONE + _log_uniform_shapes(seed=112601, count=1000)
GRID = SQUARE + [s for s in LLM if s not in SQUARE]

# torch.nn.Linear's layout: y = x @ W.t() with the weight W row-major [N, K], so B = W.t() has
# unit stride along K (stride_bk == 1, stride_bn == K), a pattern of its own that every LLM
# layer passes. Tuned on the (N, K) of the linear layers of open models (attention q/kv/o, fused
# qkv, MLP gate/up, fused gate_up and down, MoE experts, LM heads), M from decode to prefill.
LINEAR_NK = sorted({
    # Llama-2-7B, Llama-3-8B / Mistral-7B, Llama-2/3-70B
    (4096, 4096), (1024, 4096), (6144, 4096), (11008, 4096), (4096, 11008), (14336, 4096),
    (28672, 4096), (4096, 14336), (8192, 8192), (1024, 8192), (10240, 8192), (28672, 8192),
    (8192, 28672),
    # Qwen2.5-7B, Qwen2.5-1.5B
    (3584, 3584), (512, 3584), (4608, 3584), (18944, 3584), (3584, 18944), (1536, 1536),
    (256, 1536), (8960, 1536), (1536, 8960),
    # Phi-3-mini, Llama-3.2-3B, Gemma-2-9B
    (3072, 3072), (9216, 3072), (16384, 3072), (3072, 8192), (8192, 3072), (5120, 3072),
    (3584, 4096), (4096, 3584), (14336, 3584), (3584, 14336),
    # MoE experts (Mixtral-style 14336 x 4096 above; DeepSeek-V2-Lite-like 1408 x 2048)
    (2816, 2048), (2048, 1408), (1408, 2048),
    # LM heads
    (32000, 4096), (128256, 4096), (152064, 3584),
})
# M in powers of two and, as prefill lengths mostly are, not a multiple of 16: each M hint class
# of a layer then has points from decode to prefill.
LINEAR_M = (1, 2, 3, 4, 8, 12, 16, 32, 40, 64, 100, 128, 256, 300, 512, 777, 1024, 1500, 2048,
            3000, 4096, 6000, 8192)
LINEAR = [(m, n, k, {"layout": "nt"}) for n, k in LINEAR_NK for m in LINEAR_M
          # the LM heads only at the M a server gives them (one row per sequence)
          if n < 32000 or m <= 256]
RANDOM_NT = [(m, n, k, {"layout": "nt"}) for m, n, k in _log_uniform_shapes(seed=112602, count=300)]

SHAPES = GRID + [s for s in OFF_GRID if s not in GRID] + LINEAR + RANDOM_NT

# Callers the table is not tuned on, which still get variants with their own hints (each
# runs the algo the table picks from its nearest tuned points): A transposed (A = X.t(), X
# row-major [K, M]) against both layouts of B, aligned and not.
CALLERS = [(m, n, k, {"layout": layout}) for layout in ("tn", "tt")
           for m, n, k in ((4096, 4096, 4096), (100, 1000, 3000))]

DTYPES = {"matmul_tuned": "float16", "matmul_tuned_bf16": "bfloat16"}
LAYOUTS = ("nn", "nt", "tn", "tt")


def make_args(torch, dtype, M, N, K, layout="nn"):
    """A (M x K), B (K x N), C (M x N) and the arguments after the stream:
    a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn.
    `layout` says how A and B lie in memory: n, row-major; t, the transpose of a row-major
    matrix (B = W.t() with W [N, K], as torch.nn.Linear passes its weight; A = X.t() with X
    [K, M]). C is row-major."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r} is none of {LAYOUTS}")
    a = (torch.randn((M, K), device="cuda", dtype=dtype) if layout[0] == "n"
         else torch.randn((K, M), device="cuda", dtype=dtype).t()) / K ** 0.5
    b = (torch.randn((K, N), device="cuda", dtype=dtype) if layout[1] == "n"
         else torch.randn((N, K), device="cuda", dtype=dtype).t())
    c = torch.empty((M, N), device="cuda", dtype=dtype)
    return [a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1)]


def check(torch, dtype, args, M, N, K, layout="nn"):
    """C against cuBLAS (torch.matmul) in the same dtype."""
    a, b, c = args[:3]
    return bool(torch.allclose(c.float(), torch.matmul(a, b).float(), atol=3e-2, rtol=3e-2))
