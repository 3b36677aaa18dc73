"""Inputs of the tuning command for rmsnorm_tuned (tuning_inputs in BUILD.bazel).

Row widths of LLM hidden sizes (multiples of 16) and widths that are not (odd, prime-ish), over
decode to prefill batch sizes; the odd widths time the variants without 16-byte aligned rows.
"""

KEY = ("n_rows", "n_cols")

WIDTHS = (256, 768, 1024, 2048, 4096, 5120, 8192, 14336, 16384)
ODD_WIDTHS = (100, 333, 1000, 2050, 3001, 4097, 7000, 12289)
ROWS = (1, 16, 128, 1024, 8192)
GRID = [(r, w) for r in ROWS for w in WIDTHS]
# Off the grid, each size divisible by 16 or not on its own (the hint patterns of the calls).
OFF_GRID = ([(r, w) for r in (1, 7, 64, 100, 1000, 4096, 5000) for w in ODD_WIDTHS]
            + [(r, w) for r in (7, 100, 1000, 5000) for w in (1024, 4096, 8192)])
SHAPES = GRID + OFF_GRID

DTYPES = {"rmsnorm_tuned": "float16"}
EPS = 1e-6


def make_args(torch, dtype, n_rows, n_cols):
    """Row-major x and y (n_rows x n_cols), the weight, and the arguments after the stream:
    y, x, w, x_row_stride, y_row_stride, n_rows, n_cols, eps."""
    x = torch.randn((n_rows, n_cols), device="cuda", dtype=dtype)
    w = torch.randn((n_cols,), device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    return [y, x, w, x.stride(0), y.stride(0), n_rows, n_cols, EPS]


def reference(torch, x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)


def check(torch, dtype, args, n_rows, n_cols):
    y, x, w = args[:3]
    return bool(torch.allclose(y.float(), reference(torch, x, w).float(), atol=2e-2, rtol=2e-2))
