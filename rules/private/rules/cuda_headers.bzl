"""`triton_cuda_headers`: cuda.h out of a triton py_library (a rules_python pip hub's `@pypi//triton`)."""

load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")

# Where every triton wheel since 3.0 keeps the driver API header its launchers compile against.
_CUDA_H = "triton/backends/nvidia/include/cuda.h"

def _triton_cuda_headers_impl(ctx):
    target = ctx.attr.triton

    # A pip hub's py_library has the wheel's non-Python files in its runfiles (`data`); a
    # filegroup has them in its files.
    candidates = depset(transitive = [target[DefaultInfo].files, target[DefaultInfo].default_runfiles.files])
    found = [f for f in candidates.to_list() if f.path.endswith("/" + _CUDA_H) or f.path == _CUDA_H]
    if len(found) != 1:
        fail(("{}: attribute 'triton': {} has {} files named .../{}; name the triton package of " +
              "your pip hub, e.g. triton = \"@pypi//triton\" (a triton wheel for CUDA has exactly " +
              "one)").format(ctx.label, target.label, len(found) or "no", _CUDA_H))
    cuda_h = found[0]
    return [
        DefaultInfo(files = depset([cuda_h])),
        CcInfo(compilation_context = cc_common.create_compilation_context(
            headers = depset([cuda_h]),
            # -isystem, as a cc_library's `includes` would: the header is not ours to warn about.
            system_includes = depset([cuda_h.dirname]),
        )),
    ]

triton_cuda_headers = rule(
    implementation = _triton_cuda_headers_impl,
    doc = """The `cuda.h` of a triton package from a rules_python pip hub, as a `CcInfo`: the
`cuda_headers` of a `triton_toolchain` whose triton comes from the hub, with no interpreter
outside the build.

```starlark
triton_cuda_headers(name = "cuda_headers", triton = "@pypi//triton")
```
""",
    attrs = {
        "triton": attr.label(
            mandatory = True,
            doc = "The triton package: a pip hub's `@pypi//triton` (a `py_library` whose data " +
                  "has the wheel's files), or any target whose files or runfiles hold " +
                  "`triton/backends/nvidia/include/cuda.h`.",
        ),
    },
    provides = [CcInfo],
)
