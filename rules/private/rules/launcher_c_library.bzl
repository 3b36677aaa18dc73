"""`triton_launcher_c_library`: a captured launcher's whole call as one C function over DLPack.

From the op record of a `triton_launcher_library` (`OP` of NAME.launcher.bzl, the record its torch
op is made from), the `TritonLauncherC` action (`python -m triton_aot.c_entry.entry`) writes
`NAME.h` and `NAME.c`: `FUNCTION(stream, tensors..., floats..., outputs..., workspace,
workspace_bytes)` and `FUNCTION_workspace_size(tensors..., &bytes)`, compiled with the kernel
libraries into a `cc_library` (docs/c_api.md, "A launcher's C entry").
"""

load("@rules_cc//cc:cc_library.bzl", "cc_library")
load("//rules/private:providers.bzl", "TritonKernelInfo")
load("//rules/private:toolchain_type.bzl", "find_triton_exec_toolchain", "triton_exec_groups")
load("//rules/private/actions:c_entry_actions.bzl", "generate_launcher_c_entry")

def _include_path(header):
    # "pkg/add.h" for the main repository, without "../repo/" for another one.
    path = header.short_path
    if path.startswith("../"):
        path = path.split("/", 2)[2]
    return path

def _triton_launcher_c_sources_impl(ctx):
    toolchain = find_triton_exec_toolchain(ctx)
    op = ctx.actions.declare_file(ctx.attr.entry_name + ".op.json")
    ctx.actions.write(op, ctx.attr.op)
    libraries = []
    for name, lib in zip(ctx.attr.lib_names, ctx.attr.libs):
        info = lib[TritonKernelInfo]
        libraries.append((name, info.description, _include_path(info.header)))
    out_c = ctx.actions.declare_file(ctx.attr.entry_name + ".c")
    out_h = ctx.actions.declare_file(ctx.attr.entry_name + ".h")
    generate_launcher_c_entry(
        ctx,
        toolchain,
        op = op,
        function = ctx.attr.function,
        libraries = libraries,
        out_c = out_c,
        out_h = out_h,
    )
    return [
        DefaultInfo(files = depset([out_c, out_h])),
        OutputGroupInfo(c = depset([out_c]), h = depset([out_h])),
    ]

_triton_launcher_c_sources = rule(
    implementation = _triton_launcher_c_sources_impl,
    doc = "Generates a launcher's C entry (NAME.c, NAME.h) from its op record.",
    attrs = {
        "op": attr.string(mandatory = True, doc = "The op record, JSON."),
        "function": attr.string(mandatory = True, doc = "The C entry's name."),
        "entry_name": attr.string(mandatory = True, doc = "The basename of the C file and header."),
        "libs": attr.label_list(providers = [TritonKernelInfo], doc = "The kernel libraries, in lib_names' order."),
        "lib_names": attr.string_list(doc = "Each library's name in the record."),
    },
    exec_groups = triton_exec_groups(),
)

def triton_launcher_c_library(name, op, function = None, dlpack = None, deps = [], **kwargs):
    """The launcher's whole call as one C function over DLPack tensors: a `cc_library`.

        load(":rms_norm.launcher.bzl", RMS_NORM_OP = "OP")
        triton_launcher_c_library(name = "rms_norm_c", op = RMS_NORM_OP, function = "rms_norm_dl")
        # #include "pkg/rms_norm_c.h"
        # CUresult rms_norm_dl(CUstream stream, const DLTensor *X, const DLTensor *W, float eps,
        #                      float offset, const DLTensor *Y_ptr, const DLTensor *RSTD_ptr,
        #                      void *workspace, size_t workspace_bytes);
        # CUresult rms_norm_dl_workspace_size(const DLTensor *X, const DLTensor *W, size_t *bytes);

    The function checks every tensor (CUDA device, dtype, rank, the record's static sizes, fixed
    strides and guards, contiguity, the outputs' shapes), reads the dynamic sizes off the tensors,
    binds every kernel argument, chooses the algo by the sizes as the torch op does, and runs
    every launch in order on the stream, intermediates carved from the caller's workspace; a
    refusal is `CUDA_ERROR_INVALID_VALUE` with nothing launched. The header documents the
    inputs, the outputs' shapes and the workspace. A launcher whose record holds torch work the
    C cannot run (anything beyond allocating, filling with a constant and viewing tensors) gets no
    C entry: building this target fails in one line saying so. The tensors the launcher made with
    `torch.zeros` / `torch.full` are memset on the stream before the first launch.

    Args:
      name: the `cc_library`; its header is `NAME.h` (`#include "pkg/NAME.h"`).
      op: `OP` of the committed NAME.launcher.bzl (its kernel libraries in the same package).
      function: the C function's name (default: `name`); it must differ from the kernel
        libraries' C API names (a library `rms_norm` exports `rms_norm()` already).
      dlpack: the `cc_library` with `dlpack/dlpack.h` (default `@rules_triton_dlpack//:dlpack`,
        the system's header from libdlpack-dev, or `RULES_TRITON_DLPACK_INCLUDE`).
      deps: further `cc_library` dependencies.
      **kwargs: common attributes (`visibility`, `tags`, `testonly`, ...).
    """
    parts = op["steps"] if "steps" in op else [op]
    lib_names = []
    for part in parts:
        if type(part) == "dict" and type(part.get("lib")) == "string" and part["lib"] not in lib_names:
            lib_names.append(part["lib"])
    libs = [native.package_relative_label(":" + lib) for lib in lib_names]
    _triton_launcher_c_sources(
        name = name + "_sources",
        op = json.encode(op),
        function = function or name,
        entry_name = name,
        libs = libs,
        lib_names = lib_names,
        visibility = ["//visibility:private"],
        tags = kwargs.get("tags"),
        testonly = kwargs.get("testonly"),
    )
    for group in ("c", "h"):
        native.filegroup(
            name = "{}_{}_file".format(name, group),
            srcs = [":" + name + "_sources"],
            output_group = group,
            visibility = ["//visibility:private"],
            tags = kwargs.get("tags"),
            testonly = kwargs.get("testonly"),
        )
    cc_library(
        name = name,
        srcs = [":{}_c_file".format(name)],
        hdrs = [":{}_h_file".format(name)],
        copts = ["-std=gnu11"],
        # Always the static archive, as the runtime's: a fill calls the runtime's hidden
        # trt_driver_get, which a shared object of this library alone could not resolve.
        linkstatic = True,
        # the runtime: a record with fills (torch.zeros / torch.full) memsets through its
        # driver table (trt_runtime.h), already linked through the kernel libraries
        deps = libs + [Label("//runtime"), dlpack or Label("@rules_triton_dlpack//:dlpack")] + deps,
        **kwargs
    )
