"""Providers of rules_triton."""

TritonToolchainInfo = provider(
    doc = "What the Triton compile and link actions run: an interpreter that has triton, the " +
          "triton_aot tool sources and C templates, and the cuda.h headers for the C compile.",
    fields = {
        "interpreter": "File of the interpreter, or None when it lives outside the build",
        "interpreter_path": "str: the interpreter's absolute path when `interpreter` is None",
        "tool_inputs": "depset[File]: triton_aot sources, templates, python deps, interpreter files",
        "stage_tool_inputs": "dict: stage name (compile, emit_c, torch, tuning) -> depset[File]: " +
                             "the same with only that stage's modules and the stages it imports " +
                             "(the `tools` of the actions running that stage's tools)",
        "python_path": "list[str]: PYTHONPATH entries (execroot-relative) for the tool and its deps",
        "cuda_headers": "CcInfo providing cuda.h (forwarded by //toolchains:current_cuda_headers)",
        "fingerprint": "File or None: the environment fingerprint (python, triton files, absl-py, " +
                       "ptxas); an input of every Triton action so cache keys follow the compiler",
    },
)

TritonKernelInfo = provider(
    doc = "What a triton_kernel_library built, for rules that wrap it.",
    fields = {
        "name": "str: the C API prefix (dispatcher name)",
        "header": "File: the public dispatcher header",
        "description": "File: the library description (JSON, triton_aot/contract/library.py): " +
                       "C functions, parameters, algos, variants, tuning settings",
        "metadata": "depset[File]: per-variant metadata JSON",
        "cubins": "depset[File]: per-variant cubins",
    },
)

TritonTorchLibraryInfo = provider(
    doc = "What a triton_torch_library built: torch ops over kernel libraries.",
    fields = {
        "namespace": "str: the ops' namespace (torch.ops.NAMESPACE.OP)",
        "ops": "list[str]: the op names",
        "shared_library": "File: lib<name>.so, the ops' registration and the kernel libraries",
        "module": "File: <name>.py, which loads the shared library and registers the fake implementations",
    },
)
