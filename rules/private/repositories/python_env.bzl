"""The repository that exposes the Python environment that has `triton`.

It holds a `py_runtime` for that interpreter (and a Python toolchain built on it), the `cuda.h`
that ships inside the triton package (the only CUDA header the generated C needs). Nothing here
touches a GPU or a CUDA driver.
"""

load("//rules/private/generated:targets.bzl", "CUDA_ARCHS_BY_TRITON")

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

# What the environment is (Python, triton and its installed files, absl-py, ptxas): an input of
# every Triton action, so cache keys change exactly when the compiler does.
filegroup(
    name = "fingerprint",
    srcs = ["fingerprint.json"],
)
"""

# The triton releases rules_triton is tested with (tools/version_matrix); see docs/triton_versions.md.
# They are the releases of the targets table (triton_aot/core/targets.py).
SUPPORTED_TRITON = ", ".join(CUDA_ARCHS_BY_TRITON.keys())

def _supported(version):
    parts = version.split(".")
    return len(parts) >= 2 and "{}.{}".format(parts[0], parts[1]) in CUDA_ARCHS_BY_TRITON

def _write_fingerprint(rctx, interpreter):
    """fingerprint.json (see env_fingerprint.py); re-runs this rule when the environment changes."""
    script = rctx.path(Label("//triton_aot/compile:env_fingerprint.py"))
    result = rctx.execute([interpreter, "-I", str(script)], environment = {"PYTHONNOUSERSITE": "1"}, quiet = True)
    if result.return_code != 0:
        fail("rules_triton: computing the environment fingerprint with {} failed: {}".format(interpreter, result.stderr))
    out = json.decode(result.stdout.strip().splitlines()[-1])
    rctx.file("fingerprint.json", out["fingerprint"], executable = False)

    # A `pip install` of another triton/absl-py rewrites their RECORD; a new interpreter
    # replaces the executable; either re-runs this rule (and so changes every action key).
    for path in out["watch"]:
        rctx.watch(path)

def _resolve_interpreter(rctx):
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
    return interpreter

def _triton_python_repository_impl(rctx):
    interpreter = _resolve_interpreter(rctx)
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
    if not _supported(info["triton_version"]):
        fail("rules_triton: {} has triton {}, but rules_triton supports triton {} (see tools/locks/).".format(
            interpreter,
            info["triton_version"],
            SUPPORTED_TRITON,
        ))
    _write_fingerprint(rctx, interpreter)
    rctx.template("include/cuda.h", info["cuda_h"], substitutions = {}, executable = False)
    rctx.file("BUILD.bazel", _BUILD.format(
        interpreter = interpreter,
        triton_version = info["triton_version"],
        python_version = info["python_version"],
    ))

triton_python_repository = repository_rule(
    implementation = _triton_python_repository_impl,
    attrs = {
        "interpreter": attr.string(doc = "Path (or PATH name) of a python3 that has triton (3.5 to 3.9) and absl-py."),
    },
    environ = [_ENV_VAR],
    local = True,
    doc = "Exposes an existing Python environment that has triton as a py_runtime, a Python toolchain and cuda.h.",
)

# --- archive mode: the environment as one build input, so remote executors need no install ---

_ARCHIVE_BUILD = """\
package(default_visibility = ["//visibility:public"])

# {files} files, {unpacked_mib} MiB unpacked, of {interpreter} and {distributions}.
exports_files([
    "python_env.tar.gz",
    "launcher.sh",
    "manifest.json",
])

# The fingerprint of the environment as the actions see it: computed by env_fingerprint.py run
# through launcher.sh in the unpacked archive (what is packed, not everything the client's
# interpreter has). The archive-mode toolchain gives it to every Triton action.
filegroup(
    name = "fingerprint",
    srcs = ["fingerprint.json"],
)
"""

def _archive_fingerprint(rctx, interpreter):
    """fingerprint.json of the unpacked archive, computed the way the actions run (-B -s)."""
    cache = rctx.path("scratch_unpacked")
    result = rctx.execute(
        [rctx.path("launcher.sh"), "-B", "-s", str(rctx.path(Label("//triton_aot/compile:env_fingerprint.py")))],
        environment = {
            "PYTHONNOUSERSITE": "1",
            "PYTHONPATH": "",
            "RULES_TRITON_PYTHON_CACHE": str(cache),
        },
        timeout = 600,
        quiet = True,
    )
    rctx.delete(cache)
    if result.return_code != 0:
        fail("rules_triton: the packed environment of {} does not run from its archive: {}{}".format(
            interpreter,
            result.stderr,
            result.stdout,
        ))
    rctx.file("fingerprint.json", json.decode(result.stdout.strip().splitlines()[-1])["fingerprint"], executable = False)

def _triton_python_archive_repository_impl(rctx):
    interpreter = _resolve_interpreter(rctx)

    # Watched like @rules_triton_python: a new triton or interpreter re-packs the archive. The
    # file it writes is replaced below by the archive's own.
    _write_fingerprint(rctx, interpreter)
    args = [
        interpreter,
        "-I",
        str(rctx.path(Label("//rules/private/repositories:pack_python_env.py"))),
        "--out=python_env.tar.gz",
        "--manifest=manifest.json",
        "--scratch=" + str(rctx.path("scratch")),
    ]
    for package in rctx.attr.packages:
        args.append("--package=" + package)
    args.append("--torch=" + ("auto" if rctx.attr.torch else "no"))
    rctx.report_progress("packing the Python environment of {} (about 30 s, 2 min with torch)".format(interpreter))

    # PYTHONHASHSEED: the .pyc files it writes are the same bytes on every run.
    result = rctx.execute(args, environment = {"PYTHONHASHSEED": "0", "PYTHONNOUSERSITE": "1"}, timeout = 1800, quiet = True)
    if result.return_code != 0:
        fail("rules_triton: packing the Python environment of {} for archive mode failed: {}{}".format(
            interpreter,
            result.stderr,
            result.stdout,
        ))
    rctx.delete("scratch")
    manifest = json.decode(rctx.read("manifest.json"))
    rctx.template("launcher.sh", Label("//rules/private/repositories:python_launcher.sh"), substitutions = {
        "@SHA256@": manifest["sha256"],
        "@ARCHIVE@": "python_env.tar.gz",
    }, executable = True)
    rctx.report_progress("fingerprinting the packed environment")
    _archive_fingerprint(rctx, interpreter)
    rctx.file("BUILD.bazel", _ARCHIVE_BUILD.format(
        files = manifest["files"],
        unpacked_mib = manifest["unpacked_bytes"] // (1 << 20),
        interpreter = manifest["interpreter"],
        distributions = ", ".join(manifest["distributions"]),
    ))

triton_python_archive_repository = repository_rule(
    implementation = _triton_python_archive_repository_impl,
    attrs = {
        "interpreter": attr.string(doc = "Path (or PATH name) of a python3 that has triton (3.5 to 3.9) and absl-py."),
        "packages": attr.string_list(doc = "More distributions the kernels import (with their requirements)."),
        "torch": attr.bool(
            default = True,
            doc = "Pack torch (with its requirements, numpy and its shared libraries) when the " +
                  "environment has it: kernel files import it at module level.",
        ),
    },
    environ = [_ENV_VAR],
    doc = "The Python environment that has triton, packed into one relocatable, byte-deterministic " +
          "archive plus the launcher that runs it (the toolchain's archive mode, for remote execution). " +
          "Fetched only when a build uses archive mode.",
)
