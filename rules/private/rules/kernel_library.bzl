"""`triton_kernel_library`: Triton kernels compiled ahead of time into a C library (CcInfo).

The rule: attributes, their checks (validate.bzl) and the wiring of the actions (rules/private/actions/, one file per action).
"""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@rules_cc//cc:find_cc_toolchain.bzl", "use_cc_toolchain")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("@rules_python//python:defs.bzl", "PyInfo")
load("//rules/private:kernel_source.bzl", "kernel_source")
load("//rules/private:providers.bzl", "TritonKernelInfo")
load("//rules/private:toolchain_type.bzl", "find_triton_exec_toolchain", "triton_exec_groups")
load("//rules/private:validate.bzl", "check_algos", "check_c_name", "check_launch_args", "check_signature", "check_specialization_algos", "check_specializations", "check_targets", "ptx_fallback_arch")
load("//rules/private/actions:c_library.bzl", "compile_c_library")
load("//rules/private/actions:compile.bzl", "IR_GROUP_NAMES", "compile_variant")
load("//rules/private/actions:kernel_import.bzl", "check_kernel_import")
load("//rules/private/actions:link.bzl", "link_library")
load("//rules/private/actions:sass.bzl", "disassemble")
load("//rules/private/actions:shared_library.bzl", "link_shared_library")
load("//rules/private/actions:tuning_hints.bzl", "derive_tuning_hints")

def _targets(ctx):
    if ctx.attr.targets:
        return ctx.attr.targets, "targets"
    return ctx.attr._default_targets[BuildSettingInfo].value, "--@rules_triton//:targets"

def _tuning(ctx, backend, num_algos, c_name):
    """The tuned dispatch's settings, or None without `tuning_key`."""
    if not ctx.attr.tuning_key:
        if ctx.file.tuning:
            fail("{}: attribute 'tuning': a table needs tuning_key, the integer arguments it is keyed by (e.g. tuning_key = [\"M\", \"N\", \"K\"])".format(ctx.label))
        return None
    if not backend["tuned_dispatch"]:
        fail("{}: attribute 'tuning_key': the tuned dispatch (NAME_auto) is CUDA only for now; drop tuning_key from this hip library".format(ctx.label))
    if ctx.attr.tuning_default_algo < 0 or ctx.attr.tuning_default_algo >= max(num_algos, 1):
        fail("{}: attribute 'tuning_default_algo': {} is not an algo index (0..{})".format(ctx.label, ctx.attr.tuning_default_algo, max(num_algos, 1) - 1))
    return struct(
        table = ctx.file.tuning,
        key = ctx.attr.tuning_key,
        default_algo = ctx.attr.tuning_default_algo,
        stale_ok = ctx.attr._tuning_stale_ok[BuildSettingInfo].value,
        # where the table lives in its workspace (the default when the rule names none yet)
        place = ctx.file.tuning.short_path if ctx.file.tuning else (ctx.label.package + "/" if ctx.label.package else "") + c_name + ".tuning.json",
    )

def _triton_kernel_library_impl(ctx):
    label = ctx.label
    toolchain = find_triton_exec_toolchain(ctx)
    c_name = check_c_name(label, "c_name", ctx.attr.c_name or ctx.label.name)
    check_c_name(label, "kernel", ctx.attr.kernel)
    check_signature(label, ctx.attr.signature)
    targets, targets_attr = _targets(ctx)

    # Only the spelling of each target (its backend and arch name) here: what the targets table
    # says of them (which triton compiles which arch, which have TMA for the signature's tensor
    # descriptors) the compile tool checks, once per library in its import check.
    targets = check_targets(label, targets_attr, targets)
    specializations = check_specializations(label, ctx.attr.specializations)
    launch_args = check_launch_args(label, ctx.attr.launch_args)
    algos = check_algos(label, ctx.attr.algos, {
        "num_warps": ctx.attr.num_warps,
        "num_stages": ctx.attr.num_stages,
        "grid": ctx.attr.grid,
        "targets": targets,
        "signature": ctx.attr.signature,
    })

    spec_algos = {}
    if ctx.attr._specialization_algos[BuildSettingInfo].value:
        spec_algos = check_specialization_algos(label, ctx.attr.specialization_algos, specializations, len(algos))

    source = kernel_source(ctx, "'{}'".format(ctx.attr.kernel))
    worker = ctx.attr._persistent_worker[BuildSettingInfo].value
    backend = targets[0].row
    ptx_arch = ptx_fallback_arch(label, targets) if ctx.attr.embed_ptx else None

    variants = []
    for algo_index, algo in enumerate(algos):
        for spec_index, hints in enumerate(specializations):
            for target in targets:
                if algo["targets"] and target.name not in algo["targets"]:
                    continue  # the algo is restricted to other targets
                if hints in spec_algos and algo_index not in spec_algos[hints]:
                    continue  # never launched through this pattern (the table's choices)
                variants.append(struct(
                    symbol = "{}_a{}_s{}_{}".format(c_name, algo_index, spec_index, backend["symbol_arch"].format(target.arch)),
                    algo = algo,
                    algo_index = algo_index,
                    spec_index = spec_index,
                    hints = hints,
                    target = target,
                    embed_ptx = target.arch == ptx_arch,
                    launch_args = launch_args,
                ))

    # A kernel file that does not import, a signature or a target that is wrong, fails once, in
    # one action, not once per variant; a library of one variant needs no separate import (its
    # compile is that one action, and checks the same).
    kernel_params = None
    if len(variants) > 1:
        kernel_params = check_kernel_import(ctx, toolchain, source = source, targets = [t.name for t in targets], algo = variants[0].algo, worker = worker)

    metadata, sass_files = [], []
    ir = {group: [] for group in IR_GROUP_NAMES}
    for variant in variants:
        outputs = compile_variant(
            ctx,
            toolchain,
            source = source,
            kernel_params = kernel_params,
            variant = variant,
            worker = worker,
        )
        metadata.append(outputs["json"])
        for group, files in ir.items():
            if group in outputs:
                files.append(outputs[group])
        if "out_sass" in backend["outputs"]:
            sass_files.append(disassemble(ctx, toolchain, symbol = variant.symbol, cubin = outputs["cubin"]))

    # The link tool embeds the images the records name: cubins (or hsacos) always, PTX for the
    # fallback. A HIP library is compiled with the HIP runtime.
    tuning = _tuning(ctx, backend, len(algos), c_name)
    library = link_library(ctx, toolchain, c_name = c_name, metadata = metadata, images = ir["cubin"] + ir["ptx"] + ir["hsaco"], tuning = tuning)
    runtime = {"cuda": ctx.attr._runtime, "hip": ctx.attr._hip_runtime}[targets[0].backend]
    compiled = compile_c_library(ctx, c_file = library.c, header = library.h, runtime = runtime[CcInfo])
    cc_info = compiled.cc_info
    groups = {group: depset(files) for group, files in ir.items()}
    groups["sass"] = depset(sass_files)
    groups["metadata"] = depset(metadata)
    groups["c_sources"] = depset([library.c, library.h])
    groups["library_description"] = depset([library.description])

    # What tools/tune packs for the GPU machine: the library as a shared object, its records.
    # (The cubins let the GPU test tests/gpu_tune name the variant each launch ran.)
    tuning_files = [link_shared_library(ctx, compiled = compiled, runtime = runtime[CcInfo])] + metadata + ir["cubin"]
    tuning_files += [f for f in (ctx.file.tuning, ctx.file.tuning_inputs) if f]
    if tuning:
        # What tools/tune needs to know about the library (its tuning settings among the rest),
        # so that it never guesses.
        tuning_files.append(library.description)
        if ctx.file.tuning_inputs:
            hints_bzl = derive_tuning_hints(ctx, toolchain, c_name = c_name, record = metadata[0], inputs = ctx.file.tuning_inputs, tuning = tuning)
            tuning_files.append(hints_bzl)

            # Alone, for the test that the committed copy is current (it needs one variant).
            groups["tuning_hints"] = depset([hints_bzl])
    groups["tuning"] = depset(tuning_files)
    return [
        DefaultInfo(files = depset([library.h])),
        cc_info,
        OutputGroupInfo(**groups),
        TritonKernelInfo(name = c_name, header = library.h, description = library.description, metadata = groups["metadata"], cubins = groups[backend["image"]]),
    ]

triton_kernel_library = rule(
    implementation = _triton_kernel_library_impl,
    doc = """Compiles a Triton kernel ahead of time into a C library.

One TritonCompile action runs per (specialization x algo x target); one TritonLink action
writes the library's one C file (every variant's cubin and launcher, and the dispatcher); that C
is compiled with the C++ toolchain and linked with the rule set's C runtime. The result is a `CcInfo`:
put the target in the `deps` of a `cc_binary`, `cc_test` or `cc_library` and
`#include "<package>/<name>.h"`. No GPU, CUDA toolkit or driver is needed to build or link;
the driver is opened at run time.

C API (NAME = `c_name`, default the target name), compatible with Triton's link.py:
`CUresult NAME(CUstream, args..., int algo_id)`, `NAME_default(CUstream, args...)`,
`load_NAME()`, `unload_NAME()`, `NAME_get_num_algos()`, `NAME_get_algo_info(algo_id)`.
With `tuning_key`, also `CUresult NAME_auto(CUstream, args...)`, which needs no algo_id: it
launches the algo the `tuning` table chose for the nearest tuned shape on the current device
(docs/design/tuning.md), and `int NAME_auto_algo(int sm, int64_t key...)`, which says
which algo that is.

Output groups: `ptx`, `ttir`, `ttgir`, `llir`, `cubin`, `sass`, `metadata`, `c_sources`,
`tuning` (a shared object of the library with the runtime, the records and the table: what
`tools/tune` packs for the GPU machine), `tuning_hints` (just its NAME.tuning_hints.bzl); for
`hip:gfx...` targets `ttir`, `ttgir`, `llir`, `amdgcn`, `hsaco` (the others are empty).

HIP (`targets = ["hip:gfx90a", "hip:gfx942"]`): the same API with HIP's types,
`hipError_t NAME(hipStream_t, args..., int algo_id)` (pointers are `hipDeviceptr_t`), over
libamdhip64 opened at run time. A library is CUDA or HIP, not both.

The Triton actions run in the exec group `triton` (its own execution platform, resolved with the
Triton toolchain): `exec_properties = {"triton.KEY": "VALUE"}` reaches only them, and a Triton
toolchain registered with `exec_compatible_with` routes them to matching execution platforms.
""",
    attrs = {
        "srcs": attr.label_list(
            allow_files = [".py"],
            doc = "Python files; one of them defines the @triton.jit kernel. Any file name works " +
                  "(`01-vector-add.py` is imported as module `_01_vector_add`).",
        ),
        "kernel_module": attr.string(
            doc = "Instead of `srcs`: the installed module that defines the kernel, as in an " +
                  "import statement (`\"liger_kernel.ops.rms_norm\"`). It is imported unchanged " +
                  "from the toolchain's Python environment or from `deps`.",
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
literal for a constexpr fixed for all algos (`64`, `True`, `tl.float16`, `'leaky_relu'`), the
parameter's own name for a constexpr whose value each algo sets, `None` for an optional
argument (as in the JIT it becomes the constant None and is no parameter of the C API), or a
host tensor descriptor in Triton's spelling, `tensordesc<fp16[128, 64]>` (rank 1-5,
power-of-two block sizes; cuda:90 and newer targets only): in the C API it becomes `NAME_base,
NAME_shape0.., NAME_stride0..` (base pointer, then shape and strides in elements); its block
sizes may be `{CONSTEXPR}` placeholders filled in per algo (`tensordesc<fp16[{BLOCK_M},
{BLOCK_K}]>`). Upstream signature strings work as-is. The entries may stop early: the constexprs
after the last one take their algo value, their `@triton.heuristics` value or their Python
default, and an argument whose default is None is None.""",
        ),
        "specialization_algos": attr.string_list_dict(
            doc = """Per specialization (hint pattern, as in `specializations`), the algos
(indices, as strings) compiled for it; a pattern not listed gets every algo, and the generic
variant `""` always has every algo. A call launches the first variant (most hints first) whose
hints hold and that has its algo, at worst the generic one, so `NAME(..., algo_id)` works for
every algo. For tuned libraries: `SPECIALIZATION_ALGOS` of `NAME.tuning_hints.bzl`, the algos
`NAME_auto` can choose through each pattern by the tuning table (tools/tune writes it). The
flag `--@rules_triton//:specialization_algos=false` ignores it.""",
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
                  "`launch_args`, `cdiv(a, b)`, `min(a, b)`, `max(a, b)`, `NUM_SMS` (the current device's " +
                  "multiprocessor count), `+ - * / %` and `{CONSTEXPR}` placeholders. E.g. `\"cdiv(n, {BLOCK}), 1, 1\"`.",
        ),
        "launch_args": attr.string_list(
            doc = """Integers the grid uses that the kernel does not take, `"name: type"` (i8..i64,
u8..u64), e.g. `["n_rows: i32"]`. They become parameters of the C API after the kernel's
arguments (before `algo_id`) and are never passed to the kernel.""",
        ),
        "num_warps": attr.int(default = 4, doc = "Default num_warps for algos that do not set it."),
        "num_stages": attr.int(default = 3, doc = "Default num_stages for algos that do not set it."),
        "targets": attr.string_list(
            doc = "GPU targets, e.g. [\"cuda:80\", \"cuda:90\"] or [\"hip:gfx90a\", \"hip:gfx942\"] (one backend per library). Default: the `--@rules_triton//:targets` flag.",
        ),
        "embed_ptx": attr.bool(
            default = False,
            doc = "Also embed the PTX of the lowest target below cuda:90, for GPUs no cubin fits: the driver JIT-compiles it for any later GPU (Triton writes the PTX of sm_90 and newer arch-specific, for their own SM only). CUDA only; needs a target below cuda:90.",
        ),
        "tuning_key": attr.string_list(
            doc = """Integer arguments of the C API that choose the algo, e.g. `["M", "N", "K"]`
(Triton's autotune `key`). Generates `NAME_auto(stream, args...)`: the algo the `tuning` table
chose for the tuned point nearest the call's key values (L1 distance over log2 of each key),
for the current device's SM; `tuning_default_algo` when the table has no points for that SM or
there is no table. CUDA only.""",
        ),
        "tuning": attr.label(
            allow_single_file = [".json"],
            doc = """The library's tuning table (format `rules_triton.tuning.v1`, e.g.
`"matmul.tuning.json"` next to the BUILD file), written by `tools/tune` + `python3 -m
triton_aot.tuning.tune` on the GPU machine, or seeded from Triton's autotune cache with `python3 -m
triton_aot.tuning.seed seed`. The build fails, naming the retune command, when the library's algos
no longer match the ones the table was tuned with.""",
        ),
        "tuning_inputs": attr.label(
            allow_single_file = [".py"],
            doc = """The inputs of the tuning command (`python3 -m triton_aot.tuning.tune`, on the GPU
machine): a Python file defining `KEY` (the `tuning_key` names), `SHAPES` (the key values to
tune), `DTYPES` (library name -> torch dtype name) and `make_args(torch, dtype, **key)`, which
returns the C API's arguments after the stream (tensors for pointers); optionally
`check(torch, dtype, args, **key)` -> bool. See examples/kernels/matmul_tuning.py.""",
        ),
        "tuning_default_algo": attr.int(
            default = 0,
            doc = "The algo `NAME_auto` launches on a device or library the table does not cover.",
        ),
        "copts": attr.string_list(doc = "Extra C compiler flags for the generated C."),
        "alwayslink": attr.bool(default = False, doc = "As in cc_library."),
        "_default_targets": attr.label(default = Label("//:targets")),
        "_persistent_worker": attr.label(default = Label("//:persistent_worker")),
        "_tuning_stale_ok": attr.label(default = Label("//:tuning_stale_ok")),
        "_specialization_algos": attr.label(default = Label("//:specialization_algos")),
        "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
        # The C runtime every library's C calls into (compiled once, not per library).
        "_runtime": attr.label(default = Label("//runtime"), providers = [CcInfo]),
        "_hip_runtime": attr.label(default = Label("//runtime:hip"), providers = [CcInfo]),
    },
    toolchains = use_cc_toolchain(),
    # The Triton actions run in the `triton` exec group (exec_properties "triton.KEY").
    exec_groups = triton_exec_groups(),
    fragments = ["cpp"],
    provides = [CcInfo, TritonKernelInfo],
)
