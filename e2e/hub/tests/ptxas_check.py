"""A kernel file that checks, while a TritonCompile action imports it, that the action's triton
and the ptxas that triton will run are the hub wheel's: files under the action's working
directory or the execroot (inputs), not an installed environment."""

import os

import triton
import triton.language as tl
from triton.backends.nvidia.compiler import get_ptxas

for what, path, expected in (
    ("triton", triton.__file__, "site-packages/triton/__init__.py"),
    ("ptxas", get_ptxas(90).path, "site-packages/triton/backends/nvidia/bin/ptxas"),
):
    path = os.path.abspath(path)
    # the action's inputs: its working directory, or the execroot a persistent worker imported
    # the toolchain from (its requests then run in a tree of their own inputs)
    if "/execroot/" not in path or not path.endswith(expected):
        raise RuntimeError(f"the TritonCompile action's {what} is {path}, not the hub wheel's {expected}")


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
