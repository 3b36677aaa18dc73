"""The TritonImport action: the kernel imported and its signature bound once per library."""

load(":actions.bzl", "add_kernel_source_args", "run_triton_tool", "tool_args", "worker_requirements")
load(":compile.bzl", "add_signature_args")

def check_kernel_import(ctx, toolchain, *, source, targets, algo, worker):
    """One TritonImport action: imports the kernel once, before any variant compiles.

    Every TritonCompile action takes its output, so a kernel file that does not import (a
    missing dep, an error at module level, a dep that switched Triton off) or whose parameters
    the signature does not fit fails this one action, with one error, instead of once per
    variant.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      source: the `kernel_source` struct.
      targets: the library's targets ("cuda:90", ...): the kernel is imported for the first,
        and each is checked against the targets table (and the signature's tensor
        descriptors), once for the library.
      algo: an algo of the library (check_algos): its signature is bound to the parameters.
      worker: whether to run in a persistent worker (the compile tool's).

    Returns:
      The kernel's parameter list (JSON) File.
    """
    out = ctx.actions.declare_file("_triton/{}/kernel_params.json".format(ctx.label.name))
    args = tool_args(ctx)
    add_kernel_source_args(ctx, toolchain, args, source)
    args.add(ctx.attr.kernel, format = "--kernel_name=%s")
    args.add(targets[0], format = "--target=%s")
    args.add_joined(targets, join_with = ",", format_joined = "--library_targets=%s")
    add_signature_args(args, algo)
    args.add(out, format = "--out_params=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "compile.compile",
        args = args,
        inputs = source.inputs if not source.file else depset([source.file], transitive = [source.inputs]),
        outputs = [out],
        mnemonic = "TritonImport",
        progress_message = "Importing Triton kernel %{{label}}: {} for {}".format(ctx.attr.kernel, targets[0]),
        execution_requirements = worker_requirements(worker),
    )
    return out
