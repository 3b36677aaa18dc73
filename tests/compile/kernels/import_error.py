"""A kernel file whose import fails."""
import triton

import triton_aot_test_module_that_does_not_exist  # noqa: F401


@triton.jit
def never_kernel(x_ptr):
    pass
