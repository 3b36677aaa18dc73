"""`triton_autotune_algos`: a kernel file's @triton.autotune configs as a committed .bzl file.

Bazel decides a target's actions at analysis time, before any Python runs, so the configs (often
built by code) cannot be read during the build of the library itself. Instead a build action
evaluates them (`python -m triton_aot.compile.autotune_configs`, one TritonAutotuneConfigs action) into
`ALGOS = {kernel: [triton_algo(...), ...]}`; the BUILD file loads the committed copy of that
file, `bazel run :NAME.update` rewrites it, and the test `:NAME_test` fails when it is stale.
Each config then is one algo of the library: one TritonCompile action per (config x
specialization x target), as with hand-written algos (docs/design/stages.md, "Kernel files as written").
"""

load("@bazel_skylib//rules:diff_test.bzl", "diff_test")
load("@rules_python//python:defs.bzl", "PyInfo")
load("//rules/private:kernel_source.bzl", "kernel_source")
load("//rules/private:toolchain_type.bzl", "find_triton_exec_toolchain", "triton_exec_groups")
load("//rules/private/actions:actions.bzl", "add_kernel_source_args", "run_triton_tool", "tool_args")

def _update_command(name):
    # Called by the macro: the package is the caller's. No repository in the label: the update
    # target only writes into the main repository (BUILD_WORKSPACE_DIRECTORY), and the generated
    # file must not depend on the name it is seen under (the examples are tested both from their
    # own module and from rules_triton's).
    return "bazel run //{}:{}.update".format(native.package_name(), name)

def _triton_autotune_configs_impl(ctx):
    if not ctx.attr.kernels:
        fail("{}: attribute 'kernels': is empty; name the @triton.autotune kernels of the file".format(ctx.label))
    toolchain = find_triton_exec_toolchain(ctx)
    source = kernel_source(ctx, ", ".join(ctx.attr.kernels))
    out = ctx.actions.declare_file(ctx.label.name + ".bzl")
    args = tool_args(ctx)
    add_kernel_source_args(ctx, toolchain, args, source)
    args.add(ctx.attr.target, format = "--target=%s")
    args.add(",".join(ctx.attr.kernels), format = "--kernels=%s")
    args.add(ctx.attr.bzl, format = "--bzl_name=%s")
    args.add(ctx.attr.update_command, format = "--update_command=%s")
    args.add(ctx.attr.defs, format = "--defs=%s")
    args.add(out, format = "--out=%s")
    run_triton_tool(
        ctx,
        toolchain,
        module = "compile.autotune_configs",
        args = args,
        inputs = depset([source.file] if source.file else [], transitive = [source.inputs]),
        outputs = [out],
        mnemonic = "TritonAutotuneConfigs",
        progress_message = "Reading the @triton.autotune configs of %{{label}} ({})".format(", ".join(ctx.attr.kernels)),
    )
    return [DefaultInfo(files = depset([out]))]

_triton_autotune_configs = rule(
    implementation = _triton_autotune_configs_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".py"]),
        "kernel_src": attr.label(allow_single_file = [".py"]),
        "kernel_module": attr.string(),
        "target": attr.string(default = "cuda:90"),
        "deps": attr.label_list(providers = [PyInfo]),
        "kernels": attr.string_list(mandatory = True),
        "bzl": attr.string(mandatory = True),
        "update_command": attr.string(mandatory = True),
        "defs": attr.string(mandatory = True),
    },
    exec_groups = triton_exec_groups(),
)

def _update_impl(ctx):
    generated = ctx.file.generated
    if ctx.label.workspace_name:
        dest = None  # in another repository: nothing to rewrite in the user's tree
    else:
        dest = (ctx.label.package + "/" if ctx.label.package else "") + ctx.attr.bzl
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = script,
        is_executable = True,
        content = """#!/bin/sh
# Written by triton_autotune_algos: copies the freshly generated algos over the committed copy.
set -eu
if [ -z "${{BUILD_WORKSPACE_DIRECTORY:-}}" ]; then
  echo "error: run this with bazel run {label}" >&2
  exit 1
fi
dest="{dest}"
if [ -z "$dest" ]; then
  echo "error: {label} is in another repository; run the update target of your own package" >&2
  exit 1
fi
cp -f "{src}" "$BUILD_WORKSPACE_DIRECTORY/$dest"
chmod 644 "$BUILD_WORKSPACE_DIRECTORY/$dest"
echo "wrote $dest"
""".format(label = ctx.label, dest = dest or "", src = generated.short_path),
    )
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(files = [generated]))]

_triton_autotune_update = rule(
    implementation = _update_impl,
    attrs = {
        "generated": attr.label(allow_single_file = [".bzl"], mandatory = True),
        "bzl": attr.string(mandatory = True),
    },
    executable = True,
)

def triton_autotune_algos(name, kernels, srcs = None, src = None, kernel_src = None, kernel_module = None, target = "cuda:90", deps = [], out = None, defs = "@rules_triton//rules:defs.bzl", **kwargs):
    """The `@triton.autotune` configs of a kernel file as `triton_algo` lists, kept in a .bzl file.

    Creates:
    - `NAME_generated`: builds the .bzl from the kernel file (one TritonAutotuneConfigs action);
    - `NAME.update`: `bazel run` it to write that file next to the BUILD file as `out`;
    - `NAME_test`: fails while the committed `out` differs from a fresh one (configs edited,
      triton upgraded), saying to run `NAME.update`.

    The BUILD file then loads the committed file and gives each kernel its configs as algos:

        load(":matmul_algos.bzl", "ALGOS")
        triton_autotune_algos(name = "matmul_algos", src = "matmul.py", kernels = ["matmul_kernel"])
        triton_kernel_library(name = "matmul", srcs = ["matmul.py"], kernel = "matmul_kernel",
                              algos = ALGOS["matmul_kernel"], ...)

    The first time, before the file exists, create it with
    `ALGOS = {"matmul_kernel": []}` (a load of a missing file fails the whole package), then run
    `bazel run :matmul_algos.update`. `AUTOTUNE_KEYS` in the same file holds each kernel's
    autotune `key`; the variant records hold it too.

    Args:
      name: the name of the targets (and, by default, of the file: `NAME.bzl`).
      kernels: names of the `@triton.autotune` kernels in the file.
      srcs: Python files; one defines the kernels (or use `src`).
      src: the kernel file, when it is the only source.
      kernel_src: the file that defines the kernels, when `srcs` has several.
      kernel_module: instead of a file, the installed module that defines the kernels
        (`"liger_kernel.ops.dyt"`).
      target: the target the file is imported for (default `cuda:90`): config lists built
        from `triton.runtime.driver.active.get_current_target()` (as Triton's tutorials do)
        see this target, so a library for other targets may want its own file.
      deps: py_library targets the kernel file imports.
      out: the committed file's name in this package (default `NAME.bzl`).
      defs: the .bzl file the generated file loads `triton_algo` from.
      **kwargs: `visibility`, `tags`, ... for the three targets.
    """
    if kernel_module == None and (srcs == None) == (src == None):
        fail("triton_autotune_algos {}: give either src (the kernel file), srcs or kernel_module".format(name))
    out = out or name + ".bzl"
    if "/" in out or not out.endswith(".bzl"):
        fail("triton_autotune_algos {}: attribute 'out': '{}' is not a .bzl file name in this package; write e.g. \"{}.bzl\"".format(name, out, name))
    update = _update_command(name)
    _triton_autotune_configs(
        name = name + "_generated",
        srcs = srcs if srcs != None else ([src] if src != None else []),
        kernel_src = kernel_src,
        kernel_module = kernel_module,
        target = target,
        deps = deps,
        kernels = kernels,
        bzl = out,
        update_command = update,
        defs = defs,
        **kwargs
    )
    _triton_autotune_update(
        name = name + ".update",
        generated = ":" + name + "_generated",
        bzl = out,
        **kwargs
    )
    diff_test(
        name = name + "_test",
        file1 = ":" + name + "_generated",
        file2 = out,
        failure_message = "{} is stale (the kernel's @triton.autotune configs or triton changed): run {}".format(out, update),
        **kwargs
    )
