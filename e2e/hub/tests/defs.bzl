"""Test rules of the hub module."""

def _rlocation(ctx, f):
    # short_path is "../<repo>/<path>" outside the main repository.
    return f.short_path[3:] if f.short_path.startswith("../") else ctx.workspace_name + "/" + f.short_path

def _launcher(ctx, executable, args):
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = launcher,
        content = "\n".join([
            "#!/bin/sh",
            "set -eu",
            'r="${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}"',
            'exec "$r/{}" {} "$@"'.format(_rlocation(ctx, executable), " ".join(['"$r/{}"'.format(_rlocation(ctx, f)) for f in args])),
            "",
        ]),
        is_executable = True,
    )
    return launcher

def _hub_test_impl(ctx):
    binary = ctx.attr.binary[DefaultInfo]
    executable = binary.files_to_run.executable
    runfiles = ctx.runfiles(files = [executable] + ctx.files.args_files).merge(binary.default_runfiles)
    return [DefaultInfo(executable = _launcher(ctx, executable, ctx.files.args_files), runfiles = runfiles)]

hub_test = rule(
    implementation = _hub_test_impl,
    doc = "Runs `binary` as a test with `args_files`' paths as arguments.",
    test = True,
    attrs = {
        "args_files": attr.label_list(allow_files = True, doc = "Files whose runfiles paths are the arguments."),
        "binary": attr.label(mandatory = True, executable = True, cfg = "target", doc = "The test program."),
    },
)

_TRITON_TOOLCHAIN = "@rules_triton//toolchains:toolchain_type"

def _toolchain_probe_test_impl(ctx):
    info = ctx.toolchains[_TRITON_TOOLCHAIN].triton
    if info.interpreter == None:
        fail("{}: the resolved Triton toolchain runs {}, an interpreter outside the build: the hub's toolchain was not selected (is //toolchains:triton_toolchain registered?)".format(ctx.label, info.interpreter_path))
    cuda_h = [h for h in info.cuda_headers.compilation_context.headers.to_list() if h.basename == "cuda.h"]
    if len(cuda_h) != 1 or not cuda_h[0].path.endswith("site-packages/triton/backends/nvidia/include/cuda.h"):
        fail("{}: the resolved Triton toolchain's cuda.h is {}, not the hub triton wheel's".format(ctx.label, [h.path for h in cuda_h]))

    # The probe runs as every Triton action does: the toolchain's interpreter, its PYTHONPATH and
    # its inputs only, in a sandbox; it fails the build when anything comes from elsewhere.
    report = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.run(
        executable = info.interpreter,
        arguments = [ctx.file.probe.path, report.path, cuda_h[0].path],
        inputs = depset([ctx.file.probe, cuda_h[0]], transitive = [info.tool_inputs]),
        outputs = [report],
        env = {
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "PYTHONPATH": ":".join(info.python_path),
        },
        mnemonic = "TritonToolchainProbe",
        progress_message = "Probing the hub's Triton toolchain",
        use_default_shell_env = False,
    )
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = launcher,
        content = '#!/bin/sh\nexec cat "${{RUNFILES_DIR:-${{TEST_SRCDIR:-$0.runfiles}}}}/{}"\n'.format(_rlocation(ctx, report)),
        is_executable = True,
    )
    compiled = depset(transitive = [t[DefaultInfo].files for t in ctx.attr.compiled])
    return [DefaultInfo(executable = launcher, runfiles = ctx.runfiles(files = [report], transitive_files = compiled))]

toolchain_probe_test = rule(
    implementation = _toolchain_probe_test_impl,
    doc = "Builds and prints the probe's report: where the resolved Triton toolchain's Python, triton, ptxas and cuda.h come from.",
    test = True,
    toolchains = [_TRITON_TOOLCHAIN],
    attrs = {
        "compiled": attr.label_list(doc = "Kernel libraries that must build with the toolchain (their files become runfiles)."),
        "probe": attr.label(mandatory = True, allow_single_file = [".py"], doc = "The probe script."),
    },
)
