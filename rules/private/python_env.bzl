"""The repository that exposes the Python environment that has `triton`.

It holds a `py_runtime` for that interpreter (and a Python toolchain built on it), the `cuda.h`
that ships inside the triton package (the only CUDA header the generated C needs). Nothing here
touches a GPU or a CUDA driver.
"""

_ENV_VAR = "RULES_TRITON_PYTHON"

# Runs in the chosen interpreter: reports what the rules need from it, as JSON.
_PROBE = """
import json, os, sys
try:
    import triton
except Exception as e:
    sys.stderr.write("cannot import triton: %s: %s\\n" % (type(e).__name__, e))
    sys.exit(3)
try:
    import absl.flags
except Exception as e:
    sys.stderr.write("cannot import absl (absl-py): %s\\n" % e)
    sys.exit(3)
include = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "include")
print(json.dumps({
    "triton_version": triton.__version__,
    "python_version": "%d.%d" % sys.version_info[:2],
    "cuda_h": os.path.join(include, "cuda.h"),
}))
"""

_BUILD = """\
load("@rules_python//python:defs.bzl", "py_runtime", "py_runtime_pair")
load("@rules_cc//cc:defs.bzl", "cc_library")

package(default_visibility = ["//visibility:public"])

# The interpreter that has triton {triton_version} (Python {python_version}).
py_runtime(
    name = "runtime",
    interpreter_path = "{interpreter}",
    python_version = "PY3",
)

py_runtime_pair(
    name = "runtime_pair",
    py3_runtime = ":runtime",
)

toolchain(
    name = "python_toolchain",
    toolchain = ":runtime_pair",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)

# cuda.h from the triton package: the generated C needs its declarations only; the driver
# itself is found at run time with dlopen.
cc_library(
    name = "cuda_headers",
    hdrs = ["include/cuda.h"],
    includes = ["include"],
)

exports_files(["include/cuda.h"])
"""

def _triton_python_repository_impl(rctx):
    interpreter = rctx.os.environ.get(_ENV_VAR, "") or rctx.attr.interpreter
    if not interpreter:
        fail(("rules_triton: no Python environment with triton. Set {var}=/path/to/python3 " +
              "(tools/bazel does this after tools/setup), or in your MODULE.bazel: " +
              "triton = use_extension(\"@rules_triton//rules:extensions.bzl\", \"triton\"); " +
              "triton.python_env(interpreter = \"/path/to/python3\").").format(var = _ENV_VAR))
    if not interpreter.startswith("/"):
        found = rctx.which(interpreter)
        if not found:
            fail("rules_triton: the Python interpreter '{}' ({} or triton.python_env) is not on PATH; give an absolute path.".format(interpreter, _ENV_VAR))
        interpreter = str(found)
    result = rctx.execute(
        [interpreter, "-I", "-c", _PROBE],
        environment = {"PYTHONNOUSERSITE": "1", "TRITON_CACHE_DIR": str(rctx.path("triton_cache"))},
        quiet = True,
    )
    if result.return_code != 0:
        fail(("rules_triton: the Python interpreter {} ({} or triton.python_env) is not usable: {}" +
              "Install the pins in tools/requirements.lock into it (tools/setup does).").format(
            interpreter,
            _ENV_VAR,
            result.stderr or "exit code {}\n".format(result.return_code),
        ))
    info = json.decode(result.stdout.strip().splitlines()[-1])
    if not info["triton_version"].startswith("3.6."):
        fail("rules_triton: {} has triton {}, but rules_triton needs triton 3.6.x (see tools/requirements.lock).".format(
            interpreter,
            info["triton_version"],
        ))
    rctx.template("include/cuda.h", info["cuda_h"], substitutions = {}, executable = False)
    rctx.file("BUILD.bazel", _BUILD.format(
        interpreter = interpreter,
        triton_version = info["triton_version"],
        python_version = info["python_version"],
    ))

triton_python_repository = repository_rule(
    implementation = _triton_python_repository_impl,
    attrs = {
        "interpreter": attr.string(doc = "Path (or PATH name) of a python3 that has triton 3.6.x and absl-py."),
    },
    environ = [_ENV_VAR],
    local = True,
    doc = "Exposes an existing Python environment that has triton as a py_runtime, a Python toolchain and cuda.h.",
)
