"""Module extension `triton`: chooses the Python environment that has `triton`."""

load("//rules/private/repositories:dlpack_headers.bzl", "triton_dlpack_headers_repository")
load("//rules/private/repositories:python_env.bzl", "triton_python_archive_repository", "triton_python_repository")
load("//rules/private/repositories:torch_headers.bzl", "triton_torch_headers_repository")

_python_env = tag_class(
    doc = "Names the python3 that has triton (3.5 to 3.9) and absl-py. The root module's tag wins; " +
          "the RULES_TRITON_PYTHON environment variable overrides both.",
    attrs = {
        "interpreter": attr.string(
            doc = "Absolute path (or PATH name) of the interpreter.",
        ),
        "archive_packages": attr.string_list(
            doc = "Archive mode (`--@rules_triton//:python_mode=archive`): more distributions the " +
                  "kernels import, packed with their requirements next to triton and absl-py.",
        ),
        "archive_torch": attr.bool(
            default = True,
            doc = "Archive mode: pack torch (its requirements, numpy and the shared libraries " +
                  "it links) when the environment has it, as kernel files import it at module " +
                  "level. False keeps the archive small (about 160 MiB instead of 355 MiB with Debian's CPU torch) " +
                  "for kernels that do not import torch. Any module's False wins.",
        ),
    },
)

def _triton_impl(mctx):
    interpreter = ""
    packages = []
    torch = True

    # mctx.modules lists the root module first, so its choice wins over a dependency's.
    for module in mctx.modules:
        for tag in module.tags.python_env:
            if not interpreter:
                interpreter = tag.interpreter
            packages.extend([p for p in tag.archive_packages if p not in packages])
            if module.is_root:
                torch = torch and tag.archive_torch
    triton_python_repository(name = "rules_triton_python", interpreter = interpreter)

    # Fetched (packed) only when a build resolves the archive-mode toolchain.
    triton_python_archive_repository(
        name = "rules_triton_python_archive",
        interpreter = interpreter,
        packages = packages,
        torch = torch,
    )

    # libtorch's stable-ABI headers, for triton_torch_library (fetched only when one is built).
    triton_torch_headers_repository(name = "rules_triton_torch", interpreter = interpreter)

    # DLPack's header, for triton_launcher_c_library (fetched only when one is built).
    triton_dlpack_headers_repository(name = "rules_triton_dlpack")

triton = module_extension(
    implementation = _triton_impl,
    tag_classes = {"python_env": _python_env},
    environ = ["RULES_TRITON_PYTHON", "RULES_TRITON_TORCH_INCLUDE", "RULES_TRITON_DLPACK_INCLUDE"],
    doc = "Creates @rules_triton_python (the Python environment the Triton toolchain runs) and " +
          "@rules_triton_python_archive (the same environment packed, for archive mode) and " +
          "@rules_triton_torch (libtorch's stable-ABI headers, for triton_torch_library) and " +
          "@rules_triton_dlpack (DLPack's header, for triton_launcher_c_library).",
)
