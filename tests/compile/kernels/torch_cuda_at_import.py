"""Chooses its block size and a constant from torch.cuda at import, as kernel packages do."""
import torch
import triton
import triton.language as tl

assert torch.cuda.is_available() and torch.cuda.device_count() == 1
MAJOR, MINOR = torch.cuda.get_device_capability()
NAME = torch.cuda.get_device_properties(0).name
assert NAME == torch.cuda.get_device_name()
BLOCK = tl.constexpr(1024 if (MAJOR, MINOR) >= (9, 0) else 256)
WARPS = tl.constexpr(torch.cuda.get_device_properties(0).warp_size)


@triton.jit
def k(x_ptr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.full((BLOCK,), WARPS, tl.float32))
