"""lib<name>_tune.so: the library and the runtime linked into one shared object, for tools/tune."""

load("@rules_cc//cc/common:cc_common.bzl", "cc_common")

def link_shared_library(ctx, *, compiled, runtime):
    """Links the library and the runtime into lib<name>_tune.so, for tools/tune.

    The tuning command loads it with ctypes on the GPU machine. The action runs only when the
    `tuning` output group is requested.

    Args:
      ctx: the rule context.
      compiled: what `compile_c_library` returned.
      runtime: the runtime's `CcInfo`.

    Returns:
      The shared library File.
    """
    outputs = cc_common.link(
        name = ctx.label.name + "_tune",
        actions = ctx.actions,
        feature_configuration = compiled.feature_configuration,
        cc_toolchain = compiled.cc_toolchain,
        compilation_outputs = compiled.compilation_outputs,
        linking_contexts = [runtime.linking_context],
        output_type = "dynamic_library",
        link_deps_statically = True,
    )
    lib = outputs.library_to_link
    return lib.resolved_symlink_dynamic_library or lib.dynamic_library
