"""`current_cuda_headers`: the resolved Triton toolchain's cuda.h, as a `CcInfo` dependency.

The C runtime (`//runtime`) is an ordinary `cc_library`, which cannot resolve toolchains itself;
it depends on `//toolchains:current_cuda_headers` instead, like rules_python's
`current_py_toolchain` forwards the Python toolchain.
"""

load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("//rules/private:toolchain_type.bzl", "find_triton_toolchain", "use_triton_toolchain")

def _current_cuda_headers_impl(ctx):
    cuda = find_triton_toolchain(ctx).cuda_headers
    return [
        DefaultInfo(files = cuda.compilation_context.headers),
        cuda,
    ]

current_cuda_headers = rule(
    implementation = _current_cuda_headers_impl,
    doc = "Forwards the `cuda_headers` CcInfo of the resolved Triton toolchain.",
    toolchains = use_triton_toolchain(),
    provides = [CcInfo],
)
