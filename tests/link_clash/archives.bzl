"""`triton_archives`: the static archives of kernel libraries as a binary's link takes them, with
a manifest (archive path -> alwayslink), for a test that links them the way cc_binary does."""

load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")

def _triton_archives_impl(ctx):
    archives, manifest = [], {}
    for lib in ctx.attr.libs:
        for linker_input in lib[CcInfo].linking_context.linker_inputs.to_list():
            if linker_input.owner != lib.label:
                continue  # the runtime, linked once either way
            for library in linker_input.libraries:
                archive = library.pic_static_library or library.static_library
                if archive:
                    archives.append(archive)
                    manifest[archive.short_path] = library.alwayslink
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode(manifest))
    return [DefaultInfo(files = depset([out] + archives))]

triton_archives = rule(
    implementation = _triton_archives_impl,
    attrs = {"libs": attr.label_list(providers = [CcInfo])},
    doc = "The `libs`' own static archives and `<name>.json`: short path -> alwayslink.",
)
