"""Captured from the launcher of //tests/capture:liger_rope_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "liger_rope": {
        "kernel": "_triton_rope",
        "kernel_module": "liger_kernel.ops.rope",
        "signature": "*bf16, i32, *bf16, i32, *bf16, i32, *bf16, i32, i32, bs, cos_bs, n_qh, n_kh, hd, pad_n_qh, pad_n_kh, pad_hd, pad_rd, rd, BLOCK_SIZE, BACKWARD_PASS",
        "specializations": [
            "q_ptr:16 q_row_stride:16 k_ptr:16 k_row_stride:16 cos:16 cos_row_stride:16 sin:16 sin_row_stride:16 sl:16",
            "q_ptr:16 q_row_stride:16 k_ptr:16 k_row_stride:16 cos:16 cos_row_stride:16 sin:16 sin_row_stride:16 sl:1",
            "q_ptr:16 q_row_stride:16 k_ptr:16 k_row_stride:16 cos:16 cos_row_stride:16 sin:16 sin_row_stride:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "bs": 2,
                    "cos_bs": 1,
                    "n_qh": 32,
                    "n_kh": 8,
                    "hd": 128,
                    "pad_n_qh": 32,
                    "pad_n_kh": 8,
                    "pad_hd": 128,
                    "pad_rd": 128,
                    "rd": 128,
                    "BLOCK_SIZE": 32,
                    "BACKWARD_PASS": False,
                },
                "num_warps": 4,
                "num_stages": 3,
            },
        ],
        "grid": "2 * sl",
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "bf16(2, seq, 32, 128).transpose(1, 2), bf16(2, seq, 8, 128).transpose(1, 2), bf16(1, seq, 128), bf16(1, seq, 128)",
        "launches": [
            [
                "liger_rope",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "liger_rope",
    "bind": {
        "q_ptr": "q",
        "q_row_stride": "q.stride(2)",
        "k_ptr": "k",
        "k_row_stride": "k.stride(2)",
        "cos": "cos",
        "cos_row_stride": "cos.size(2)",
        "sin": "sin",
        "sin_row_stride": "sin.size(2)",
        "sl": "q.size(2)",
    },
    "checks": [
        "q.dim() == 4",
        "q.size(0) == 2",
        "q.size(1) == 32",
        "q.size(3) == 128",
        "q.stride(0) == 4096 * q.size(2)",
        "q.stride(1) == 128",
        "q.stride(3) == 1",
        "k.dim() == 4",
        "k.size(0) == 2",
        "k.size(1) == 8",
        "k.size(3) == 128",
        "k.stride(0) == 1024 * q.size(2)",
        "k.stride(1) == 128",
        "k.stride(3) == 1",
        "cos.dim() == 3",
        "cos.size(0) == 1",
        "cos.size(2) == 128",
        "sin.dim() == 3",
        "sin.size(0) == 1",
        "sin.size(2) == 128",
        "k.size(2) == q.size(2)",
        "cos.size(1) == q.size(2)",
        "sin.size(1) == q.size(2)",
    ],
    "contiguous": [
        "cos",
        "sin",
    ],
    "args": [
        "q",
        "k",
        "cos",
        "sin",
    ],
    "mutates": [
        "q",
        "k",
    ],
}
