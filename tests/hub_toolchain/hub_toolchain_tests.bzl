"""Analysis tests of the hub-mode pieces: triton_cuda_headers and triton_toolchain's checks."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")

def _cuda_headers_test_impl(ctx):
    env = analysistest.begin(ctx)
    cc = analysistest.target_under_test(env)[CcInfo].compilation_context
    headers = [h.path for h in cc.headers.to_list()]
    asserts.equals(env, 1, len(headers))
    asserts.true(env, headers[0].endswith("site-packages/triton/backends/nvidia/include/cuda.h"), headers[0])
    asserts.equals(env, [headers[0][:-len("/cuda.h")]], cc.system_includes.to_list())
    return analysistest.end(env)

cuda_headers_test = analysistest.make(_cuda_headers_test_impl)

def _current_py_toolchain_test_impl(ctx):
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[platform_common.ToolchainInfo].triton

    # The resolved Python toolchain's py3_runtime is the one the actions run.
    asserts.true(env, info.interpreter != None or info.interpreter_path != None, "an interpreter")
    return analysistest.end(env)

current_py_toolchain_test = analysistest.make(_current_py_toolchain_test_impl)

def _failure_test_impl(ctx):
    env = analysistest.begin(ctx)
    for fragment in ctx.attr.expected:
        asserts.expect_failure(env, fragment)
    return analysistest.end(env)

failure_test = analysistest.make(
    _failure_test_impl,
    expect_failure = True,
    attrs = {"expected": attr.string_list(doc = "Fragments the failure message must contain.")},
)
