"""A kernel file in the style of Triton's tutorials: a file name that is not a module
name, torch imported and called at module level, and the active driver asked at import time
for the device and the target, whose answer picks a block size."""

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
TARGET = triton.runtime.driver.active.get_current_target()
torch.manual_seed(0)
TL_DTYPES = {torch.float16: tl.float16, torch.float32: tl.float32}
ONES = torch.ones(4)  # a CPU tensor made at import

# the block a tutorial would pick from the target: Hopper gets wider blocks
TARGET_BLOCK = tl.constexpr(1024 if TARGET.backend == "cuda" and TARGET.arch >= 90 else 256)


@triton.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha):
    offs = tl.program_id(0) * TARGET_BLOCK + tl.arange(0, TARGET_BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + alpha * y, mask=mask)


def scaled_add_host(x, y, alpha):  # never runs at build time
    out = torch.empty_like(x)
    assert x.device == DEVICE
    scaled_add[(triton.cdiv(x.numel(), TARGET_BLOCK.value),)](x, y, out, x.numel(), alpha)
    return out
