"""The actions of `triton_kernel_library`: TritonCompile, TritonSass, TritonLink, and the C.

The three Triton actions run a triton_aot tool through `run_triton_tool`, so the interpreter
flags, the param file, the environment and the toolchain are decided in one place. The library's
one C file is then compiled with the C++ toolchain (`compile_c_library`).
"""

load("@rules_cc//cc:find_cc_toolchain.bzl", "find_cc_toolchain")
load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("//rules/private:toolchain_type.bzl", "TRITON_EXEC_GROUP")

# IR files every compile action writes, by output group. `sass` comes from a separate action
# (it runs a disassembler), so it is only built when asked for.
IR_GROUPS = ["ptx", "ttir", "ttgir", "llir", "cubin"]

# The same for hip targets: AMDGCN assembly and the hsaco instead of PTX and cubin.
HIP_IR_GROUPS = ["ttir", "ttgir", "llir", "amdgcn", "hsaco"]

def ir_groups(target):
    """The IR output groups one variant of `target` ("cuda:90", "hip:gfx942") writes.

    Args:
      target: the target string.

    Returns:
      list of group names.
    """
    return HIP_IR_GROUPS if target.startswith("hip:") else IR_GROUPS

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

def check_kernel_import(ctx, toolchain, *, source, targets, algo, worker):
    """One TritonImport action: imports the kernel once, before any variant compiles.

    Every TritonCompile action takes its output, so a kernel file that does not import (a
    missing dep, an error at module level, a dep that switched Triton off) or whose parameters
    the signature does not fit fails this one action, with one error, instead of once per
    variant.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      source: the `kernel_source` struct.
      targets: the library's targets ("cuda:90", ...): the kernel is imported for the first,
        and each is checked against the targets table (and the signature's tensor
        descriptors), once for the library.
      algo: an algo of the library (check_algos): its signature is bound to the parameters.
      worker: whether to run in a persistent worker (the compile tool's).

    Returns:
      The kernel's parameter list (JSON) File.
    """
    out = ctx.actions.declare_file("_triton/{}/kernel_params.json".format(ctx.label.name))
    args = tool_args(ctx)
    add_kernel_source_args(ctx, toolchain, args, source)
    args.add(ctx.attr.kernel, format = "--kernel_name=%s")
    args.add(targets[0], format = "--target=%s")
    args.add_joined(targets, join_with = ",", format_joined = "--library_targets=%s")
    _add_signature_args(args, algo)
    args.add(out, format = "--out_params=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "compile.compile",
        args = args,
        inputs = source.inputs if not source.file else depset([source.file], transitive = [source.inputs]),
        outputs = [out],
        mnemonic = "TritonImport",
        progress_message = "Importing Triton kernel %{{label}}: {} for {}".format(ctx.attr.kernel, targets[0]),
        execution_requirements = _worker_requirements(worker),
    )
    return out

def _add_signature_args(args, algo):
    # the library's signature with this algo's values in its {CONSTEXPR} placeholders
    args.add(algo["signature"], format = "--signature=%s")
    if algo["constexprs"]:
        args.add(",".join(["{}={}".format(k, v) for k, v in algo["constexprs"].items()]), format = "--constexprs=%s")

def _worker_requirements(worker):
    return {"supports-workers": "1", "requires-worker-protocol": "json"} if worker else None

def compile_variant(ctx, toolchain, *, source, kernel_params, variant, worker):
    """One TritonCompile action: one (algo, specialization, target) of the kernel.

    Writes the variant record (JSON, which names its images relative to its own folder) and
    the images and IR next to it, under `_triton/<name>/<symbol>.<ext>`. No C: the link action
    writes the library's one C file from the records.

    Args:
      ctx: the rule context.
      toolchain: the `TritonToolchainInfo`.
      source: the `kernel_source` struct (file, inputs, import_roots).
      kernel_params: the output of `check_kernel_import` (or None when the library has one
        variant): an input only so that no variant compiles before the kernel imported once.
      variant: struct(symbol, algo, algo_index, spec_index, hints, target, embed_ptx, launch_args).
      worker: whether to run in a persistent worker.

    Returns:
      dict: "json" and each of ir_groups(variant.target) -> File.
    """
    prefix = "_triton/{}/{}".format(ctx.label.name, variant.symbol)
    outputs = {"json": ctx.actions.declare_file(prefix + ".json")}
    groups = ir_groups(variant.target)
    for group in groups:
        outputs[group] = ctx.actions.declare_file("{}.{}".format(prefix, group))

    algo = variant.algo
    args = tool_args(ctx)
    add_kernel_source_args(ctx, toolchain, args, source)
    args.add(ctx.attr.kernel, format = "--kernel_name=%s")

    _add_signature_args(args, algo)
    if variant.hints:
        args.add(variant.hints, format = "--hints=%s")
    args.add(algo["grid"], format = "--grid=%s")
    if variant.launch_args:
        args.add(variant.launch_args, format = "--launch_args=%s")
    if algo.get("maxnreg") != None:
        args.add(algo["maxnreg"], format = "--maxnreg=%s")
    if algo.get("targets"):
        args.add(",".join(algo["targets"]), format = "--algo_targets=%s")
    for name, extents in algo.get("reset_to_zero", {}).items():
        args.add("{}={}".format(name, extents), format = "--reset_to_zero=%s")
    args.add(algo["num_warps"], format = "--num_warps=%s")
    args.add(algo["num_stages"], format = "--num_stages=%s")
    args.add(algo["num_ctas"], format = "--num_ctas=%s")
    if algo["launch_pdl"]:
        args.add("--launch_pdl")
    if algo["launch_cooperative_grid"]:
        args.add("--launch_cooperative_grid")
    if variant.embed_ptx:
        args.add("--embed_ptx")
    args.add(variant.target, format = "--target=%s")
    args.add(variant.symbol, format = "--symbol=%s")
    args.add(variant.algo_index, format = "--algo_index=%s")
    args.add(variant.spec_index, format = "--specialization_index=%s")
    for key in ["json"] + groups:
        args.add(outputs[key], format = "--out_" + key + "=%s")

    run_triton_tool(
        ctx,
        toolchain,
        module = "compile.compile",
        args = args,
        inputs = depset([f for f in [kernel_params, source.file] if f], transitive = [source.inputs]),
        outputs = outputs.values(),
        mnemonic = "TritonCompile",
        progress_message = "Compiling Triton kernel %{{label}}: {} algo {} [{}] for {}".format(
            ctx.attr.kernel,
            variant.algo_index,
            variant.hints or "generic",
            variant.target,
        ),
        execution_requirements = _worker_requirements(worker),
    )
    return outputs

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

def compile_c_library(ctx, *, c_file, header, runtime, includes = []):
    """Compiles the library's one C file against the C runtime; returns the merged `CcInfo`.

    The runtime (`//runtime`: driver table, locks, module cache) is its own cc_library, compiled
    once per build rather than pasted into every library; merging its CcInfo links it, its
    `-ldl -lpthread` and the cuda.h it was compiled with into every user of the library.

    Args:
      ctx: the rule context (needs the C++ toolchain, `copts` and `alwayslink`).
      c_file: the C File the link action wrote.
      header: its public header File.
      runtime: the runtime's `CcInfo`.
      includes: C Files included at the top of the library's C (`-include`), in its one
        translation unit.

    Returns:
      The library's `CcInfo`, the runtime's merged in.
    """
    cc_toolchain = find_cc_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    compilation_context, compilation_outputs = cc_common.compile(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        srcs = [c_file],
        public_hdrs = [header],
        additional_inputs = includes,
        compilation_contexts = [runtime.compilation_context],
        # The generated C is C11; only the API in the header is exported from a shared object.
        # -O2 by default: the launchers are the launch path, and optimised code is also smaller
        # (the library is its cubins plus this code); copts come after it and can override it.
        user_compile_flags = ["-std=gnu11", "-fvisibility=hidden", "-O2"] + ctx.attr.copts +
                             [flag for f in includes for flag in ("-include", f.path)],
    )
    linking_context, _ = cc_common.create_linking_context_from_compilation_outputs(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = compilation_outputs,
        linking_contexts = [runtime.linking_context],
        alwayslink = ctx.attr.alwayslink,
        disallow_dynamic_library = True,
    )
    cc_info = cc_common.merge_cc_infos(
        direct_cc_infos = [CcInfo(compilation_context = compilation_context, linking_context = linking_context)],
        cc_infos = [runtime],
    )
    return struct(
        cc_info = cc_info,
        compilation_outputs = compilation_outputs,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
    )

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

def link_shared_library(ctx, *, compiled, runtime):
    """Links the library and the runtime into lib<name>_tune.so, for tools/tune.

    The tuning command loads it with ctypes on the GPU machine. The action runs only when the
    `tuning` output group is requested.

    Args:
      ctx: the rule context.
      compiled: what `compile_c_library` returned.
      runtime: the runtime's `CcInfo`.

    Returns:
      The shared library File.
    """
    outputs = cc_common.link(
        name = ctx.label.name + "_tune",
        actions = ctx.actions,
        feature_configuration = compiled.feature_configuration,
        cc_toolchain = compiled.cc_toolchain,
        compilation_outputs = compiled.compilation_outputs,
        linking_contexts = [runtime.linking_context],
        output_type = "dynamic_library",
        link_deps_statically = True,
    )
    lib = outputs.library_to_link
    return lib.resolved_symlink_dynamic_library or lib.dynamic_library
