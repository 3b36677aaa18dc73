"""An autotuned kernel with heuristics, defaults, an optional pointer and a string constexpr,
for test_decorators.py."""
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128) for w in (1, 2)]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.heuristics({"ALIGNED": lambda args: args["n"] % 16 == 0,
                    "num_warps": lambda args: 4 if args["BLOCK"] >= 128 else args["num_warps"]})
@triton.jit
def bias_kernel(x_ptr, out_ptr, n, bias_ptr=None, ACTIVATION: tl.constexpr = "none",
                BLOCK: tl.constexpr = 32, ALIGNED: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask)
    if bias_ptr is not None:
        y += tl.load(bias_ptr + offs, mask=mask)
    if ACTIVATION == "relu":
        y = tl.maximum(y, 0.0)
    tl.store(out_ptr + offs, y, mask=mask)
