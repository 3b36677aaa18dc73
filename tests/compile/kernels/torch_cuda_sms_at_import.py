"""Asks torch for the SM count at import."""
import torch
import triton
import triton.language as tl

NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count


@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)
