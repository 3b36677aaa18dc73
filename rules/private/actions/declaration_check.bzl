"""The TritonDeclarationCheck action: a committed NAME.launcher.bzl against a fresh capture."""

def check_declaration(ctx, *, captured, committed, message):
    """Compares the committed declaration with the capture's; the build fails on a difference.

    Only a file compare (the capture's output is an ordinary, cached action output), meant for
    the `_validation` output group: Bazel runs it for every target in the build that depends on
    the checking target, alongside their other actions, and `--norun_validations` skips it.

    Args:
      ctx: the rule context; `ctx.executable._declaration_check` is declaration_check.sh.
      captured: the File the capture wrote.
      committed: the File next to the BUILD file.
      message: the one line the failed build prints.

    Returns:
      The (empty) File the check writes when the two agree.
    """
    stamp = ctx.actions.declare_file(ctx.label.name + ".ok")
    ctx.actions.run(
        executable = ctx.executable._declaration_check,
        arguments = [captured.path, committed.path, stamp.path, message],
        inputs = [captured, committed],
        outputs = [stamp],
        mnemonic = "TritonDeclarationCheck",
        progress_message = "Checking that {} is current".format(committed.short_path),
    )
    return stamp
