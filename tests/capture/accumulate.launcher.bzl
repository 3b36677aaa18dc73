"""Captured from the launcher of //tests/capture:accumulate_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "accumulate": {
        "kernel": "accumulate_kernel",
        "kernel_src": "tests/capture/torch_work_launchers.py",
        "signature": "*fp32, *fp32, i32, BLOCK",
        "specializations": [
            "X:16 ACC:16 n:16",
            "X:16 ACC:16 n:1",
            "X:16 ACC:16",
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
                "accumulate",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "accumulate",
    "bind": {
        "X": "x",
        "n": "x.size(0)",
    },
    "checks": [
        "x.dim() == 1",
    ],
    "contiguous": [
        "x",
    ],
    "outputs": {
        "ACC": "x.size(0)",
    },
    "fills": {
        "ACC": "0.0",
    },
    "args": [
        "x",
    ],
}
