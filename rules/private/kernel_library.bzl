"""`triton_kernel_library`: Triton kernels compiled ahead of time into a C library (CcInfo)."""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@rules_cc//cc:find_cc_toolchain.bzl", "find_cc_toolchain", "use_cc_toolchain")
load("@rules_python//python:defs.bzl", "PyInfo")
load(":providers.bzl", "TritonKernelInfo")
load(":toolchain.bzl", "TRITON_TOOLCHAIN_TYPE")
load(":validate.bzl", "check_algos", "check_c_name", "check_specializations", "check_targets", "signature_entries")

# IR files every compile action writes, by output group. `sass` comes from a separate action
# (it runs a disassembler), so it is only built when asked for.
_IR_GROUPS = ["ptx", "ttir", "ttgir", "llir", "cubin"]

# A fixed environment: nothing from the user's shell reaches the compiler.
_ACTION_ENV = {
    "PYTHONHASHSEED": "0",
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUTF8": "1",
    "LC_ALL": "C.UTF-8",
}

def _python_path(toolchain, import_roots):
    return ":".join(toolchain.python_path + import_roots)

def _interpreter(toolchain):
    return toolchain.interpreter if toolchain.interpreter != None else toolchain.interpreter_path

def _import_roots(ctx):
    """sys.path roots for the kernel module and its py deps (execroot-relative)."""
    roots = {".": True, ctx.bin_dir.path: True}
    for src in ctx.files.srcs:
        root = src.owner.workspace_root
        if root:
            roots[root] = True
            roots[ctx.bin_dir.path + "/" + root] = True
    for dep in ctx.attr.deps:
        # PyInfo.imports are runfiles-relative ("repo/path"): small, flat lists of roots.
        for imp in dep[PyInfo].imports.to_list():
            roots["external/" + imp] = True
            roots[ctx.bin_dir.path + "/external/" + imp] = True
    return roots.keys()

def _kernel_file(ctx):
    if ctx.file.kernel_src:
        return ctx.file.kernel_src
    py = [f for f in ctx.files.srcs if f.extension == "py"]
    if len(py) != 1:
        fail("{}: attribute 'kernel_src': srcs has {} .py files; set kernel_src to the one that defines '{}'".format(
            ctx.label,
            len(py),
            ctx.attr.kernel,
        ))
    return py[0]

def _targets(ctx):
    if ctx.attr.targets:
        return ctx.attr.targets, "targets"
    return ctx.attr._default_targets[BuildSettingInfo].value, "--@rules_triton//:targets"

def _compile_variant(ctx, toolchain, kernel_file, deps_files, import_roots, worker, variant):
    prefix = "_triton/{}/{}".format(ctx.label.name, variant.symbol)
    outputs = {"c": ctx.actions.declare_file(prefix + ".c"), "h": ctx.actions.declare_file(prefix + ".h"), "json": ctx.actions.declare_file(prefix + ".json")}
    for group in _IR_GROUPS:
        outputs[group] = ctx.actions.declare_file("{}.{}".format(prefix, group))

    args = ctx.actions.args()
    args.set_param_file_format("multiline")
    args.use_param_file("--flagfile=%s", use_always = True)
    args.add(kernel_file, format = "--kernel_path=%s")
    args.add(ctx.attr.kernel, format = "--kernel_name=%s")
    args.add(ctx.attr.signature, format = "--signature=%s")
    if variant.hints:
        args.add(variant.hints, format = "--hints=%s")
    if variant.algo["constexprs"]:
        args.add(",".join(["{}={}".format(k, v) for k, v in variant.algo["constexprs"].items()]), format = "--constexprs=%s")
    args.add(variant.algo["grid"], format = "--grid=%s")
    args.add(variant.algo["num_warps"], format = "--num_warps=%s")
    args.add(variant.algo["num_stages"], format = "--num_stages=%s")
    args.add(variant.algo["num_ctas"], format = "--num_ctas=%s")
    if variant.algo["launch_pdl"]:
        args.add("--launch_pdl")
    if variant.algo["launch_cooperative_grid"]:
        args.add("--launch_cooperative_grid")
    if ctx.attr.embed_ptx and variant.highest_target:
        args.add("--embed_ptx")
    args.add(variant.target, format = "--target=%s")
    args.add(variant.symbol, format = "--symbol=%s")
    args.add(variant.algo_index, format = "--algo_index=%s")
    args.add_all(import_roots, format_each = "--import_path=%s")
    args.add(outputs["c"], format = "--out_c=%s")
    args.add(outputs["h"], format = "--out_h=%s")
    args.add(outputs["json"], format = "--out_json=%s")
    for group in _IR_GROUPS:
        args.add(outputs[group], format = "--out_" + group + "=%s")

    interpreter = _interpreter(toolchain)
    execution_requirements = {}
    if worker:
        execution_requirements = {"supports-workers": "1", "requires-worker-protocol": "json"}
    env = dict(_ACTION_ENV)
    env["PYTHONPATH"] = _python_path(toolchain, [])
    ctx.actions.run(
        executable = interpreter,
        arguments = ["-B", "-s", "-m", "triton_aot.compile", args],
        inputs = depset([kernel_file], transitive = [deps_files]),
        # As tools (not plain inputs): the worker key hashes them, so a change to the compiler
        # restarts persistent workers.
        tools = toolchain.tool_inputs,
        outputs = outputs.values(),
        mnemonic = "TritonCompile",
        progress_message = "Compiling Triton kernel %{{label}}: {} algo {} [{}] for {}".format(
            ctx.attr.kernel,
            variant.algo_index,
            variant.hints or "generic",
            variant.target,
        ),
        env = env,
        use_default_shell_env = False,
        execution_requirements = execution_requirements,
        toolchain = TRITON_TOOLCHAIN_TYPE,
    )
    return outputs

def _disassemble(ctx, toolchain, variant, cubin):
    sass = ctx.actions.declare_file("_triton/{}/{}.sass".format(ctx.label.name, variant.symbol))
    args = ctx.actions.args()
    args.add(cubin, format = "--cubin=%s")
    args.add(sass, format = "--out=%s")
    env = dict(_ACTION_ENV)
    env["PYTHONPATH"] = _python_path(toolchain, [])
    ctx.actions.run(
        executable = _interpreter(toolchain),
        arguments = ["-B", "-s", "-m", "triton_aot.disasm", args],
        inputs = [cubin],
        tools = toolchain.tool_inputs,
        outputs = [sass],
        mnemonic = "TritonSass",
        progress_message = "Disassembling %{{label}} {}".format(variant.symbol),
        env = env,
        use_default_shell_env = False,
        toolchain = TRITON_TOOLCHAIN_TYPE,
    )
    return sass

def _link(ctx, toolchain, c_name, metadata):
    header = ctx.attr.header or (c_name + ".h")
    out_h = ctx.actions.declare_file(header)

    # The dispatcher includes its header by file name, so both sit in the same folder.
    header_dir = header.rpartition("/")[0]
    out_c = ctx.actions.declare_file((header_dir + "/" if header_dir else "") + c_name + "_dispatch.c")
    args = ctx.actions.args()
    args.set_param_file_format("multiline")
    args.use_param_file("--flagfile=%s", use_always = True)
    args.add(c_name, format = "--name=%s")
    args.add(out_c, format = "--out_c=%s")
    args.add(out_h, format = "--out_h=%s")
    if ctx.attr.embed_ptx:
        args.add("--embed_ptx_fallback")
    args.add_all(metadata)
    env = dict(_ACTION_ENV)
    env["PYTHONPATH"] = _python_path(toolchain, [])
    ctx.actions.run(
        executable = _interpreter(toolchain),
        arguments = ["-B", "-s", "-m", "triton_aot.link", args],
        inputs = metadata,
        tools = toolchain.tool_inputs,
        outputs = [out_c, out_h],
        mnemonic = "TritonLink",
        progress_message = "Linking Triton dispatcher %{label}",
        env = env,
        use_default_shell_env = False,
        toolchain = TRITON_TOOLCHAIN_TYPE,
    )
    return out_c, out_h

def _cc_library(ctx, toolchain, srcs, private_hdrs, public_hdr):
    cc_toolchain = find_cc_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    cuda = toolchain.cuda_headers
    compilation_context, compilation_outputs = cc_common.compile(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        srcs = srcs,
        private_hdrs = private_hdrs,
        public_hdrs = [public_hdr],
        compilation_contexts = [cuda.compilation_context],
        # The generated C is strict C11; embedded cubins are long string literals.
        user_compile_flags = ["-std=gnu11", "-fvisibility=hidden"] + ctx.attr.copts,
    )
    linking_context, _ = cc_common.create_linking_context_from_compilation_outputs(
        name = ctx.label.name,
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = compilation_outputs,
        linking_contexts = [cuda.linking_context],
        # The driver is opened at run time (dlopen), never linked.
        user_link_flags = ["-ldl", "-lpthread"],
        alwayslink = ctx.attr.alwayslink,
        disallow_dynamic_library = True,
    )
    return cc_common.merge_cc_infos(
        direct_cc_infos = [CcInfo(compilation_context = compilation_context, linking_context = linking_context)],
        cc_infos = [cuda],
    )

def _triton_kernel_library_impl(ctx):
    label = ctx.label
    toolchain = ctx.toolchains[TRITON_TOOLCHAIN_TYPE].triton
    c_name = check_c_name(label, "c_name", ctx.attr.c_name or ctx.label.name)
    check_c_name(label, "kernel", ctx.attr.kernel)
    _, algo_constexprs = signature_entries(label, ctx.attr.signature)
    targets, targets_attr = _targets(ctx)
    archs = check_targets(label, targets_attr, targets)
    specializations = check_specializations(label, ctx.attr.specializations)
    algos = check_algos(label, ctx.attr.algos, algo_constexprs, {
        "num_warps": ctx.attr.num_warps,
        "num_stages": ctx.attr.num_stages,
        "grid": ctx.attr.grid,
    })

    kernel_file = _kernel_file(ctx)
    deps_files = depset(ctx.files.srcs, transitive = [d[PyInfo].transitive_sources for d in ctx.attr.deps])
    import_roots = _import_roots(ctx)
    worker = ctx.attr._persistent_worker[BuildSettingInfo].value
    highest = archs[-1]
    for arch in archs:
        if int(arch.rstrip("a")) > int(highest.rstrip("a")):
            highest = arch

    metadata, c_files, h_files, sass_files = [], [], [], []
    ir = {group: [] for group in _IR_GROUPS}
    for algo_index, algo in enumerate(algos):
        for spec_index, hints in enumerate(specializations):
            for target, arch in zip(targets, archs):
                variant = struct(
                    symbol = "{}_a{}_s{}_sm{}".format(c_name, algo_index, spec_index, arch),
                    algo = algo,
                    algo_index = algo_index,
                    hints = hints,
                    target = target,
                    highest_target = arch == highest,
                )
                outputs = _compile_variant(ctx, toolchain, kernel_file, deps_files, import_roots, worker, variant)
                metadata.append(outputs["json"])
                c_files.append(outputs["c"])
                h_files.append(outputs["h"])
                for group in _IR_GROUPS:
                    ir[group].append(outputs[group])
                sass_files.append(_disassemble(ctx, toolchain, variant, outputs["cubin"]))

    dispatch_c, dispatch_h = _link(ctx, toolchain, c_name, metadata)
    cc_info = _cc_library(ctx, toolchain, c_files + [dispatch_c], h_files, dispatch_h)
    groups = {group: depset(files) for group, files in ir.items()}
    groups["sass"] = depset(sass_files)
    groups["metadata"] = depset(metadata)
    groups["c_sources"] = depset(c_files + h_files + [dispatch_c, dispatch_h])
    return [
        DefaultInfo(files = depset([dispatch_h])),
        cc_info,
        OutputGroupInfo(**groups),
        TritonKernelInfo(name = c_name, header = dispatch_h, metadata = groups["metadata"], cubins = groups["cubin"]),
    ]

triton_kernel_library = rule(
    implementation = _triton_kernel_library_impl,
    doc = """Compiles a Triton kernel ahead of time into a C library.

One TritonCompile action runs per (specialization x algo x target); one TritonLink action
writes the dispatcher; the C is compiled with the C++ toolchain. The result is a `CcInfo`:
put the target in the `deps` of a `cc_binary`, `cc_test` or `cc_library` and
`#include "<package>/<name>.h"`. No GPU, CUDA toolkit or driver is needed to build or link;
the driver is opened at run time.

C API (NAME = `c_name`, default the target name), compatible with Triton's link.py:
`CUresult NAME(CUstream, args..., int algo_id)`, `NAME_default(CUstream, args...)`,
`load_NAME()`, `unload_NAME()`, `NAME_get_num_algos()`, `NAME_get_algo_info(algo_id)`.

Output groups: `ptx`, `ttir`, `ttgir`, `llir`, `cubin`, `sass`, `metadata`, `c_sources`.
""",
    attrs = {
        "srcs": attr.label_list(
            allow_files = [".py"],
            mandatory = True,
            doc = "Python files; one of them defines the @triton.jit kernel.",
        ),
        "deps": attr.label_list(
            providers = [PyInfo],
            doc = "py_library targets the kernel module imports.",
        ),
        "kernel_src": attr.label(
            allow_single_file = [".py"],
            doc = "The file that defines `kernel`, when `srcs` has several.",
        ),
        "kernel": attr.string(
            mandatory = True,
            doc = "Name of the @triton.jit function.",
        ),
        "c_name": attr.string(
            doc = "Prefix of the C API (default: the target name).",
        ),
        "header": attr.string(
            doc = "Name of the public header, relative to the package (default: `<c_name>.h`).",
        ),
        "signature": attr.string(
            mandatory = True,
            doc = """One entry per kernel parameter, in Triton's compile.py syntax: a type
(`*fp16`, `i32`, `fp32`, ...) with optional `:16`/`:1` hints that hold for every variant, a
literal for a constexpr fixed for all algos (`64`, `True`, `tl.float16`), or the parameter's
own name for a constexpr whose value each algo sets. Upstream signature strings work as-is.""",
        ),
        "specializations": attr.string_list(
            default = [""],
            doc = """Hint sets, one variant each, by parameter name: `"x_ptr:16 n:16 stride:1"`.
`:16` = 16-byte aligned pointer or integer divisible by 16, `:1` = equal to one. `""` is the
generic variant. At run time the most specialised variant whose hints hold is launched.""",
        ),
        "algos": attr.string_list(
            doc = "`triton_algo(...)` values; clients choose one by index (algo_id).",
        ),
        "grid": attr.string(
            doc = "Launch grid: up to 3 comma-separated C-like expressions over the kernel's integer arguments, " +
                  "`cdiv(a, b)`, `+ - * / %` and `{CONSTEXPR}` placeholders. E.g. `\"cdiv(n, {BLOCK}), 1, 1\"`.",
        ),
        "num_warps": attr.int(default = 4, doc = "Default num_warps for algos that do not set it."),
        "num_stages": attr.int(default = 3, doc = "Default num_stages for algos that do not set it."),
        "targets": attr.string_list(
            doc = "GPU targets, e.g. [\"cuda:80\", \"cuda:90\"]. Default: the `--@rules_triton//:targets` flag.",
        ),
        "embed_ptx": attr.bool(
            default = False,
            doc = "Also embed the PTX of the highest target, for GPUs no cubin fits (the driver JIT-compiles it).",
        ),
        "copts": attr.string_list(doc = "Extra C compiler flags for the generated C."),
        "alwayslink": attr.bool(default = False, doc = "As in cc_library."),
        "_default_targets": attr.label(default = "//:targets"),
        "_persistent_worker": attr.label(default = "//:persistent_worker"),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    toolchains = [TRITON_TOOLCHAIN_TYPE] + use_cc_toolchain(),
    fragments = ["cpp"],
    provides = [CcInfo, TritonKernelInfo],
)
