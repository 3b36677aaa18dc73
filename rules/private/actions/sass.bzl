"""The TritonSass action: the SASS listing of one variant's cubin."""

load(":actions.bzl", "run_triton_tool", "tool_args")

def disassemble(ctx, toolchain, *, symbol, cubin):
    """One TritonSass action: the SASS listing of one variant's cubin (output group `sass`).

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      symbol: the variant's symbol (names the output).
      cubin: the variant's cubin File.

    Returns:
      The .sass File.
    """
    sass = ctx.actions.declare_file("_triton/{}/{}.sass".format(ctx.label.name, symbol))
    args = tool_args(ctx)
    args.add(cubin, format = "--cubin=%s")
    args.add(sass, format = "--out=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "compile.disasm",
        args = args,
        inputs = [cubin],
        outputs = [sass],
        mnemonic = "TritonSass",
        progress_message = "Disassembling %{{label}} {}".format(symbol),
    )
    return sass
