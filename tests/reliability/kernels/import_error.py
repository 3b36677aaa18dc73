"""A kernel file whose import fails: it imports a module that does not exist."""
import triton

import rules_triton_reliability_module_that_does_not_exist  # noqa: F401


@triton.jit
def never_kernel(x_ptr):
    pass
