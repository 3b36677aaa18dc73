"""A refusal reported by an action: one `error:` line, no Starlark traceback.

A rule implementation that calls fail() makes Bazel print a Starlark traceback before the
message. For inputs the rule can tell wrong before it declares its actions, the rule declares
instead one action that prints the message and fails, and returns providers all of whose files
are that action's one output: whatever builds or uses the target (its files, its headers, its
validation output group) runs that action, and Bazel shows the message once, after its own
"... failed" line. One output only: an action with two failed inputs of one failure repeats the
message at the end of a build.
"""

load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")

def refusal(ctx, attr, message):
    """Declares the action that refuses the target with one line; returns its one output.

    Args:
      ctx: the rule context.
      attr: the attribute the message is about.
      message: what is wrong and the fix (without the label and attribute).

    Returns:
      The File the action would write (it never does).
    """
    repo = "@" + ctx.label.workspace_name if ctx.label.workspace_name else ""
    label = "{}//{}:{}".format(repo, ctx.label.package, ctx.label.name)
    text = ctx.actions.declare_file("_triton/{}/refusal.txt".format(ctx.label.name))
    ctx.actions.write(text, "error: {}: attribute '{}': {}\n".format(label, attr, message))
    refused = ctx.actions.declare_file("_triton/{}/refused".format(ctx.label.name))

    # The message is read from a file, so Bazel's "... failed" line (which shows the command)
    # does not show it a second time.
    ctx.actions.run_shell(
        inputs = [text],
        outputs = [refused],
        command = "cat \"$1\" >&2; exit 1",
        arguments = [text.path],
        mnemonic = "TritonRefuse",
        progress_message = "Checking the attributes of %{label}",
    )
    return refused

def refused_library(ctx, refused, providers):
    """The providers of a refused library: every file they name is `refused`.

    Args:
      ctx: the rule context.
      refused: the output of `refusal`.
      providers: provider constructors keyed by name: "TritonKernelInfo" (with name, header,
        description, metadata, cubins), or none.

    Returns:
      list of providers: DefaultInfo, CcInfo (`refused` as its one header), OutputGroupInfo
      (`_validation`), and the named ones.
    """
    files = depset([refused])
    result = [
        DefaultInfo(files = files),
        CcInfo(compilation_context = cc_common.create_compilation_context(headers = files)),
        OutputGroupInfo(_validation = files),
    ]
    if "TritonKernelInfo" in providers:
        result.append(providers["TritonKernelInfo"](
            name = ctx.attr.c_name or ctx.label.name,
            header = refused,
            description = refused,
            metadata = files,
            cubins = files,
        ))
    return result
