"""Captured from the launcher of //transformer_block:add_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "add": {
        "kernel": "add_kernel",
        "kernel_src": "kernels/add.py",
        "signature": "*bf16, *bf16, *bf16, i32, BLOCK",
        "specializations": [
            "x_ptr:16 y_ptr:16 out_ptr:16 n:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "BLOCK": 1024,
                },
                "num_warps": 4,
                "num_stages": 1,
            },
        ],
        "grid": "rows",
        "launch_args": [
            "rows: i32",
        ],
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "bf16(rows, 1024), bf16(rows, 1024)",
        "launches": [
            [
                "add",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "add",
    "bind": {
        "x_ptr": "x",
        "y_ptr": "y",
        "n": "1024 * x.size(0)",
        "rows": "x.size(0)",
    },
    "checks": [
        "x.dim() == 2",
        "x.size(1) == 1024",
        "y.dim() == 2",
        "y.size(1) == 1024",
        "y.size(0) == x.size(0)",
    ],
    "contiguous": [
        "x",
        "y",
    ],
    "outputs": {
        "out_ptr": "x.size(0), 1024",
    },
    "args": [
        "x",
        "y",
    ],
}
