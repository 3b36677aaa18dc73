"""Where a rule's kernel module comes from: its sys.path roots, shared by every rule that imports it.

`triton_kernel_library` and `triton_autotune_algos` import the same kernel files, so they must
give them the same import roots, or a file would import in one and not in the other.
"""

load("@rules_python//python:defs.bzl", "PyInfo")

def import_roots(ctx):
    """sys.path roots for the kernel module and its py deps (execroot-relative).

    Args:
      ctx: the rule context (attributes `srcs` and `deps`).

    Returns:
      list of execroot-relative folders.
    """
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
