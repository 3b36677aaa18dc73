"""`triton_launcher_library`: kernels declared by calling the launcher their author wrote.

The capture (`triton_capture`, action `TritonCapture`, `python3 -m triton_aot.capture.tool`)
runs the launcher on fake tensors at build time, with no GPU, and writes the declaration:
NAME.launcher.bzl, the attributes of each `triton_kernel_library` the launcher launches.
Bazel's analysis needs those attributes (one compile action per variant) before any action
runs, so, as with NAME.tuning_hints.bzl, the generated file is committed next to the BUILD file
and loaded by it. When it differs from a fresh capture, NAME_declaration_test fails, and so
does the build of every target made from it (NAME_declaration_check's validation action).
`bazel run :NAME_declaration` prints the same declaration as explicit BUILD text.
"""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@bazel_skylib//rules:diff_test.bzl", "diff_test")
load("@rules_python//python:defs.bzl", "PyInfo")
load("//rules/private:kernel_source.bzl", "kernel_source")
load("//rules/private:toolchain_type.bzl", "find_triton_exec_toolchain", "triton_exec_groups")
load("//rules/private/actions:actions.bzl", "run_triton_tool", "tool_args", "worker_requirements")
load("//rules/private/actions:declaration_check.bzl", "check_declaration")
load(":algo.bzl", "triton_algo")
load(":kernel_library.bzl", "triton_kernel_library")
load(":torch_library.bzl", "triton_torch_op")

def _display_label(package, name):
    """`//pkg:name` of a target in this repository (`@repo//pkg:name` in another)."""
    repo = native.repository_name()
    return "{}//{}:{}".format("" if repo == "@" else repo, package, name)

def _label_text(ctx, label):
    """A label as the target's BUILD file writes it: "file.py" / ":lib" in its package."""
    if label.workspace_name == "" and label.package == ctx.label.package:
        return label.name if "." in label.name else ":" + label.name
    if label.workspace_name == "":
        return "//{}:{}".format(label.package, label.name)
    return str(label)

def _triton_capture_impl(ctx):
    toolchain = find_triton_exec_toolchain(ctx)
    source = kernel_source(ctx, "'{}'".format(ctx.attr.launcher))
    record = ctx.actions.declare_file(ctx.label.name + ".capture.json")

    # In a folder of its own: at the package's path, its runfile would be the committed copy's,
    # and the diff test would compare the committed file with itself.
    bzl = ctx.actions.declare_file("_capture/{}.launcher.bzl".format(ctx.attr.library_name))
    build = ctx.actions.declare_file(ctx.label.name + ".BUILD.txt")
    args = tool_args(ctx)
    args.add("//{}:{}".format(ctx.label.package, ctx.label.name), format = "--target=%s")
    if source.file:
        args.add(source.file, format = "--launcher_path=%s")
    else:
        args.add(ctx.attr.kernel_module, format = "--launcher_module=%s")
    args.add(ctx.attr.launcher, format = "--launcher=%s")
    args.add_all(ctx.files.srcs, format_each = "--src=%s")
    args.add(ctx.label.package, format = "--package=%s")
    args.add_all([_label_text(ctx, s.label) for s in ctx.attr.srcs], format_each = "--print_src=%s")
    args.add_all([_label_text(ctx, d.label) for d in ctx.attr.deps], format_each = "--print_dep=%s")
    args.add_all(source.import_roots, format_each = "--import_path=%s")
    args.add_all(ctx.attr.calls, format_each = "--call=%s")
    args.add(json.encode({k: int(v) for k, v in ctx.attr.sizes.items()}), format = "--sizes=%s")
    args.add(ctx.attr.capture_target, format = "--gpu_target=%s")
    args.add(ctx.attr.library_name, format = "--name=%s")
    args.add_all(ctx.attr.targets, format_each = "--targets=%s")
    args.add(record, format = "--out_record=%s")
    args.add(bzl, format = "--out_bzl=%s")
    args.add(build, format = "--out_build=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "capture.tool",
        args = args,
        inputs = source.inputs,
        outputs = [record, bzl, build],
        mnemonic = "TritonCapture",
        progress_message = "Capturing the launches of %{label}",
        execution_requirements = worker_requirements(ctx.attr._persistent_worker[BuildSettingInfo].value),
    )
    printer = ctx.actions.declare_file(ctx.label.name + ".print.sh")

    # `bazel run` starts it in the runfiles tree of this workspace
    ctx.actions.write(printer, "#!/bin/sh\nexec cat '{}'\n".format(build.short_path), is_executable = True)
    return [
        DefaultInfo(files = depset([record, bzl, build]), executable = printer, runfiles = ctx.runfiles([build])),
        OutputGroupInfo(launcher_bzl = depset([bzl]), record = depset([record]), build = depset([build])),
    ]

triton_capture = rule(
    implementation = _triton_capture_impl,
    doc = "Runs a launcher on fake tensors at build time and writes its declaration " +
          "(NAME.launcher.bzl, a record, explicit BUILD text). `bazel run` prints the BUILD text.",
    executable = True,
    attrs = {
        "srcs": attr.label_list(allow_files = [".py"], doc = "Python files; one defines the launcher."),
        "kernel_src": attr.label(allow_single_file = [".py"], doc = "The file that defines the launcher, when srcs has several."),
        "kernel_module": attr.string(doc = "Instead of srcs: the installed module that defines the launcher."),
        "deps": attr.label_list(providers = [PyInfo], doc = "py_library targets the launcher imports."),
        "launcher": attr.string(mandatory = True, doc = "The function that runs kernel[grid](...)."),
        "calls": attr.string_list(mandatory = True, doc = "Example calls (see triton_launcher_library)."),
        "sizes": attr.string_dict(doc = "Dynamic size name -> example value."),
        "capture_target": attr.string(default = "cuda:90", doc = "The target Triton's driver and torch.cuda answer for while the launcher runs."),
        "_persistent_worker": attr.label(default = Label("//:persistent_worker")),
        "library_name": attr.string(mandatory = True, doc = "Name (prefix) of the libraries."),
        "targets": attr.string_list(doc = "The libraries' targets (for the printed BUILD text)."),
    },
    exec_groups = triton_exec_groups(),
)

def _stale_message(name, package):
    """What the build and NAME_declaration_test say of a stale NAME.launcher.bzl: the fix."""
    folder = package + "/" if package else ""
    return ("{folder}{name}.launcher.bzl is stale (the launcher, its kernels or the example calls changed); " +
            "update it: tools/bazel build //{package}:{name}_declaration && cp bazel-bin/{folder}_capture/{name}.launcher.bzl {dest}").format(
        folder = folder,
        name = name,
        package = package,
        dest = folder or ".",
    )

def _declaration_check_impl(ctx):
    stamp = check_declaration(ctx, captured = ctx.file.captured, committed = ctx.file.committed, message = ctx.attr.message)

    # A validation: Bazel runs it for every target that depends on this one (each kernel
    # library of the launcher, so every torch op, C entry and binary over them).
    return [OutputGroupInfo(_validation = depset([stamp]))]

_triton_declaration_check = rule(
    implementation = _declaration_check_impl,
    doc = "Fails the build of every target that depends on it when the committed " +
          "NAME.launcher.bzl is not what a fresh capture writes (action TritonDeclarationCheck).",
    attrs = {
        "captured": attr.label(allow_single_file = [".bzl"], mandatory = True, doc = "The capture's NAME.launcher.bzl."),
        "committed": attr.label(allow_single_file = [".bzl"], mandatory = True, doc = "The copy next to the BUILD file."),
        "message": attr.string(mandatory = True, doc = "The one line the build fails with."),
        "_declaration_check": attr.label(
            default = Label("//rules/private/actions:declaration_check.sh"),
            allow_single_file = True,
            executable = True,
            cfg = "exec",
        ),
    },
)

def _split_launcher(name, launcher):
    """"pkg.module:function" -> ("pkg.module", "function"); "function" -> (None, "function")."""
    module, sep, function = launcher.rpartition(":")
    if not sep:
        return None, launcher
    if not module or not function:
        fail("{}: attribute 'launcher': '{}'; write \"pkg.module:function\" for an installed module, or \"function\" for one in srcs".format(name, launcher))
    return module, function

def triton_launcher_library(
        name,
        launcher,
        calls,
        sizes = {},
        libraries = None,
        srcs = [],
        launcher_src = None,
        deps = [],
        targets = None,
        capture_target = None,
        visibility = None,
        **kwargs):
    """Kernel libraries declared by the launcher that runs them and a few example calls.

    Creates `NAME_declaration` (the capture; `bazel run` prints the declaration as explicit
    `triton_kernel_library` targets), `NAME_declaration_test` (the committed NAME.launcher.bzl
    is what a fresh capture writes) and, given `libraries`, one `triton_kernel_library` per
    kernel the launcher launches: `NAME` when it launches one, else `NAME_<kernel>`. Each
    library depends on `NAME_declaration_check`, whose validation action
    (`TritonDeclarationCheck`, a file compare) fails `bazel build` of the library and of every
    target over it (torch ops, C entries, binaries) when the committed NAME.launcher.bzl is
    stale, with the same one line as the test; `--norun_validations` skips it.

    Args:
      name: the target name; prefix of the libraries.
      launcher: `"pkg.module:function"` (an installed module, e.g.
        `"liger_kernel.ops.rms_norm:rms_norm_forward"`) or `"function"` (defined in `srcs`).
      calls: example calls, as Python call arguments: `"bf16(n_rows, 1024), bf16(1024), 1e-6"`;
        `bf16(...)`, `fp16(...)`, `fp32(...)`, ... are CUDA tensors of those sizes (`strides=`,
        `offset=` for other layouts), and torch views work on them.
      sizes: the dynamic sizes by name, with an example value each (`{"n_rows": 4096}`); every
        other size is static.
      libraries: `LIBRARIES` of the committed NAME.launcher.bzl (load it in the BUILD file);
        None before the first capture.
      srcs: Python files with the launcher and its kernels (other packages' exported files
        too, e.g. "//kernels:add.py", imported as `kernels.add`).
      launcher_src: the file of `srcs` that defines the launcher, when there are several.
      deps: py_library targets the launcher imports.
      targets: the libraries' GPU targets.
      capture_target: the target the build-time driver answers for (default: the first of
        `targets`, else cuda:90).
      visibility: of every target.
      **kwargs: further `triton_kernel_library` attributes, for every library; `tags` and
        `testonly` also reach NAME_declaration and NAME_declaration_test.
    """
    module, function = _split_launcher(name, launcher)
    capture_target = capture_target or (targets[0] if targets else "cuda:90")

    # what every target of the macro takes, so that `tags = ["manual"]` keeps a refused
    # capture out of //pkg/... and a testonly launcher's capture may depend on it
    common = {k: kwargs[k] for k in ("tags", "testonly") if k in kwargs}
    triton_capture(
        name = name + "_declaration",
        srcs = srcs,
        kernel_src = launcher_src,
        deps = deps,
        kernel_module = module,
        launcher = function,
        calls = calls,
        sizes = {k: str(v) for k, v in sizes.items()},
        capture_target = capture_target,
        library_name = name,
        targets = targets or [],
        visibility = visibility,
        **common
    )
    native.filegroup(
        name = name + "_declaration_bzl",
        srcs = [":" + name + "_declaration"],
        output_group = "launcher_bzl",
        visibility = ["//visibility:private"],
        **common
    )
    package = native.package_name()
    stale = _stale_message(name, package)
    diff_test(
        name = name + "_declaration_test",
        failure_message = stale,
        file1 = ":" + name + "_declaration_bzl",
        file2 = name + ".launcher.bzl",
        **common
    )
    if libraries == None:
        return

    # Every library depends on it, so that `bazel build` of a library, or of anything over one,
    # fails on a stale declaration instead of building the old op.
    _triton_declaration_check(
        name = name + "_declaration_check",
        captured = ":" + name + "_declaration_bzl",
        committed = name + ".launcher.bzl",
        message = "error: {}: {}".format(_display_label(package, name), stale),
        visibility = ["//visibility:private"],
        **common
    )
    prefix = package + "/" if package else ""
    for lib_name, attrs in libraries.items():
        lib = dict(attrs)
        lib["algos"] = [triton_algo(**algo) for algo in attrs["algos"]]
        if "kernel_src" in lib:
            # the kernel's file: in this package, or another package's exported file in srcs
            src = lib["kernel_src"]
            if src.startswith(prefix) and "/" not in src[len(prefix):]:
                lib["kernel_src"] = src[len(prefix):]
            else:
                lib["kernel_src"] = "//{}:{}".format(src.rpartition("/")[0], src.rpartition("/")[2])
            lib["srcs"] = srcs
            lib["deps"] = deps
        elif deps:
            lib["deps"] = deps
        triton_kernel_library(
            name = lib_name,
            targets = targets,
            declaration_check = ":" + name + "_declaration_check",
            visibility = visibility,
            **(lib | kwargs)
        )

def launcher_op(op):
    """The torch op of a captured launcher, for `triton_torch_library`'s `ops`.

    Args:
      op: `OP` of the committed NAME.launcher.bzl (its library in the same package).

    Returns:
      What `triton_torch_op` returns.
    """
    attrs = dict(op)
    if "composite" in op:  # torch work and one primitive op per launch: each launch's library
        attrs["composite"] = dict(op["composite"], launches = [
            dict(launch, lib = ":" + launch["lib"])
            for launch in op["composite"]["launches"]
        ])
    elif "steps" in op:  # several launches: each step's library
        attrs["steps"] = [dict(step, lib = ":" + step["lib"]) for step in op["steps"]]
    else:
        attrs["lib"] = ":" + op["lib"]
    return triton_torch_op(**attrs)
