"""The TritonCompile action: one variant of a kernel (an algo, a hint pattern, a target)."""

load("//rules/private/generated:targets.bzl", "BACKENDS")
load(":actions.bzl", "add_kernel_source_args", "run_triton_tool", "tool_args", "worker_requirements")

# IR output groups, of every backend: the compile of one variant writes its backend's
# (targets.py's BACKENDS `ir_groups`). `sass` comes from a separate action (it runs a
# disassembler), so it is only built when asked for.
IR_GROUP_NAMES = {group: True for row in BACKENDS.values() for group in row["ir_groups"]}.keys()

def add_signature_args(args, algo):
    """Adds the library's signature with `algo`'s values in its {CONSTEXPR} placeholders.

    Args:
      args: the compile tool's `Args`.
      algo: the algo dict (check_algos).
    """
    args.add(algo["signature"], format = "--signature=%s")
    if algo["constexprs"]:
        args.add(",".join(["{}={}".format(k, v) for k, v in algo["constexprs"].items()]), format = "--constexprs=%s")

def compile_variant(ctx, toolchain, *, source, kernel_params, variant, worker):
    """One TritonCompile action: one (algo, specialization, target) of the kernel.

    Writes the variant record (JSON, which names its images relative to its own folder) and
    the images and IR next to it, under `_triton/<name>/<symbol>.<ext>`. No C: the link action
    writes the library's one C file from the records.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      source: the `kernel_source` struct (file, inputs, import_roots).
      kernel_params: the output of `check_kernel_import` (or None when the library has one
        variant): an input only so that no variant compiles before the kernel imported once.
      variant: struct(symbol, algo, algo_index, spec_index, hints, target (validate.bzl's
        `check_targets` struct), embed_ptx, launch_args).
      worker: whether to run in a persistent worker.

    Returns:
      dict: "json" and each of the target's IR groups -> File.
    """
    prefix = "_triton/{}/{}".format(ctx.label.name, variant.symbol)
    outputs = {"json": ctx.actions.declare_file(prefix + ".json")}
    groups = list(variant.target.row["ir_groups"])
    for group in groups:
        outputs[group] = ctx.actions.declare_file("{}.{}".format(prefix, group))

    algo = variant.algo
    args = tool_args(ctx)
    add_kernel_source_args(ctx, toolchain, args, source)
    args.add(ctx.attr.kernel, format = "--kernel_name=%s")

    add_signature_args(args, algo)
    if variant.hints:
        args.add(variant.hints, format = "--hints=%s")
    args.add(algo["grid"], format = "--grid=%s")
    if variant.launch_args:
        args.add(variant.launch_args, format = "--launch_args=%s")
    if algo.get("maxnreg") != None:
        args.add(algo["maxnreg"], format = "--maxnreg=%s")
    if algo.get("targets"):
        args.add(",".join(algo["targets"]), format = "--algo_targets=%s")
    for name, extents in algo.get("reset_to_zero", {}).items():
        args.add("{}={}".format(name, extents), format = "--reset_to_zero=%s")
    args.add(algo["num_warps"], format = "--num_warps=%s")
    args.add(algo["num_stages"], format = "--num_stages=%s")
    args.add(algo["num_ctas"], format = "--num_ctas=%s")
    if algo["launch_pdl"]:
        args.add("--launch_pdl")
    if algo["launch_cooperative_grid"]:
        args.add("--launch_cooperative_grid")
    if not algo["enable_fp_fusion"]:
        # only when off, so that the command lines (the cache keys) of fused algos stay as
        # they were
        args.add("--noenable_fp_fusion")
    if variant.embed_ptx:
        args.add("--embed_ptx")
    args.add(variant.target.name, format = "--target=%s")
    args.add(variant.symbol, format = "--symbol=%s")
    args.add(variant.algo_index, format = "--algo_index=%s")
    args.add(variant.spec_index, format = "--specialization_index=%s")
    for key in ["json"] + groups:
        args.add(outputs[key], format = "--out_" + key + "=%s")

    run_triton_tool(
        ctx,
        toolchain,
        module = "compile.compile",
        args = args,
        inputs = depset([f for f in [kernel_params, source.file] if f], transitive = [source.inputs]),
        outputs = outputs.values(),
        mnemonic = "TritonCompile",
        progress_message = "Compiling Triton kernel %{{label}}: {} algo {} [{}] for {}".format(
            ctx.attr.kernel,
            variant.algo_index,
            variant.hints or "generic",
            variant.target.name,
        ),
        execution_requirements = worker_requirements(worker),
    )
    return outputs
