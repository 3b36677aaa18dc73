"""Captured from the launcher of //transformer_block:attention_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "attention": {
        "kernel": "attention_kernel",
        "kernel_src": "kernels/attention.py",
        "signature": "*bf16, *bf16, *bf16, *bf16, fp32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL",
        "specializations": [
            "Q:16 K:16 V:16 O:16 stride_qz:16 stride_qm:16 stride_qh:16 stride_kz:16 stride_kn:16 stride_kh:16 stride_vz:16 stride_vn:16 stride_vh:16 stride_oz:16 stride_om:16 stride_oh:16 H:16 N_CTX:16",
            "Q:16 K:16 V:16 O:16 stride_qz:16 stride_qm:16 stride_qh:16 stride_kz:16 stride_kn:16 stride_kh:16 stride_vz:16 stride_vn:16 stride_vh:16 stride_oz:16 stride_om:16 stride_oh:16 H:16 N_CTX:1",
            "Q:16 K:16 V:16 O:16 stride_qz:16 stride_qm:16 stride_qh:16 stride_kz:16 stride_kn:16 stride_kh:16 stride_vz:16 stride_vn:16 stride_vh:16 stride_oz:16 stride_om:16 stride_oh:16 H:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "HEAD_DIM": 64,
                    "BLOCK_M": 128,
                    "BLOCK_N": 64,
                    "CAUSAL": True,
                },
                "num_warps": 8,
                "num_stages": 3,
            },
        ],
        "grid": "cdiv(N_CTX, 128), 16 * batch",
        "launch_args": [
            "batch: i32",
        ],
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "*bf16(batch, seq, 3, 16, 64).unbind(2), 0.125",
        "launches": [
            [
                "attention",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "attention",
    "bind": {
        "Q": "q",
        "K": "k",
        "V": "v",
        "sm_scale": "sm_scale",
        "stride_qz": "3072 * q.size(1)",
        "stride_qm": "q.stride(1)",
        "stride_qh": "q.size(3)",
        "stride_kz": "3072 * q.size(1)",
        "stride_kn": "k.stride(1)",
        "stride_kh": "k.size(3)",
        "stride_vz": "3072 * q.size(1)",
        "stride_vn": "v.stride(1)",
        "stride_vh": "v.size(3)",
        "stride_oz": "1024 * q.size(1)",
        "stride_om": "1024",
        "stride_oh": "q.size(3)",
        "H": "q.size(2)",
        "N_CTX": "q.size(1)",
        "batch": "q.size(0)",
    },
    "checks": [
        "q.dim() == 4",
        "q.size(2) == 16",
        "q.size(3) == 64",
        "q.stride(0) == 3072 * q.size(1)",
        "q.stride(2) == 64",
        "q.stride(3) == 1",
        "k.dim() == 4",
        "k.size(2) == 16",
        "k.size(3) == 64",
        "k.stride(0) == 3072 * q.size(1)",
        "k.stride(2) == 64",
        "k.stride(3) == 1",
        "v.dim() == 4",
        "v.size(2) == 16",
        "v.size(3) == 64",
        "v.stride(0) == 3072 * q.size(1)",
        "v.stride(2) == 64",
        "v.stride(3) == 1",
        "k.size(0) == q.size(0)",
        "k.size(1) == q.size(1)",
        "v.size(0) == q.size(0)",
        "v.size(1) == q.size(1)",
    ],
    "contiguous": [],
    "outputs": {
        "O": "q.size(0), q.size(1), 16, 64",
    },
    "args": [
        "q",
        "k",
        "v",
        "sm_scale: float",
    ],
}
