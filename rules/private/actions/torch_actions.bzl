"""The actions of triton_torch_library: generate the op sources, compile and link the op library."""

load("@rules_cc//cc:find_cc_toolchain.bzl", "find_cc_toolchain")
load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load(":actions.bzl", "run_triton_tool", "tool_args")

def generate_torch_ops(ctx, toolchain, *, plan, inputs, out_cc, out_py):
    """Runs `python -m triton_aot.torch.torch_ops`: the op library's C++ source and Python module.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo` whose interpreter runs the generator.
      plan: the plan File (JSON: namespace, ops, each op's library description and include).
      inputs: list of Files the plan names (the library descriptions).
      out_cc: the C++ source File to write.
      out_py: the Python module File to write.
    """
    args = tool_args(ctx)
    args.add("--plan", plan)
    args.add("--out_cc", out_cc)
    args.add("--out_py", out_py)
    run_triton_tool(
        ctx,
        toolchain,
        module = "torch.torch_ops",
        args = args,
        inputs = [plan] + inputs,
        outputs = [out_cc, out_py],
        mnemonic = "TritonTorchOps",
        progress_message = "Generating torch ops %{label}",
    )

def compile_torch_op_library(ctx, *, source, compilation_contexts, linking_contexts, target_version):
    """Compiles the generated C++ against the stable-ABI headers and links lib<name>.so.

    The shared object holds the kernel libraries (linked statically) and the op registration;
    it links against no torch library: the stable ABI's C symbols resolve when torch loads it.

    Args:
      ctx: the rule context (needs the C++ toolchain).
      source: the generated C++ File.
      compilation_contexts: the kernel libraries' and the torch headers' compilation contexts.
      linking_contexts: the kernel libraries' linking contexts.
      target_version: `(major, minor)` of the oldest torch the binary must load in.

    Returns:
      The shared library File.
    """
    cc_toolchain = find_cc_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    major, minor = target_version
    _, compilation_outputs = cc_common.compile(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        srcs = [source],
        compilation_contexts = compilation_contexts,
        user_compile_flags = [
            "-std=c++17",
            "-O2",
            "-fvisibility=hidden",
            # Only stable-ABI functions that torch major.minor already has (torch/csrc/stable/version.h).
            "-DTORCH_TARGET_VERSION=0x{}{}000000000000".format(_hex2(major), _hex2(minor)),
        ],
    )
    outputs = cc_common.link(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = compilation_outputs,
        linking_contexts = linking_contexts,
        output_type = "dynamic_library",
        link_deps_statically = True,
    )
    lib = outputs.library_to_link
    return lib.resolved_symlink_dynamic_library or lib.dynamic_library

def _hex2(n):
    digits = "0123456789abcdef"
    return digits[(n // 16) % 16] + digits[n % 16]
