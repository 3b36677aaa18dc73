"""Captured from the launcher of //tests/capture:rms_scale_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "rms_scale": {
        "kernel": "rms_scale_kernel",
        "kernel_src": "tests/capture/serving_kernels.py",
        "signature": "*bf16, *bf16, *bf16, i32, i32, fp32, ROWS, BLOCK",
        "specializations": [
            "X:16 W:16 Y:16 n_rows:16 n_cols:16",
            "X:16 W:16 Y:16 n_rows:1 n_cols:16",
            "X:16 W:16 Y:16 n_cols:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "ROWS": 1,
                    "BLOCK": 1024,
                },
                "num_warps": 4,
                "num_stages": 3,
                "grid": "n_rows",
            },
            {
                "constexprs": {
                    "ROWS": 1,
                    "BLOCK": 4096,
                },
                "num_warps": 8,
                "num_stages": 3,
                "grid": "n_rows",
            },
            {
                "constexprs": {
                    "ROWS": 4,
                    "BLOCK": 4096,
                },
                "num_warps": 8,
                "num_stages": 3,
                "grid": "cdiv(n_rows, 4)",
            },
        ],
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "bf16(rows, 1024), bf16(1024), 1e-06",
        "launches": [
            [
                "rms_scale",
                0,
            ],
        ],
        "guards": [
            "rows <= 1024",
        ],
    },
    {
        "call": "bf16(rows, 4096), bf16(4096), 1e-06",
        "launches": [
            [
                "rms_scale",
                1,
            ],
        ],
        "guards": [
            "rows <= 1024",
        ],
    },
    {
        "call": "bf16(rows, 4096), bf16(4096), 1e-06",
        "launches": [
            [
                "rms_scale",
                2,
            ],
        ],
        "guards": [
            "rows > 1024",
        ],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "rms_scale",
    "bind": {
        "X": "x",
        "W": "w",
        "n_rows": "x.size(0)",
        "n_cols": "x.size(1)",
        "eps": "eps",
    },
    "checks": [
        "x.dim() == 2",
        "w.dim() == 1",
    ],
    "contiguous": [
        "x",
        "w",
    ],
    "outputs": {
        "Y": "x.size(0), x.size(1)",
    },
    "algo_choice": [
        [
            "x.size(1) == 1024 and w.size(0) == 1024 and x.size(0) <= 1024",
            "0",
        ],
        [
            "x.size(1) == 4096 and w.size(0) == 4096 and x.size(0) <= 1024",
            "1",
        ],
        [
            "x.size(1) == 4096 and w.size(0) == 4096 and x.size(0) > 1024",
            "2",
        ],
    ],
    "args": [
        "x",
        "w",
        "eps: float",
    ],
}
