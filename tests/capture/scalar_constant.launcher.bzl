"""Captured from the launcher of //tests/capture:scalar_constant_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "scalar_constant": {
        "kernel": "add_one_kernel",
        "kernel_src": "tests/capture/torch_work_launchers.py",
        "signature": "*fp32, *fp32, *fp32, i32, BLOCK",
        "specializations": [
            "X:16 ONE:16 Y:16 n:16",
            "X:16 ONE:16 Y:16 n:1",
            "X:16 ONE:16 Y:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "BLOCK": 256,
                },
                "num_warps": 4,
                "num_stages": 3,
            },
        ],
        "grid": "cdiv(n, 256)",
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "fp32(n)",
        "launches": [
            [
                "scalar_constant",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "args": [
        "x",
    ],
    "checks": [
        "x.dim() == 1",
    ],
    "composite": {
        "dtypes": {
            "x": "float32",
        },
        "graph": [
            {
                "constant": 1.0,
                "dtype": "float32",
            },
            {
                "call": "aten.empty_like.default",
                "args": [
                    {
                        "input": "x",
                    },
                ],
                "kwargs": {
                    "pin_memory": False,
                },
            },
            {
                "launch": "add_one_kernel",
                "args": [
                    {
                        "input": "x",
                    },
                    {
                        "node": 0,
                    },
                    {
                        "node": 1,
                    },
                ],
                "floats": [],
            },
            {
                "constant": [
                    0.5,
                ],
                "dtype": "float32",
            },
            {
                "call": "aten.add.Tensor",
                "args": [
                    {
                        "node": 0,
                    },
                    {
                        "node": 3,
                    },
                ],
                "kwargs": {},
            },
            {
                "call": "aten.mul.Tensor",
                "args": [
                    {
                        "node": 1,
                    },
                    {
                        "node": 4,
                    },
                ],
                "kwargs": {},
            },
        ],
        "result": {
            "node": 5,
        },
        "launches": [
            {
                "lib": "scalar_constant",
                "bind": {
                    "X": "X",
                    "ONE": "ONE",
                    "Y": "Y",
                    "n": "X.size(0)",
                },
                "checks": [
                    "X.dim() == 1",
                    "ONE.dim() == 0",
                    "Y.dim() == 1",
                    "Y.size(0) == X.size(0)",
                ],
                "contiguous": [
                    "X",
                    "ONE",
                    "Y",
                ],
                "args": [
                    "X",
                    "ONE",
                    "Y",
                ],
                "mutates": [
                    "Y",
                ],
            },
        ],
        "torch_work": "torch_work_launchers.py:56: torch.lift_fresh_copy (aten.lift_fresh_copy.default)",
    },
}
