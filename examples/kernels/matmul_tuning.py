"""Inputs of the tuning command for matmul_tuned and matmul_tuned_bf16 (tuning_inputs in
BUILD.bazel): which shapes to time, and the C API's arguments for one shape.

Read by `python3 -m triton_aot.tune` on the GPU machine (python3 + torch, no Bazel); like the
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
SHAPES = SQUARE + [s for s in LLM if s not in SQUARE]

DTYPES = {"matmul_tuned": "float16", "matmul_tuned_bf16": "bfloat16"}


def make_args(torch, dtype, M, N, K):
    """Row-major A (M x K), B (K x N), C (M x N) and the arguments after the stream:
    a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn."""
    a = torch.randn((M, K), device="cuda", dtype=dtype) / K ** 0.5
    b = torch.randn((K, N), device="cuda", dtype=dtype)
    c = torch.empty((M, N), device="cuda", dtype=dtype)
    return [a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1)]


def check(torch, dtype, args, M, N, K):
    """C against cuBLAS (torch.matmul) in the same dtype."""
    a, b, c = args[:3]
    return bool(torch.allclose(c.float(), torch.matmul(a, b).float(), atol=3e-2, rtol=3e-2))
