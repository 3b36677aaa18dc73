"""A kernel file that imports a package of the pip hub through `deps` (not the toolchain's
python_deps): the block size follows the triton version, as kernel packages gate features on it,
and the import fails unless `packaging` came from the hub's own wheel, inside the action."""

import os

import packaging
import triton
import triton.language as tl
from packaging.version import Version

_PATH = os.path.abspath(packaging.__file__)
if not _PATH.startswith(os.getcwd() + os.sep) or "site-packages/packaging/" not in _PATH:
    raise RuntimeError(f"packaging came from {_PATH}, not the pip hub's wheel (an action input)")

BLOCK = tl.constexpr(256 if Version(triton.__version__) >= Version("3.5") else 128)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)
