"""`local_python`: a copy of an installed CPython as a repository of files, with a `py_runtime`.

A stand-in for rules_python's `python.toolchain`, whose python-build-standalone archives come from
GitHub: the machines that build this module offline reach PyPI and Debian's archive only. Like
those archives, the repository holds the interpreter binary and its standard library as files,
so they are inputs of the actions that run them (and reach a remote executor); what it does not
hold is what python-build-standalone does not hold either: glibc, and here the few system
libraries Debian's build links (libz, libexpat, and for some stdlib extensions libffi, libssl).
The interpreter is copied, not linked, so that its prefix is this repository: CPython finds its
standard library next to the binary, and the installation's site and dist-packages folders
(Debian's torch, for one) are not on its path. A CPython built with a shared libpython (pyenv's,
for one) still loads that library from its installation, through the binary's RUNPATH.
"""

_QUERY = """\
import os, sys, sysconfig
print(os.path.realpath(sys.executable))
print(sysconfig.get_path("stdlib"))
print("%d.%d" % sys.version_info[:2])
"""

_COPY = """\
import shutil, sys
# No byte code (it would be a second, unlisted copy of every module) and no site-packages.
shutil.copytree(sys.argv[1], sys.argv[2], symlinks = True, ignore = shutil.ignore_patterns(
    "__pycache__", "site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo",
    "ensurepip", "config-*"))
"""

_BUILD = """\
load("@rules_python//python:defs.bzl", "py_runtime")

package(default_visibility = ["//visibility:public"])

py_runtime(
    name = "runtime",
    files = glob(["lib/**"], exclude = ["**/* *"]),
    interpreter = "bin/python3",
    python_version = "PY3",
)

exports_files(["bin/python3"])
"""

def _local_python_impl(rctx):
    python = rctx.attr.interpreter
    if "/" not in python:
        found = rctx.which(python)
        if not found:
            fail("error: local_python: attribute 'interpreter': {} is not on PATH; give its absolute path".format(python))
        python = str(found)
    query = rctx.execute([python, "-I", "-S", "-c", _QUERY])
    if query.return_code != 0:
        fail("error: local_python: attribute 'interpreter': {} does not run: {}".format(python, query.stderr))
    executable, stdlib, version = query.stdout.strip().split("\n")
    if rctx.attr.python_version and version != rctx.attr.python_version:
        fail("error: local_python: attribute 'python_version': {} is Python {}, not {}; the pip hub's wheels are for {}".format(
            python,
            version,
            rctx.attr.python_version,
            rctx.attr.python_version,
        ))
    rctx.execute(["mkdir", "-p", "bin", "lib"])
    copy = rctx.execute(["cp", executable, "bin/python3"])
    if copy.return_code != 0:
        fail("error: local_python: cannot copy {}: {}".format(executable, copy.stderr))
    copy = rctx.execute([python, "-I", "-S", "-c", _COPY, stdlib, "lib/python" + version])
    if copy.return_code != 0:
        fail("error: local_python: cannot copy {}: {}".format(stdlib, copy.stderr))
    rctx.file("BUILD.bazel", _BUILD)

local_python = repository_rule(
    implementation = _local_python_impl,
    doc = "Copies an installed CPython (binary and standard library) into a repository with a `py_runtime` named `runtime`.",
    attrs = {
        "interpreter": attr.string(
            default = "python3",
            doc = "The installed interpreter to copy: a name on PATH or an absolute path.",
        ),
        "python_version": attr.string(
            doc = "Its major.minor version, checked when given.",
        ),
    },
)
