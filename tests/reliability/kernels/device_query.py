"""Reads the SM count from the driver at import, as Triton's softmax tutorial does."""
import triton
import triton.language as tl

NUM_SM = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]


@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)
