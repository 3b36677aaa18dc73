"""What every action of the rules that runs a triton_aot tool shares: its flags and how it runs.

`run_triton_tool` decides the interpreter flags, the param file, the environment and the
toolchain in one place; each action builder (one per file in this package, as rules_go keeps
go/private/actions/) declares its outputs and flags and calls it.
"""

load("//rules/private:toolchain_type.bzl", "TRITON_EXEC_GROUP")

# A fixed environment: nothing from the user's shell reaches the tools, so their outputs depend
# only on their inputs (no HOME, PATH, CUDA_VISIBLE_DEVICES or TRITON_* leaks in).
_ACTION_ENV = {
    "PYTHONHASHSEED": "0",
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUTF8": "1",
    "LC_ALL": "C.UTF-8",
}

def tool_args(ctx):
    """A fresh `Args` for a triton_aot tool, passed in a param file.

    Every tool reads `--flagfile` (absl); a param file keeps long command lines (many variants'
    JSONs, many import roots) under the OS limit and out of the action key's argv noise.

    Args:
      ctx: the rule context.

    Returns:
      An `Args` object.
    """
    args = ctx.actions.args()
    args.set_param_file_format("multiline")
    args.use_param_file("--flagfile=%s", use_always = True)
    return args

def worker_requirements(worker):
    """The execution requirements that run a tool in a persistent worker, or None.

    The compile and capture tools serve the JSON worker protocol (`--persistent_worker`).

    Args:
      worker: whether to.

    Returns:
      dict or None.
    """
    return {"supports-workers": "1", "requires-worker-protocol": "json"} if worker else None

def run_triton_tool(
        ctx,
        toolchain,
        *,
        module,
        args,
        inputs,
        outputs,
        mnemonic,
        progress_message,
        execution_requirements = None):
    """Runs `python -B -s -m triton_aot.<stage>.<module> --flagfile=...` in the Triton toolchain.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo` (see `find_triton_exec_toolchain`).
      module: the tool's module in triton_aot, `STAGE.MODULE` (`compile.compile`, `emit_c.link`).
      args: the tool's flags, from `tool_args`.
      inputs: list or depset of the files the tool reads (besides the toolchain's).
      outputs: list of the files it writes.
      mnemonic: the action's mnemonic.
      progress_message: the action's progress message.
      execution_requirements: dict, e.g. to run in a persistent worker.
    """
    env = dict(_ACTION_ENV)
    env["PYTHONPATH"] = ":".join(toolchain.python_path)
    ctx.actions.run(
        # A hermetic interpreter (or the archive mode's launcher) is a File in the build; a
        # system one is a path outside it.
        executable = toolchain.interpreter if toolchain.interpreter != None else toolchain.interpreter_path,
        # -B: no .pyc next to the sources; -s: no user site-packages.
        arguments = ["-B", "-s", "-m", "triton_aot." + module, args],
        inputs = inputs,
        # As tools (not plain inputs): a worker key hashes them, so a change to the tools
        # restarts persistent workers. Only the tool's stage and the stages it imports: an edit
        # to the tuning or torch stage re-runs no compile.
        tools = toolchain.stage_tool_inputs[module.split(".")[0]],
        outputs = outputs,
        mnemonic = mnemonic,
        progress_message = progress_message,
        env = env,
        use_default_shell_env = False,
        execution_requirements = execution_requirements or {},
        # The rule's `triton` exec group: its execution platform, and the exec_properties a
        # target gives as "triton.KEY" (toolchain_type.bzl).
        exec_group = TRITON_EXEC_GROUP,
    )

def add_kernel_source_args(ctx, toolchain, args, source):
    """The flags every tool that imports the kernel takes: the module, its roots, the action.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      args: the tool's `Args`.
      source: the `kernel_source` struct (kernel_source.bzl).
    """
    if source.file:
        args.add(source.file, format = "--kernel_path=%s")
    else:
        args.add(ctx.attr.kernel_module, format = "--kernel_module=%s")
    args.add_all(source.import_roots, format_each = "--import_path=%s")

    # Errors then speak of the target's attributes; and the tool refuses an executor whose
    # environment is not the one the fingerprint (so the action key) describes.
    args.add(_display_label(ctx.label), format = "--bazel_target=%s")
    if toolchain.fingerprint:
        args.add(toolchain.fingerprint, format = "--env_fingerprint=%s")

def _display_label(label):
    """`//pkg:name` as a BUILD file of the same repository spells it (`@repo//pkg:name` else)."""
    repo = "@" + label.workspace_name if label.workspace_name else ""
    return "{}//{}:{}".format(repo, label.package, label.name)
