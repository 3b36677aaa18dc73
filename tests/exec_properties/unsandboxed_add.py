"""out = x + y, for a compile that must not run in Bazel's sandbox.

The exec_properties tests give the Triton actions `no-sandbox` (an execution property local
strategies honour), per target or through the execution platform a routed toolchain selects.
This module is imported by the TritonCompile action: in a sandbox (a `/sandbox/` folder in the
working directory) it fails the compile, so the targets build only when the property reached
the Triton actions.
"""
import os

import triton
import triton.language as tl

if "/sandbox/" in os.getcwd():
    raise RuntimeError("exec_properties did not reach this TritonCompile action: it runs in a "
                       f"sandbox ({os.getcwd()}), though the target asks for no-sandbox")


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
