"""
Vector addition, written the way Triton's tutorials write a kernel file: torch imported and
called at module level, the device and target asked from the active driver at import time,
a dtype table keyed by torch dtypes, and a host-side wrapper plus a self-test that only run
when the file is executed (`python 01-vector-add.py` on a machine with a GPU).

rules_triton builds this file unchanged: at build time the active driver answers for the
target being compiled (cuda:90 -> GPUTarget("cuda", 90, 32)), `DEVICE` is only a device name,
and nothing below touches a GPU unless `add()` is called.
"""

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
TARGET = triton.runtime.driver.active.get_current_target()
torch.manual_seed(0)

# What the wrapper below passes for each torch dtype (kernel files often keep such a table).
TL_DTYPES = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32}
SCALE_ONE = torch.ones(1, dtype=torch.float32)  # a module-level tensor on the CPU


def is_cuda():
    return TARGET.backend == "cuda"


# Wider blocks on CUDA, as a tutorial might choose them from the target.
DEFAULT_BLOCK = 1024 if is_cuda() else 512


@triton.jit
def add_kernel(x_ptr,  # *Pointer* to first input vector.
               y_ptr,  # *Pointer* to second input vector.
               output_ptr,  # *Pointer* to output vector.
               n_elements,  # Size of the vector.
               BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
               ):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    assert x.device == DEVICE and y.device == DEVICE and output.device == DEVICE
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=DEFAULT_BLOCK)
    return output


if __name__ == "__main__":
    size = 98432
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    output_torch = x + y
    output_triton = add(x, y)
    print(f"max difference: {torch.max(torch.abs(output_torch - output_triton))}")
