"""Captured from the launcher of //tests/capture:sort_first_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "sort_first": {
        "kernel": "scale_kernel",
        "kernel_src": "tests/capture/torch_work_launchers.py",
        "signature": "*fp32, *fp32, i32, fp32, BLOCK",
        "specializations": [
            "X:16 Y:16 n:16",
            "X:16 Y:16 n:1",
            "X:16 Y:16",
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
                "sort_first",
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
                "call": "aten.sort.default",
                "args": [
                    {
                        "input": "x",
                    },
                ],
                "kwargs": {},
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
                "launch": "scale_kernel",
                "args": [
                    {
                        "node": 0,
                        "item": 0,
                    },
                    {
                        "node": 1,
                    },
                ],
                "floats": [],
            },
        ],
        "result": {
            "node": 1,
        },
        "launches": [
            {
                "lib": "sort_first",
                "bind": {
                    "X": "X",
                    "Y": "Y",
                    "n": "X.size(0)",
                    "factor": "2.0",
                },
                "checks": [
                    "X.dim() == 1",
                    "Y.dim() == 1",
                    "Y.size(0) == X.size(0)",
                ],
                "contiguous": [
                    "X",
                    "Y",
                ],
                "args": [
                    "X",
                    "Y",
                ],
                "mutates": [
                    "Y",
                ],
            },
        ],
        "torch_work": "torch_work_launchers.py:31: torch.sort (aten.sort.default)",
    },
}
