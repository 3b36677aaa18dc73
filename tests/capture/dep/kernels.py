"""A kernel file of a py_library (//tests/capture/dep) that a launcher in another package
imports: its libraries name it by module and depend on the library, not on the file."""

import triton
import triton.language as tl


@triton.jit
def twice_kernel(X, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * 2, mask=i < n)
