"""Captured from the launcher of //tests/capture:liger_rms_norm_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "liger_rms_norm": {
        "kernel": "_rms_norm_forward_kernel",
        "kernel_module": "liger_kernel.ops.rms_norm",
        "signature": "*fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, i32, fp32, fp32, casting_mode, elementwise_affine, BLOCK_SIZE",
        "specializations": [
            "Y_ptr:16 Y_row_stride:16 X_ptr:16 X_row_stride:16 W_ptr:16 W_row_stride:1 RSTD_ptr:16 RSTD_row_stride:1 n_cols:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "casting_mode": 0,
                    "elementwise_affine": True,
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
        "call": "fp32(n_rows, 4096), fp32(4096), 1e-06, 0.0, 'llama', False",
        "launches": [
            [
                "liger_rms_norm",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "liger_rms_norm",
    "bind": {
        "Y_row_stride": "X.size(1)",
        "X_ptr": "X",
        "X_row_stride": "X.size(1)",
        "W_ptr": "W",
        "W_row_stride": "1",
        "RSTD_row_stride": "1",
        "n_cols": "X.size(1)",
        "eps": "eps",
        "offset": "offset",
        "n_rows": "X.size(0)",
    },
    "checks": [
        "X.dim() == 2",
        "X.size(1) == 4096",
        "W.dim() == 1",
        "W.size(0) == 4096",
    ],
    "contiguous": [
        "X",
        "W",
    ],
    "outputs": {
        "Y_ptr": "X.size(0), 4096",
        "RSTD_ptr": "X.size(0)",
    },
    "args": [
        "X",
        "W",
        "eps: float",
        "offset: float",
    ],
}
