"""Kernels as real kernel files write them: @triton.autotune configs built by code,
@triton.heuristics, constexpr defaults, an optional pointer that may be None, a string
constexpr. For tests/autotune (the autotune_configs tool and rule, the compile tool)."""
import triton
import triton.language as tl


def get_configs():
    configs = []
    for block in (256, 1024):
        for warps in (2, 4):
            configs.append(triton.Config({"BLOCK": block}, num_warps=warps, num_stages=1))
    configs.append(triton.Config({"BLOCK": 128}, num_warps=1, num_stages=2, maxnreg=128))
    return configs


def keep_big_blocks(configs, named_args, **kwargs):
    """A pruner that needs no run-time argument."""
    return [c for c in configs if c.kwargs["BLOCK"] >= 256]


def prune_by_size(configs, named_args, **kwargs):
    """A pruner that needs one (kept out at build time)."""
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]


@triton.autotune(configs=get_configs(), key=["n"],
                 prune_configs_by={"early_config_prune": keep_big_blocks})
@triton.heuristics({"ALIGNED": lambda args: args["n"] % 16 == 0,
                    "WIDE": lambda args: args["BLOCK"] >= 1024 and args["num_warps"] >= 4})
@triton.jit
def scale_kernel(x_ptr, out_ptr, bias_ptr, n, alpha: tl.constexpr = 2.0,
                 BLOCK: tl.constexpr = 64, ALIGNED: tl.constexpr = False,
                 WIDE: tl.constexpr = False, ACTIVATION: tl.constexpr = "none",
                 OUT_DTYPE: tl.constexpr = tl.float32):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if ALIGNED:
        offs = tl.max_contiguous(tl.multiple_of(offs, 16), 16)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x * alpha
    if bias_ptr is not None:
        y += tl.load(bias_ptr + offs, mask=offs < n, other=0.0)
    if ACTIVATION == "leaky_relu":
        y = tl.where(y >= 0, y, 0.01 * y)
    tl.store(out_ptr + offs, y.to(OUT_DTYPE), mask=offs < n)


@triton.autotune(configs=get_configs(), key=["n"],
                 prune_configs_by={"early_config_prune": prune_by_size})
@triton.heuristics({"num_warps": lambda args: 4})  # configs that differ only in num_warps collapse
@triton.jit
def pruned_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
@triton.jit
def runtime_block_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def even_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
    else:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
