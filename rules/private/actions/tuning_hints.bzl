"""The TritonTuningHints action: the JIT's hint patterns of a library's tuning calls."""

load(":actions.bzl", "run_triton_tool", "tool_args")

def derive_tuning_hints(ctx, toolchain, *, c_name, record, inputs, tuning):
    """Writes NAME.tuning_hints.bzl: the JIT's hint patterns of the tuning calls.

    `python3 -m triton_aot.tuning.call_hints` runs the `tuning_inputs` file's `make_args` on meta
    tensors; `tools/tune` copies the result beside the table, where the BUILD file loads it as
    the library's `specializations`. With a table, also the algos NAME_auto can launch through
    each pattern (`SPECIALIZATION_ALGOS`, triton_aot.tuning.tuning_reach), the library's
    `specialization_algos`.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      c_name: the library's C name (its `DTYPES` entry in the inputs file).
      record: one variant record (JSON) of the library: the C API's arguments.
      inputs: the `tuning_inputs` File.
      tuning: the tuned dispatch's settings (table File or None, default_algo).

    Returns:
      The .bzl File.
    """
    out = ctx.actions.declare_file("_tuning/" + ctx.label.name + ".tuning_hints.bzl")
    args = tool_args(ctx)
    args.add(inputs, format = "--inputs=%s")
    args.add(record, format = "--record=%s")
    args.add(c_name, format = "--library=%s")
    args.add(out, format = "--out_bzl=%s")
    if tuning.table:
        args.add(tuning.table, format = "--tuning=%s")
        args.add(str(tuning.default_algo), format = "--tuning_default_algo=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "tuning.call_hints",
        args = args,
        inputs = [inputs, record] + ([tuning.table] if tuning.table else []),
        outputs = [out],
        mnemonic = "TritonTuningHints",
        progress_message = "Deriving the tuning calls' hint patterns of %{label}",
    )
    return out
