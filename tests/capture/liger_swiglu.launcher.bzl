"""Captured from the launcher of //tests/capture:liger_swiglu_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "liger_swiglu": {
        "kernel": "_swiglu_forward_kernel",
        "kernel_module": "liger_kernel.ops.swiglu",
        "signature": "*bf16, *bf16, *bf16, i32, fp32, n_cols, BLOCK_SIZE",
        "specializations": [
            "a_ptr:16 b_ptr:16 c_ptr:16 stride:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "n_cols": 4096,
                    "BLOCK_SIZE": 4096,
                },
                "num_warps": 8,
                "num_stages": 3,
            },
        ],
        "grid": "n_rows",
        "launch_args": [
            "n_rows: i32",
        ],
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "bf16(n_rows, 4096), bf16(n_rows, 4096)",
        "launches": [
            [
                "liger_swiglu",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "liger_swiglu",
    "bind": {
        "a_ptr": "a",
        "b_ptr": "b",
        "stride": "a.size(1)",
        "gate_multiplier": "gate_multiplier",
        "n_rows": "a.size(0)",
    },
    "checks": [
        "a.dim() == 2",
        "a.size(1) == 4096",
        "b.dim() == 2",
        "b.size(1) == 4096",
        "b.size(0) == a.size(0)",
    ],
    "contiguous": [
        "a",
        "b",
    ],
    "outputs": {
        "c_ptr": "a.size(0), 4096",
    },
    "args": [
        "a",
        "b",
        "gate_multiplier: float",
    ],
}
