"""Captured from the launcher of //tests/capture:unfused_declaration and its example calls by
python3 -m triton_aot.capture.tool. Do not edit: the target's _declaration_test fails
when this differs from a fresh capture, and its failure message says how to update it."""

# The triton_kernel_library attributes of each library the launcher launches.
LIBRARIES = {
    "unfused": {
        "kernel": "muladd_kernel",
        "kernel_src": "tests/capture/option_launchers.py",
        "signature": "*fp32, *fp32, *fp32, *fp32, i32, BLOCK",
        "specializations": [
            "A:16 B:16 C:16 OUT:16 n:16",
            "A:16 B:16 C:16 OUT:16 n:1",
            "A:16 B:16 C:16 OUT:16",
            "",
        ],
        "algos": [
            {
                "constexprs": {
                    "BLOCK": 256,
                },
                "num_warps": 4,
                "num_stages": 3,
                "enable_fp_fusion": False,
            },
        ],
        "grid": "cdiv(n, 256)",
    },
}

# Per example call: the (library, algo index) of each launch, in order, and the size
# conditions the launcher's choices depended on.
CALLS = [
    {
        "call": "fp32(n), fp32(n), fp32(n)",
        "launches": [
            [
                "unfused",
                0,
            ],
        ],
        "guards": [],
    },
]

# The torch op over the launches (triton_torch_op attributes; `launcher_op(OP)`).
OP = {
    "lib": "unfused",
    "bind": {
        "A": "a",
        "B": "b",
        "C": "c",
        "n": "a.size(0)",
    },
    "checks": [
        "a.dim() == 1",
        "b.dim() == 1",
        "c.dim() == 1",
        "b.size(0) == a.size(0)",
        "c.size(0) == a.size(0)",
    ],
    "contiguous": [
        "a",
        "b",
        "c",
    ],
    "outputs": {
        "OUT": "a.size(0)",
    },
    "args": [
        "a",
        "b",
        "c",
    ],
}
