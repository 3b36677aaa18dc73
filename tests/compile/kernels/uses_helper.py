"""Imports a @triton.jit helper from another import root (needs --import_path=helper_root)."""
import triton
import triton.language as tl
from triton_aot_test_helpers import twice


@triton.jit
def twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, twice(tl.load(x_ptr + offs, mask=mask)), mask=mask)
