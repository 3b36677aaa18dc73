"""`triton_routed`: builds a library with an extra execution platform and Triton toolchain, as
a user's .bazelrc would (`--extra_execution_platforms`, `--extra_toolchains`), for one test."""

def _routed_transition_impl(_settings, attr):
    return {
        "//command_line_option:extra_execution_platforms": [str(attr.platform)],
        "//command_line_option:extra_toolchains": [str(attr.toolchain)],
    }

_routed_transition = transition(
    implementation = _routed_transition_impl,
    inputs = [],
    outputs = [
        "//command_line_option:extra_execution_platforms",
        "//command_line_option:extra_toolchains",
    ],
)

def _triton_routed_impl(ctx):
    lib = ctx.attr.lib[0]
    return [DefaultInfo(files = lib[DefaultInfo].files)]

triton_routed = rule(
    implementation = _triton_routed_impl,
    attrs = {
        "lib": attr.label(cfg = _routed_transition),
        "platform": attr.label(),
        "toolchain": attr.label(),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    doc = "The `lib` target, built with `platform` and `toolchain` registered first.",
)
