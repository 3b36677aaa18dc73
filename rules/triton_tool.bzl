"""`triton_tool`: a triton_aot tool (compile, link, disasm) as an executable target.

`bazel run @rules_triton//triton_aot:compile -- --kernel_path=... --out_c=...` runs the tool in
the resolved Triton toolchain's interpreter, with its triton on the path, exactly as the rule's
actions do, so one kernel's C (or its error) can be read without writing a BUILD target.
"""

load("//rules/private:toolchain_type.bzl", "find_triton_toolchain", "use_triton_toolchain")

def _runfiles_path(ctx, path):
    # An exec-root path of the toolchain (`.` for the main repository, `external/REPO/...` for
    # the others) as a path under the runfiles root.
    if path == ".":
        return ctx.workspace_name
    if path.startswith("external/"):
        return path[len("external/"):]
    return ctx.workspace_name + "/" + path

def _file_runfiles_path(ctx, f):
    if f.short_path.startswith("../"):
        return f.short_path[len("../"):]
    return ctx.workspace_name + "/" + f.short_path

def _triton_tool_impl(ctx):
    toolchain = find_triton_toolchain(ctx)
    if toolchain.interpreter != None:
        interpreter = '"$runfiles/{}"'.format(_file_runfiles_path(ctx, toolchain.interpreter))
    else:
        interpreter = "'{}'".format(toolchain.interpreter_path)
    python_path = ":".join([
        "$runfiles/" + _runfiles_path(ctx, p)
        for p in toolchain.python_path
    ])

    # Not named like the target: //triton_aot:compile's would be the file triton_aot/compile,
    # where the compile stage's package is.
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.expand_template(
        template = ctx.file._launcher,
        output = launcher,
        substitutions = {
            "@INTERPRETER@": interpreter,
            "@MODULE@": "triton_aot." + ctx.attr.module,
            "@PYTHONPATH@": python_path,
        },
        is_executable = True,
    )
    return [DefaultInfo(
        executable = launcher,
        runfiles = ctx.runfiles(transitive_files = toolchain.tool_inputs),
    )]

triton_tool = rule(
    implementation = _triton_tool_impl,
    doc = "A triton_aot tool, run by `bazel run` in the resolved Triton toolchain's interpreter.",
    attrs = {
        "module": attr.string(
            mandatory = True,
            values = ["compile.compile", "emit_c.link", "compile.disasm", "compile.autotune_configs", "tuning.call_hints"],
            doc = "The tool's module in triton_aot: STAGE.MODULE.",
        ),
        "_launcher": attr.label(
            default = Label(":triton_tool.sh"),
            allow_single_file = True,
        ),
    },
    executable = True,
    toolchains = use_triton_toolchain(),
)
