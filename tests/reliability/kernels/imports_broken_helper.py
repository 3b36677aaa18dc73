"""A kernel file importing a helper of its own srcs whose import raises (broken_helper.py:3)."""
import triton
import triton.language as tl
from broken_helper import twice  # noqa: F401  (line 4: the import, not the cause)


@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)
