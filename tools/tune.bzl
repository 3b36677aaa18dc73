"""`triton_tune_bundle`: `bazel run @rules_triton//tools:tune` packs a library's tuning bundle.

    bazel run @rules_triton//tools:tune --@rules_triton//tools:tune_library=//pkg:lib -- DIR

builds the library's `tuning` output group the way the tuning needs it (every algo in every
specialization, a stale table left out: the flags `//:specialization_algos=false` and
`//:tuning_stale_ok`, set by a transition) and runs tools/tune_bundle.py, which writes the bundle
and the tuning command into DIR and NAME.tuning_hints.bzl beside the library's table. Works from
any workspace that depends on rules_triton (docs/tuned_dispatch.md, "Retuning from your
workspace").
"""

def _tuning_transition_impl(_settings, _attr):
    return {
        str(Label("//:specialization_algos")): False,
        str(Label("//:tuning_stale_ok")): True,
    }

_tuning_transition = transition(
    implementation = _tuning_transition_impl,
    inputs = [],
    outputs = [
        str(Label("//:specialization_algos")),
        str(Label("//:tuning_stale_ok")),
    ],
)

def _rlocation(ctx, f):
    # short_path is "../<repo>/<path>" outside the main repository.
    return f.short_path[3:] if f.short_path.startswith("../") else ctx.workspace_name + "/" + f.short_path

def _triton_tune_bundle_impl(ctx):
    library = ctx.attr.library[0]
    label = str(library.label)
    lines = ["label\t" + label]
    groups = library[OutputGroupInfo] if OutputGroupInfo in library else None
    tuning = getattr(groups, "tuning", None) if groups else None
    if tuning == None or not any([f.basename.endswith(".library.json") for f in tuning.to_list()]):
        lines.append("error\t{} is not a triton_kernel_library with a tuning_key: name one with --@rules_triton//tools:tune_library=LABEL".format(label))
        tuning = depset()
    lines += ["tuning\t" + _rlocation(ctx, f) for f in tuning.to_list()]

    # The tuning stage's sources and those of the stages it imports (its runfiles), so that the
    # GPU machine runs the tuning command without a rules_triton checkout.
    tuner = [
        f
        for f in ctx.attr._tuner[DefaultInfo].default_runfiles.files.to_list()
        if f.extension == "py" and "triton_aot/" in f.short_path
    ]
    for f in tuner:
        i = f.short_path.find("triton_aot/")
        lines.append("tuner\t{}\t{}".format(_rlocation(ctx, f), f.short_path[i:]))
    manifest = ctx.actions.declare_file(ctx.label.name + ".files")
    ctx.actions.write(manifest, "\n".join(lines) + "\n")
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = launcher,
        content = "\n".join([
            "#!/bin/sh",
            "set -eu",
            'r="${RUNFILES_DIR:-$0.runfiles}"',
            'exec python3 -B -s "$r/{}" --runfiles "$r" --manifest "$r/{}" "$@"'.format(
                _rlocation(ctx, ctx.file._packer),
                _rlocation(ctx, manifest),
            ),
            "",
        ]),
        is_executable = True,
    )
    return [DefaultInfo(
        executable = launcher,
        runfiles = ctx.runfiles(files = [ctx.file._packer, manifest] + tuner, transitive_files = tuning),
    )]

triton_tune_bundle = rule(
    implementation = _triton_tune_bundle_impl,
    doc = "Packs `library`'s tuning bundle into the folder given to `bazel run` (tools/tune_bundle.py).",
    executable = True,
    attrs = {
        "library": attr.label(
            mandatory = True,
            cfg = _tuning_transition,
            doc = "The triton_kernel_library with a tuning_key (usually a label_flag).",
        ),
        "_packer": attr.label(default = Label(":tune_bundle.py"), allow_single_file = True),
        "_tuner": attr.label(default = Label("//triton_aot/tuning")),
    },
)
