"""The build-time `triton.runtime.driver.active`: the target being compiled, never a device.

Why: real kernel files ask the driver at import time. Triton's tutorials set
`DEVICE = triton.runtime.driver.active.get_active_torch_device()` and build their autotune
config lists from `triton.runtime.driver.active.get_current_target()`; on a build machine with
no GPU the real driver fails ("0 active drivers"), and on one with a GPU it would answer for
that GPU instead of the target the action compiles for. While a compile action imports and
compiles a kernel, `answering_for(target)` installs this driver: it answers the questions a
build can answer from the action's target (backend, arch, warp size; the torch device object,
which is only a name) and refuses everything that would touch a device with one error that
names the kernel file's line.

The real driver is never created: Triton creates it lazily on the first `driver.active`, and
this one is installed before the kernel module is imported. The previous active driver (none,
in a compile action) is put back afterwards, so the persistent worker starts every request
from the same state.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterator

from triton_aot.core.errors import UserError

# Frames from these packages (every stage of triton_aot) are not the user's line.
_INTERNAL_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)


class DeviceAccessRefused(UserError):
    """The kernel file asked the build-time driver for something only a GPU can answer."""


def caller_line(also_skip: tuple[str, ...] = ()) -> str:
    """`file.py:LINE` of the innermost frame outside triton, triton_aot and `also_skip`."""
    import triton
    skip = (_INTERNAL_DIRS + (os.path.dirname(os.path.abspath(triton.__file__)) + os.sep,)
            + also_skip)
    frame = sys._getframe(2)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(skip) and not name.startswith("<"):
            return f"{os.path.basename(name)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown line>"


def _refuse(what: str, target_text: str, flag: str) -> DeviceAccessRefused:
    return DeviceAccessRefused(
        f"{flag}: {caller_line()} calls triton.runtime.driver.active.{what}, which needs "
        f"a GPU; at build time the driver only answers get_current_target() ({target_text}, the "
        "target being compiled) and get_active_torch_device(). Move the call into the function "
        "that launches the kernel (it does not run at build time), or for the SM count use "
        "NUM_SMS in the grid")


class _RefusingNamespace:
    """`driver.active.utils`: every attribute (get_device_properties, load_binary...) refuses."""

    def __init__(self, prefix: str, target_text: str, flag: str) -> None:
        self._prefix = prefix
        self._target_text = target_text
        self._flag = flag

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise _refuse(f"{self._prefix}.{name}", self._target_text, self._flag)


def make_driver(backend: str, arch: Any, warp_size: int, flag: str = "--kernel_path") -> Any:
    """A `DriverBase` for `GPUTarget(backend, arch, warp_size)` (class built lazily: it
    subclasses Triton's, which is imported only inside a compile)."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase

    target_text = f"{backend}:{arch}"
    refusing = ("get_benchmarker", "get_device_interface", "get_empty_cache_for_benchmark",
                "clear_cache", "set_current_device", "get_current_stream",
                "get_device_capability", "map_python_to_cpp_type", "launcher_cls")

    class BuildTimeDriver(DriverBase):
        @classmethod
        def is_active(cls) -> bool:
            return False  # never chosen by Triton's own driver discovery

        def __init__(self) -> None:
            super().__init__()
            self.backend = backend
            self.utils = _RefusingNamespace("utils", target_text, flag)

        def get_current_target(self) -> Any:
            return GPUTarget(backend, arch, warp_size)

        def get_active_torch_device(self) -> Any:
            import torch  # a device object is a name: creating it touches no GPU
            return torch.device("cuda", 0)

        def get_current_device(self) -> int:
            return 0

        def __getattribute__(self, name: str) -> Any:
            if name in refusing:
                raise _refuse(name + "()" if name != "launcher_cls" else name, target_text, flag)
            return object.__getattribute__(self, name)

    # the abstract methods are answered through __getattribute__; clear them so the class
    # can be instantiated
    BuildTimeDriver.__abstractmethods__ = frozenset()
    return BuildTimeDriver()


@contextlib.contextmanager
def answering_for(backend: str, arch: Any, warp_size: int,
                  flag: str = "--kernel_path") -> Iterator[Any]:
    """Installs the build-time driver as `triton.runtime.driver.active` for the block."""
    from triton.runtime.driver import driver as config

    saved = config._active  # private, but the same in triton 3.5-3.9 (see triton_adapter)
    build_driver = make_driver(backend, arch, warp_size, flag)
    config.set_active(build_driver)
    try:
        yield build_driver
    finally:
        config._active = saved
