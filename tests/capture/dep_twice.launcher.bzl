"""Captured from the launcher of //tests/capture:dep_twice_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "dep_twice": {
        "kernel": "twice_kernel",
        "kernel_module": "tests.capture.dep.kernels",
        "signature": "*fp32, *fp32, i32, BLOCK",
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
                "dep_twice",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "dep_twice",
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
        "Y": "x.size(0)",
    },
    "args": [
        "x",
    ],
}
