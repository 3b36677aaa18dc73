"""`triton_worker_off`: a library's outputs built with `--@rules_triton//:persistent_worker=false`
(one-shot compile processes), next to the same library built with the command line's setting."""

def _worker_off_transition_impl(_settings, _attr):
    return {"//:persistent_worker": False}

_worker_off_transition = transition(
    implementation = _worker_off_transition_impl,
    inputs = [],
    outputs = ["//:persistent_worker"],
)

# What a library's compile and link actions write (the header is DefaultInfo's).
_GROUPS = ["metadata", "cubin", "ptx", "c_sources"]

def _library_outputs(lib):
    groups = lib[OutputGroupInfo]
    return depset(transitive = [getattr(groups, g) for g in _GROUPS if hasattr(groups, g)])

def _triton_outputs_impl(ctx):
    lib = ctx.attr.lib[0] if type(ctx.attr.lib) == "list" else ctx.attr.lib

    # Each under a folder named after this target: a file's runfiles path leaves out its
    # configuration, so the library's outputs built with the worker on and off would otherwise
    # be one runfile, and a test would compare one build with itself.
    files = []
    for f in _library_outputs(lib).to_list():
        link = ctx.actions.declare_file(ctx.label.name + "/" + f.basename)
        ctx.actions.symlink(output = link, target_file = f)
        files.append(link)
    return [DefaultInfo(files = depset(files))]

triton_outputs = rule(
    implementation = _triton_outputs_impl,
    attrs = {"lib": attr.label(mandatory = True)},
    doc = "The compile and link outputs of the `lib` library (records, images, C, header).",
)

triton_worker_off = rule(
    implementation = _triton_outputs_impl,
    attrs = {
        "lib": attr.label(mandatory = True, cfg = _worker_off_transition),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    doc = "The compile and link outputs of the `lib` library, built with the persistent worker off.",
)
