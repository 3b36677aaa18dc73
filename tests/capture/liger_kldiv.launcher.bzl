"""Captured from the launcher of //tests/capture:liger_kldiv_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "liger_kldiv": {
        "kernel": "_kldiv_kernel_forward",
        "kernel_module": "liger_kernel.ops.kl_div",
        "signature": "*fp32, i32, *fp32, i32, *fp32, i32, i32, fp32, BLOCK_SIZE, reduction, log_target",
        "specializations": [
            "y_ptr:16 y_stride:16 gt_ptr:16 gt_stride:16 loss_ptr:16 loss_stride:1 n_cols:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "BLOCK_SIZE": 4096,
                    "reduction": 3,
                    "log_target": False,
                },
                "num_warps": 8,
                "num_stages": 3,
            },
        ],
        "grid": "BT",
        "launch_args": [
            "BT: i32",
        ],
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "fp32(BT, 4096), fp32(BT, 4096), False, 'batchmean', 1e-10",
        "launches": [
            [
                "liger_kldiv",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "args": [
        "y_pred",
        "y_true",
        "eps: float",
    ],
    "checks": [
        "y_pred.dim() == 2",
        "y_pred.size(1) == 4096",
        "y_true.dim() == 2",
        "y_true.size(1) == 4096",
        "y_true.size(0) == y_pred.size(0)",
    ],
    "composite": {
        "dtypes": {
            "y_pred": "float32",
            "y_true": "float32",
        },
        "graph": [
            {
                "call": "aten.zeros.default",
                "args": [
                    [
                        {
                            "size": "y_pred.size(0)",
                        },
                    ],
                ],
                "kwargs": {
                    "dtype": {
                        "dtype": "float32",
                    },
                    "device": {
                        "device": "input",
                    },
                    "pin_memory": False,
                },
            },
            {
                "launch": "_kldiv_kernel_forward",
                "args": [
                    {
                        "input": "y_pred",
                    },
                    {
                        "input": "y_true",
                    },
                    {
                        "node": 0,
                    },
                ],
                "floats": [
                    "eps",
                ],
            },
            {
                "call": "aten.sum.default",
                "args": [
                    {
                        "node": 0,
                    },
                ],
                "kwargs": {},
            },
            {
                "call": "aten.div.Tensor",
                "args": [
                    {
                        "node": 2,
                    },
                    {
                        "size": "y_pred.size(0)",
                    },
                ],
                "kwargs": {},
            },
        ],
        "result": {
            "node": 3,
        },
        "launches": [
            {
                "lib": "liger_kldiv",
                "bind": {
                    "y_ptr": "y_ptr",
                    "y_stride": "y_ptr.size(1)",
                    "gt_ptr": "gt_ptr",
                    "gt_stride": "gt_ptr.size(1)",
                    "loss_ptr": "loss_ptr",
                    "loss_stride": "1",
                    "n_cols": "y_ptr.size(1)",
                    "eps": "eps",
                    "BT": "y_ptr.size(0)",
                },
                "checks": [
                    "y_ptr.dim() == 2",
                    "y_ptr.size(1) == 4096",
                    "gt_ptr.dim() == 2",
                    "gt_ptr.size(1) == 4096",
                    "loss_ptr.dim() == 1",
                    "gt_ptr.size(0) == y_ptr.size(0)",
                    "loss_ptr.size(0) == y_ptr.size(0)",
                ],
                "contiguous": [
                    "y_ptr",
                    "gt_ptr",
                    "loss_ptr",
                ],
                "args": [
                    "y_ptr",
                    "gt_ptr",
                    "loss_ptr",
                    "eps: float",
                ],
                "mutates": [
                    "loss_ptr",
                ],
            },
        ],
        "torch_work": "kl_div.py:160: torch.sum (aten.sum.default)",
    },
}
