"""Captured from the launcher of //tests/capture:decode_attention_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "decode_attention_decode_partial_kernel": {
        "kernel": "decode_partial_kernel",
        "kernel_src": "tests/capture/serving_kernels.py",
        "signature": "*bf16, *bf16, *bf16, *fp32, *fp32, i32, i32, fp32, i32, i32, i32, H, NUM_SPLITS, HEAD_DIM, BLOCK_N",
        "specializations": [
            "Q:16 K:16 V:16 Partial:16 Lse:16 seq_len:16 chunk:16 stride_kb:16 stride_ks:16 stride_kh:16",
            "Q:16 K:16 V:16 Partial:16 Lse:16 seq_len:1 chunk:1 stride_kb:16 stride_ks:16 stride_kh:16",
            "Q:16 K:16 V:16 Partial:16 Lse:16 seq_len:16 stride_kb:16 stride_ks:16 stride_kh:16",
            "Q:16 K:16 V:16 Partial:16 Lse:16 chunk:1 stride_kb:16 stride_ks:16 stride_kh:16",
            "Q:16 K:16 V:16 Partial:16 Lse:16 stride_kb:16 stride_ks:16 stride_kh:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "H": 32,
                    "NUM_SPLITS": 8,
                    "HEAD_DIM": 128,
                    "BLOCK_N": 64,
                },
                "num_warps": 4,
                "num_stages": 2,
            },
        ],
        "grid": "32 * batch, 8",
        "launch_args": [
            "batch: i32",
        ],
    },
    "decode_attention_decode_reduce_kernel": {
        "kernel": "decode_reduce_kernel",
        "kernel_src": "tests/capture/serving_kernels.py",
        "signature": "*fp32, *fp32, *bf16, NUM_SPLITS, HEAD_DIM",
        "specializations": [
            "Partial:16 Lse:16 Out:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "NUM_SPLITS": 8,
                    "HEAD_DIM": 128,
                },
                "num_warps": 2,
                "num_stages": 3,
            },
        ],
        "grid": "32 * batch",
        "launch_args": [
            "batch: i32",
        ],
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "bf16(batch, 32, 128), bf16(batch, seq, 32, 128), bf16(batch, seq, 32, 128), 0.088",
        "launches": [
            [
                "decode_attention_decode_partial_kernel",
                0,
            ],
            [
                "decode_attention_decode_reduce_kernel",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "args": [
        "q",
        "k_cache",
        "v_cache",
        "sm_scale: float",
    ],
    "steps": [
        {
            "lib": "decode_attention_decode_partial_kernel",
            "bind": {
                "Q": "q",
                "K": "k_cache",
                "V": "v_cache",
                "seq_len": "k_cache.size(1)",
                "chunk": "cdiv(k_cache.size(1), 8)",
                "sm_scale": "sm_scale",
                "stride_kb": "4096 * k_cache.size(1)",
                "stride_ks": "k_cache.stride(1)",
                "stride_kh": "k_cache.size(3)",
                "batch": "q.size(0)",
            },
            "checks": [
                "q.dim() == 3",
                "q.size(1) == 32",
                "q.size(2) == 128",
                "k_cache.dim() == 4",
                "k_cache.size(2) == 32",
                "k_cache.size(3) == 128",
                "v_cache.dim() == 4",
                "v_cache.size(2) == 32",
                "v_cache.size(3) == 128",
                "k_cache.size(0) == q.size(0)",
                "v_cache.size(0) == q.size(0)",
                "v_cache.size(1) == k_cache.size(1)",
            ],
            "contiguous": [
                "q",
                "k_cache",
                "v_cache",
            ],
            "outputs": {
                "Partial": "q.size(0), 32, 8, 128",
                "Lse": "q.size(0), 32, 8",
            },
            "args": [
                "q",
                "k_cache",
                "v_cache",
                "sm_scale: float",
            ],
        },
        {
            "lib": "decode_attention_decode_reduce_kernel",
            "bind": {
                "Partial": "Partial",
                "Lse": "Lse",
                "batch": "Partial.size(0)",
            },
            "checks": [
                "Partial.dim() == 4",
                "Partial.size(1) == 32",
                "Partial.size(2) == 8",
                "Partial.size(3) == 128",
                "Lse.dim() == 3",
                "Lse.size(1) == 32",
                "Lse.size(2) == 8",
                "Lse.size(0) == Partial.size(0)",
            ],
            "contiguous": [
                "Partial",
                "Lse",
            ],
            "outputs": {
                "Out": "Partial.size(0), 32, 128",
            },
            "args": [
                "Partial",
                "Lse",
            ],
        },
    ],
    "returns": [
        [
            1,
            "Out",
        ],
    ],
}
