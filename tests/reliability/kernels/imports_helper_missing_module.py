"""A kernel file importing a helper of its srcs whose own import of a missing package fails."""
import triton
import triton.language as tl
from helper_missing_module import twice  # noqa: F401  (line 4: not where it fails)


@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)
