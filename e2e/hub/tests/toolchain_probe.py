"""Checks, inside a build action, that the Triton toolchain's Python, triton, absl-py, ptxas and
cuda.h are the build's own files (argv[1]: the report to write, argv[2]: the toolchain's cuda.h).

Run the way every Triton action runs: the toolchain's interpreter, its PYTHONPATH, its inputs
only. A path outside the action's working directory (the exec root, or its sandbox) is an
interpreter or a package the build does not know about: a failure.
"""

import os
import subprocess
import sys

cwd = os.getcwd()
# CPython finds its standard library from the real path of its executable; a local sandbox's
# inputs are links into the exec root, so there it reads the same declared files through the
# exec root (a remote executor has real files under the working directory).
output_base = cwd.split("/sandbox/")[0] if "/sandbox/" in cwd else os.path.dirname(os.path.dirname(cwd))
roots = [cwd, os.path.join(output_base, "execroot", os.path.basename(cwd)), output_base]
lines = []
problems = []


def build_path(path):
    """`path` relative to the working directory or exec root it lies in, or None."""
    path = os.path.abspath(path)
    for root in roots:
        if path.startswith(root + os.sep):
            return os.path.relpath(path, root)
    return None


def inside(what, path, must_contain):
    relative = build_path(path)
    lines.append(f"{what}: {relative or path}")
    if relative is None:
        problems.append(f"{what} is {path}, outside the action's inputs ({cwd})")
    elif must_contain not in relative or not relative.startswith("external/"):
        problems.append(f"{what} is {relative}, which is not a repository's {must_contain}")


inside("python", sys.executable, "/bin/python3")
inside("standard library", os.__file__, "/lib/python3")
for entry in sys.path[1:]:  # [0] is this script's folder
    if entry and build_path(entry) is None:
        problems.append(f"sys.path has {entry}, outside the action's inputs")

import absl  # noqa: E402
import triton  # noqa: E402
from triton.backends.nvidia.compiler import get_ptxas  # noqa: E402

inside("triton", triton.__file__, "site-packages/triton/__init__.py")
inside("absl-py", absl.__file__, "site-packages/absl/__init__.py")
ptxas = get_ptxas(90).path
inside("ptxas (sm_90)", ptxas, "site-packages/triton/backends/nvidia/bin/ptxas")
inside("cuda.h", sys.argv[2], "site-packages/triton/backends/nvidia/include/cuda.h")
version = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=True).stdout
lines.append("ptxas --version: " + version.strip().splitlines()[-1])
lines.append(f"triton {triton.__version__}, Python {sys.version.split()[0]}")

if problems:
    sys.exit("error: the Triton toolchain is not the hub's:\n  " + "\n  ".join(problems))
with open(sys.argv[1], "w") as out:
    out.write("\n".join(lines) + "\n")
