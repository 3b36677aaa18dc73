"""The action of triton_launcher_c_library: a captured launcher's C entry over DLPack tensors."""

load(":actions.bzl", "run_triton_tool", "tool_args")

def generate_launcher_c_entry(ctx, toolchain, *, op, function, libraries, out_c, out_h):
    """Runs `python -m triton_aot.c_entry.entry`: the entry's C source and header.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo` whose interpreter runs the generator.
      op: the File holding the launcher's op record (JSON).
      function: the C entry's name.
      libraries: list of (name in the record, library description File, header include path).
      out_c: the C source File to write.
      out_h: the header File to write.
    """
    args = tool_args(ctx)
    args.add("//{}:{}".format(ctx.label.package, ctx.label.name.removesuffix("_sources")), format = "--target=%s")
    args.add(op, format = "--op=%s")
    args.add(function, format = "--function=%s")
    for name, description, include in libraries:
        args.add("{}={}".format(name, description.path), format = "--library=%s")
        args.add("{}={}".format(name, include), format = "--include=%s")
    args.add(out_c, format = "--out_c=%s")
    args.add(out_h, format = "--out_h=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "c_entry.entry",
        args = args,
        inputs = [op] + [d for _, d, _ in libraries],
        outputs = [out_c, out_h],
        mnemonic = "TritonLauncherC",
        progress_message = "Generating the C entry of %{label}",
    )
