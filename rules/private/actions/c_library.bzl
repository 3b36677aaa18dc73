"""The library's one C file compiled with the C++ toolchain, against the C runtime."""

load("@rules_cc//cc:find_cc_toolchain.bzl", "find_cc_toolchain")
load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")

def compile_c_library(ctx, *, c_file, header, runtime, includes = []):
    """Compiles the library's one C file against the C runtime; returns the merged `CcInfo`.

    The runtime (`//runtime`: driver table, locks, module cache) is its own cc_library, compiled
    once per build rather than pasted into every library; merging its CcInfo links it, its
    `-ldl -lpthread` and the cuda.h it was compiled with into every user of the library.

    Args:
      ctx: the rule context (needs the C++ toolchain, `copts` and `alwayslink`).
      c_file: the C File the link action wrote.
      header: its public header File.
      runtime: the runtime's `CcInfo`.
      includes: C Files included at the top of the library's C (`-include`), in its one
        translation unit.

    Returns:
      The library's `CcInfo`, the runtime's merged in.
    """
    cc_toolchain = find_cc_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    compilation_context, compilation_outputs = cc_common.compile(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        srcs = [c_file],
        public_hdrs = [header],
        additional_inputs = includes,
        compilation_contexts = [runtime.compilation_context],
        # The generated C is C11; only the API in the header is exported from a shared object.
        # -O2 by default: the launchers are the launch path, and optimised code is also smaller
        # (the library is its cubins plus this code); copts come after it and can override it.
        user_compile_flags = ["-std=gnu11", "-fvisibility=hidden", "-O2"] + ctx.attr.copts +
                             [flag for f in includes for flag in ("-include", f.path)],
    )
    linking_context, _ = cc_common.create_linking_context_from_compilation_outputs(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = compilation_outputs,
        linking_contexts = [runtime.linking_context],
        alwayslink = ctx.attr.alwayslink,
        disallow_dynamic_library = True,
    )
    cc_info = cc_common.merge_cc_infos(
        direct_cc_infos = [CcInfo(compilation_context = compilation_context, linking_context = linking_context)],
        cc_infos = [runtime],
    )
    return struct(
        cc_info = cc_info,
        compilation_outputs = compilation_outputs,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
    )
