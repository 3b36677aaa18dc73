"""Inputs of the tuning command for //tuning:scale_tuned (its tuning_inputs)."""

KEY = ("n",)
SHAPES = [(1024,), (1000,), (1 << 20,)]
DTYPES = {"scale_tuned": "float32"}


def make_args(torch, dtype, n):
    """x and out, then n: the C API's arguments after the stream."""
    x = torch.randn((n,), device="cuda", dtype=dtype)
    return [x, torch.empty_like(x), n]
