"""Runs a prebuilt jar with the Java runtime Bazel already has (no remote java_tools).

Why: stardoc's own renderer is a java_binary, which needs rules_java's downloaded java_tools;
offline we run Debian's renderer_prebuilt.jar on the local JDK instead. Docs only.
"""

load("@rules_java//java/common:java_common.bzl", "java_common")

def _runfiles_path(ctx, short_path):
    if short_path.startswith("../"):
        return short_path[3:]
    return ctx.workspace_name + "/" + short_path

def _java_jar_tool_impl(ctx):
    java = ctx.attr._java_runtime[java_common.JavaRuntimeInfo]
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = launcher,
        # A tool's runfiles are staged under <tool>.runfiles, not at their exec paths.
        content = "#!/bin/sh\nr=\"$0.runfiles\"\nexec \"$r/{java}\" -jar \"$r/{jar}\" \"$@\"\n".format(
            java = _runfiles_path(ctx, java.java_executable_runfiles_path),
            jar = _runfiles_path(ctx, ctx.file.jar.short_path),
        ),
        is_executable = True,
    )
    runfiles = ctx.runfiles(files = [ctx.file.jar], transitive_files = java.files)
    return [DefaultInfo(executable = launcher, runfiles = runfiles)]

java_jar_tool = rule(
    implementation = _java_jar_tool_impl,
    attrs = {
        "jar": attr.label(allow_single_file = [".jar"], mandatory = True),
        "_java_runtime": attr.label(default = "@bazel_tools//tools/jdk:current_java_runtime", cfg = "exec"),
    },
    executable = True,
)
