"""The environment a kernel file is imported and compiled in at build time.

Every tool that imports a kernel file (compile, its import check, autotune_configs) does it the
same way: Triton's caches and environment kept out (triton_adapter.hermetic_env), Triton's
driver and torch.cuda answering for the action's target (build_driver, build_torch_cuda), and
the kernel module loaded with the deps' import roots (kernel_loader).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Sequence


@contextlib.contextmanager
def kernel_for_target(target: Any, kernel_path: Optional[str], kernel_name: str,
                      import_paths: Sequence[str], kernel_module: Optional[str],
                      bazel_target: Optional[str]) -> Iterator[Any]:
    """Yields the loaded kernel (kernel_loader.LoadedKernel) with `target`'s answers in force.

    `target`: a parsed target (triton_adapter.parse_target)."""
    from triton_aot.compile import build_driver, build_torch_cuda
    from triton_aot.compile.kernel_loader import load_kernel
    from triton_aot.compile.triton_adapter import hermetic_env

    source_flag = "--kernel_module" if kernel_module else "--kernel_path"
    answers = (target.backend, target.arch, target.warp_size, source_flag)
    with hermetic_env(), build_driver.answering_for(*answers), \
            build_torch_cuda.answering_for(*answers), \
            load_kernel(kernel_path, kernel_name, import_paths, kernel_module=kernel_module,
                        bazel_target=bazel_target) as kernel:
        yield kernel
