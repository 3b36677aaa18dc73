"""Where a rule's kernel module comes from: its file, its inputs and its sys.path roots.

`triton_kernel_library` and `triton_autotune_algos` import the same kernel files, so they share
these checks and roots: a file that imports in one must import in the other.

`deps` are ordinary py_library targets, of any kind a monorepo has: in the main repository or in
another module, with or without `imports`, with generated sources, with `data` files read at
import, and the packages of a rules_python pip hub. Their import roots are derived the way
rules_python's own launcher derives them for a py_binary (every repository root, plus each
`PyInfo.imports` entry), but as execroot paths: the main repository's files sit at the execroot
itself, another repository's under `external/<repo>`, and generated files under the output
root (`bazel-out/<config>/bin`) first. Only roots that hold a Python file are passed, because a
sandbox has no folder for a root with no inputs under it.
"""

load("@rules_python//python:defs.bzl", "PyInfo")

def kernel_file_error(ctx, defines):
    """Why `srcs`, `kernel_src` and `kernel_module` name no one kernel file or module, or None.

    Args:
      ctx: the rule context (attributes `srcs`, `kernel_src`, `kernel_module`).
      defines: what the file must define, for messages ("'matmul_kernel'").

    Returns:
      struct(attr, message) (the message without the label), or None.
    """
    if ctx.attr.kernel_module:
        # An installed module (or one from `deps`): no file of this package defines the kernel.
        if ctx.files.srcs or ctx.file.kernel_src:
            return struct(attr = "kernel_module", message = "given together with {}; the kernel comes either from a file (srcs) or from a module (kernel_module), remove one".format(
                "srcs" if ctx.files.srcs else "kernel_src",
            ))
        for part in ctx.attr.kernel_module.split("."):
            if not part or not (part[0].isalpha() or part[0] == "_") or not part.replace("_", "a").isalnum():
                return struct(attr = "kernel_module", message = "'{}' is not a dotted module name; write it as in an import statement, e.g. \"liger_kernel.ops.rms_norm\"".format(ctx.attr.kernel_module))
        return None
    if ctx.file.kernel_src:
        return None
    py = [f for f in ctx.files.srcs if f.extension == "py"]
    if not py:
        return struct(attr = "srcs", message = "no .py file; list the file that defines {} in srcs, or name an installed module with kernel_module = \"pkg.module\"".format(defines))
    if len(py) != 1:
        return struct(attr = "kernel_src", message = "srcs has {} .py files; set kernel_src to the one that defines {}".format(len(py), defines))
    return None

def kernel_file(ctx, defines):
    """The .py File that defines the kernels, or None for `kernel_module`; fails on bad input.

    Args:
      ctx: the rule context (attributes `srcs`, `kernel_src`, `kernel_module`).
      defines: what the file must define, for messages ("'matmul_kernel'").

    Returns:
      A File, or None when the kernel comes from an installed module.
    """
    error = kernel_file_error(ctx, defines)
    if error:
        fail("{}: attribute '{}': {}".format(ctx.label, error.attr, error.message))
    if ctx.attr.kernel_module:
        return None
    if ctx.file.kernel_src:
        return ctx.file.kernel_src
    return [f for f in ctx.files.srcs if f.extension == "py"][0]

def _repo_exec_root(ctx, repo):
    """The execroot-relative folder of repository `repo` (a runfiles name: `_main`, `mod~`)."""
    if repo == ctx.workspace_name or repo == "":
        return ""
    return "external/" + repo

def _join(*parts):
    return "/".join([p for p in parts if p and p != "."]) or "."

def kernel_source(ctx, defines):
    """The kernel's file, the inputs its import reads and its sys.path roots.

    Args:
      ctx: the rule context (attributes `srcs`, `kernel_src`, `kernel_module`, `deps`).
      defines: what the kernel file must define, for messages.

    Returns:
      struct(file: File or None, inputs: depset of Files (sources, and the deps' sources and
      runfiles: `data` files included), import_roots: list of execroot-relative folders).
    """
    file = kernel_file(ctx, defines)
    deps = ctx.attr.deps
    inputs = depset(
        ctx.files.srcs,
        transitive = [d[PyInfo].transitive_sources for d in deps] +
                     [d[DefaultInfo].default_runfiles.files for d in deps],
    )

    # Every folder (and its ancestors) that holds a Python file of the srcs or deps, and for each
    # repository the output roots (source tree, bin folder) its Python files live in.
    py_dirs = {}
    repo_roots = {}
    py_files = ctx.files.srcs + [f for d in deps for f in d[PyInfo].transitive_sources.to_list()]
    seen_dirs = {}
    for f in py_files:
        repo = (f.owner.workspace_name if f.owner else "") or ctx.workspace_name
        repo_roots.setdefault(repo, {})[f.root.path] = True
        if f.dirname in seen_dirs:
            continue
        seen_dirs[f.dirname] = True
        d = f.dirname
        for _ in range(64):  # a path's depth; Starlark has no while
            if d in py_dirs:
                break
            py_dirs[d] = True
            if "/" not in d:
                break
            d = d.rpartition("/")[0]

    roots = {}

    def add(output_root, folder):
        path = _join(output_root, folder)
        if path == "." or path in py_dirs:
            roots[path] = True

    # The main repository's root and its bin folder, as a py_binary of the main repository sees
    # them (`from kernels.helpers import x`); then each repository that a Python file comes
    # from (rules_python puts every repository root on sys.path).
    add("", "")
    add(ctx.bin_dir.path, "")
    for repo, output_roots in repo_roots.items():
        for output_root in output_roots:
            add(output_root, _repo_exec_root(ctx, repo))

    # PyInfo.imports are runfiles-relative ("<repo>/<folder>", `_main/...` for this one).
    for dep in deps:
        for imp in dep[PyInfo].imports.to_list():
            repo, _, folder = imp.partition("/")
            for output_root in repo_roots.get(repo, {}).keys() + [""]:
                add(output_root, _join(_repo_exec_root(ctx, repo), folder))
    return struct(file = file, inputs = inputs, import_roots = roots.keys())
