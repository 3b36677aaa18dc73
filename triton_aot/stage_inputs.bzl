"""`stage_inputs`: the files each stage's library puts into an action (for //triton_aot:stages_test)."""

def _stage_inputs_impl(ctx):
    # The same files the triton_toolchain takes from a stage (its default runfiles: the stage's
    # sources, the stages it depends on, their data).
    lines = []
    for stage in ctx.attr.stages:
        for f in stage[DefaultInfo].default_runfiles.files.to_list():
            lines.append("{} {}".format(stage.label.name, f.short_path))
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, "\n".join(lines) + "\n")
    return [DefaultInfo(files = depset([out]))]

stage_inputs = rule(
    implementation = _stage_inputs_impl,
    doc = "Writes `STAGE SHORT_PATH` for every file each stage's library brings into an action.",
    attrs = {
        "stages": attr.label_list(doc = "The stages' py_library targets."),
    },
)
