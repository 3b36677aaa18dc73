"""rules_triton ahead-of-time compiler for Triton kernels.

`python -m triton_aot.compile` compiles one kernel specialisation (see docs/design.md).
Importing this package must stay cheap: triton itself is imported lazily by the
modules that need it, so that flag/signature/grid errors are reported fast.
"""

import sys

# The tools run from Bazel runfiles and sandboxes: never write .pyc files next to sources
# (this package's modules, kernel files, their helpers). Set here because the package is
# imported before any of its modules when run as `python -m triton_aot.<tool>`.
sys.dont_write_bytecode = True
