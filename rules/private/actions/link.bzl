"""The TritonLink action: the library's header, C file and description, from the variant records."""

load(":actions.bzl", "run_triton_tool", "tool_args")

def link_library(ctx, toolchain, *, c_name, metadata, images, tuning = None):
    """The TritonLink action: the library's header, C file and description, from the records.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      c_name: the C API prefix.
      metadata: list of the variants' JSON Files (in variant order).
      images: list of the cubin and PTX Files the records name (the link tool embeds them).
      tuning: struct(table = File or None, key = list of names, default_algo = int, stale_ok,
        place = the table's path in its workspace), or None: the tuned dispatch NAME_auto
        (triton_aot.contract.tuning_table).

    Returns:
      struct(c = File, h = File, description = File: the library description).
    """
    header = ctx.attr.header or (c_name + ".h")
    out_h = ctx.actions.declare_file(header)

    # The C file includes its header by file name, so both sit in the same folder.
    header_dir = header.rpartition("/")[0]
    out_c = ctx.actions.declare_file((header_dir + "/" if header_dir else "") + c_name + ".c")

    # What the stages after the link read (the torch ops, the tuner): contract/library.py.
    out_library = ctx.actions.declare_file((header_dir + "/" if header_dir else "") + c_name + ".library.json")
    args = tool_args(ctx)
    args.add(c_name, format = "--name=%s")
    args.add(out_c, format = "--out_c=%s")
    args.add(out_h, format = "--out_h=%s")
    args.add(out_library, format = "--out_library=%s")
    if ctx.attr.embed_ptx:
        args.add("--embed_ptx_fallback")
    tables = []
    if tuning:
        args.add_joined(tuning.key, join_with = ",", format_joined = "--tuning_key=%s")
        args.add(str(tuning.default_algo), format = "--tuning_default_algo=%s")
        if tuning.stale_ok:
            args.add("--tuning_stale_ok")

        # The label as the user types it in the library's own workspace (for the retune command).
        label = "//{}:{}".format(ctx.label.package, ctx.label.name) if not ctx.label.workspace_name else str(ctx.label)
        args.add(label, format = "--tuning_label=%s")
        args.add(tuning.place, format = "--tuning_place=%s")
        if tuning.table:
            args.add(tuning.table, format = "--tuning=%s")
            tables.append(tuning.table)
    args.add_all(metadata)
    run_triton_tool(
        ctx,
        toolchain,
        module = "emit_c.link",
        args = args,
        inputs = metadata + images + tables,
        outputs = [out_c, out_h, out_library],
        mnemonic = "TritonLink",
        progress_message = "Linking Triton library %{label}",
    )
    return struct(c = out_c, h = out_h, description = out_library)
