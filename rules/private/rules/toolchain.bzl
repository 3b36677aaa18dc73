"""The `triton_toolchain` rule (its type is in toolchain_type.bzl)."""

load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("@rules_python//python:defs.bzl", "PyInfo", "PyRuntimeInfo")
load("//rules/private:providers.bzl", "TritonToolchainInfo")

def _import_root(package_init):
    # triton_aot/__init__.py lives at <root>/triton_aot; <root> goes on PYTHONPATH.
    parent = package_init.dirname
    if parent == "triton_aot":
        return "."
    if not parent.endswith("/triton_aot"):
        fail("triton_toolchain: 'tool' must contain triton_aot/__init__.py, got {}".format(package_init.path))
    return parent[:-len("/triton_aot")]

def _python_runtime(ctx, python):
    # A py_runtime itself, or rules_python's current_py_toolchain (the Python toolchain resolved
    # for the exec platform: a `python.toolchain` of the user's MODULE.bazel).
    if PyRuntimeInfo in python:
        return python[PyRuntimeInfo]
    runtime = getattr(python[platform_common.ToolchainInfo], "py3_runtime", None)
    if runtime == None:
        fail("{}: attribute 'python': {} resolves to a Python toolchain without a py3_runtime; name a py_runtime, or @rules_python//python:current_py_toolchain with a Python 3 toolchain registered".format(ctx.label, python.label))
    return runtime

def _check_cuda_headers(ctx, target):
    # Fail here, naming the attribute, rather than at the first C compile of a kernel library.
    # (a cuda.h target has a handful of headers, so listing them is cheap)
    if not [h for h in target[CcInfo].compilation_context.headers.to_list() if h.basename == "cuda.h"]:
        fail(("{}: attribute 'cuda_headers': {} provides no cuda.h; use the one in the triton " +
              "wheel: triton_cuda_headers(name = \"cuda_headers\", triton = \"@pypi//triton\") " +
              "(from @rules_triton//rules:defs.bzl), or @rules_triton_python//:cuda_headers").format(ctx.label, target.label))
    return target[CcInfo]

def _python_path_entry(ctx, import_root):
    # PyInfo.imports are runfiles paths ("<repo>/<dir>"); actions run in the exec root, where the
    # main repository's files sit at the top and the others under external/.
    if import_root.startswith(ctx.workspace_name + "/"):
        return import_root[len(ctx.workspace_name) + 1:]
    return "external/" + import_root

def _triton_toolchain_impl(ctx):
    runtime = _python_runtime(ctx, ctx.attr.python)
    shared = [ctx.attr.templates[DefaultInfo].files]
    python_path = []

    # A stage's py_library: its sources, the stages it depends on, their data (the templates).
    tool = ctx.attr.tool[DefaultInfo].default_runfiles.files
    stages = {stage.label.name: stage[DefaultInfo].default_runfiles.files for stage in ctx.attr.stages}
    init_files = [f for f in tool.to_list() if f.basename == "__init__.py" and f.dirname.endswith("triton_aot")]
    if len(init_files) != 1:
        fail("triton_toolchain: 'tool' must provide exactly one triton_aot/__init__.py")
    python_path.append(_import_root(init_files[0]))

    # Python deps (e.g. a rules_python pip hub's @pypi//triton and @pypi//absl_py).
    for dep in ctx.attr.python_deps:
        info = dep[PyInfo]
        shared.append(info.transitive_sources)
        shared.append(dep[DefaultInfo].default_runfiles.files)
        for imp in info.imports.to_list():  # a handful of import roots, not a build graph
            python_path.append(_python_path_entry(ctx, imp))
    interpreter = runtime.interpreter
    interpreter_path = runtime.interpreter_path
    if runtime.interpreter != None:
        shared.append(runtime.files)

    # Archive mode: the launcher is the interpreter; it and the archive are the only inputs the
    # executor needs besides the tools (python_launcher.sh says how it unpacks and runs).
    archive = ctx.file.python_archive
    launcher = ctx.file.python_launcher
    if (archive == None) != (launcher == None):
        fail("triton_toolchain: 'python_archive' and 'python_launcher' go together (both from " +
             "@rules_triton_python_archive, or neither for the local interpreter)")
    if archive != None:
        interpreter = launcher
        interpreter_path = None
        shared.append(depset([archive, launcher]))

    # In tool_inputs, which every Triton action takes as `tools`: the fingerprint is then in each
    # action's key and in the persistent worker's key (a worker that imported one triton is never
    # reused after the environment changed).
    direct = [ctx.file.fingerprint] if ctx.file.fingerprint else []
    return [
        platform_common.ToolchainInfo(
            triton = TritonToolchainInfo(
                interpreter = interpreter,
                interpreter_path = interpreter_path,
                tool_inputs = depset(direct, transitive = [tool] + shared),
                stage_tool_inputs = {
                    name: depset(direct, transitive = [files] + shared)
                    for name, files in stages.items()
                },
                python_path = python_path,
                cuda_headers = _check_cuda_headers(ctx, ctx.attr.cuda_headers),
                fingerprint = ctx.file.fingerprint,
            ),
        ),
    ]

triton_toolchain = rule(
    implementation = _triton_toolchain_impl,
    doc = """Declares how Triton kernels are compiled: which Python runs the triton_aot tools,
with which Python packages, and which cuda.h the generated C is compiled against.

Three ways to provide triton:
- `python` is a `py_runtime` whose interpreter already has triton 3.6.x and absl-py installed
  (what tools/setup prepares; `@rules_triton_python//:runtime`), `python_deps` empty;
- hub mode: `python` is a hermetic rules_python runtime (a `py_runtime`, or
  `@rules_python//python:current_py_toolchain` for the `python.toolchain` of your MODULE.bazel),
  `python_deps` are the pip hub's `@pypi//triton` and `@pypi//absl_py` and `cuda_headers` is a
  `triton_cuda_headers` of `@pypi//triton` (docs/toolchains.md, "A toolchain from your rules_python hub");
- archive mode: `python_archive` and `python_launcher` from `@rules_triton_python_archive`
  (`--@rules_triton//:python_mode=archive` selects them in the default toolchain): the whole
  environment is one archive input of every Triton action, for executors that do not have it.
""",
    attrs = {
        # python, python_deps and tool run in the build's actions: built for the exec platform,
        # so that a cross-platform or remote build gets the executor's interpreter and wheels.
        "python": attr.label(
            mandatory = True,
            cfg = "exec",
            providers = [[PyRuntimeInfo], [platform_common.ToolchainInfo]],
            doc = "The interpreter that runs the compile and link tools: a `py_runtime`, or " +
                  "`@rules_python//python:current_py_toolchain` (the Python toolchain resolved " +
                  "for the exec platform). Built for the exec platform.",
        ),
        "python_deps": attr.label_list(
            cfg = "exec",
            providers = [PyInfo],
            doc = "py_library targets put on PYTHONPATH (triton, absl-py from a pip hub). Built " +
                  "for the exec platform.",
        ),
        "tool": attr.label(
            default = Label("//triton_aot"),
            cfg = "exec",
            doc = "The triton_aot package, every stage (compile, link, torch-op and tuning " +
                  "tools). Built for the exec platform.",
        ),
        "stages": attr.label_list(
            default = [
                Label("//triton_aot/c_entry"),
                Label("//triton_aot/capture"),
                Label("//triton_aot/compile"),
                Label("//triton_aot/emit_c"),
                Label("//triton_aot/torch"),
                Label("//triton_aot/tuning"),
            ],
            cfg = "exec",
            doc = "The stages of `tool` whose tools the rules run, each a py_library named " +
                  "after its stage (docs/design.md, \"Stages\"): an action takes only its " +
                  "tool's stage and the stages it imports, so that editing another stage " +
                  "re-runs none of its actions. Built for the exec platform.",
        ),
        "templates": attr.label(
            default = Label("//templates"),
            doc = "The C templates the tools render.",
        ),
        "cuda_headers": attr.label(
            mandatory = True,
            providers = [CcInfo],
            doc = "A CcInfo target providing cuda.h, the one shipped in the triton package: " +
                  "`@rules_triton_python//:cuda_headers`, or a `triton_cuda_headers` of the pip " +
                  "hub's `@pypi//triton`.",
        ),
        "python_archive": attr.label(
            allow_single_file = [".tar.gz"],
            doc = "Archive mode: the packed environment (`@rules_triton_python_archive//:python_env.tar.gz`). " +
                  "Then `python` is not run; `python_launcher` unpacks this on the executor.",
        ),
        "python_launcher": attr.label(
            allow_single_file = True,
            doc = "Archive mode: the launcher generated for `python_archive` " +
                  "(`@rules_triton_python_archive//:launcher.sh`); the actions' executable.",
        ),
        "fingerprint": attr.label(
            allow_single_file = True,
            doc = "The environment fingerprint (`@rules_triton_python//:fingerprint`), an input " +
                  "of every Triton action: with an interpreter outside the build, the only thing " +
                  "that puts the compiler into the actions' cache keys. Optional when `python` " +
                  "and `python_deps` are themselves build inputs (a pip hub).",
        ),
    },
)
