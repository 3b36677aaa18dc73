"""The build-time `torch.cuda`: questions about the target are answered, devices are refused.

Why: kernel files and kernel packages ask torch about the GPU at import time, to choose a code
path or a config file: `torch.cuda.get_device_capability() >= (9, 0)` for TMA or fp8,
`torch.cuda.get_device_name()` for per-device config files, `torch.cuda.is_available()` before
either. A build machine has no GPU (and often a CPU build of torch, which answers "Torch not
compiled with CUDA enabled"); one that has a GPU would answer for that GPU instead of the target
the action compiles for. So while a compile action imports and compiles a kernel, torch.cuda
answers for the action's target, as `build_driver` does for Triton's own driver, and everything
that needs memory or a device (allocation, streams, events, synchronize, memory queries) fails
with one error naming the kernel file's line.

What is answered, and with which value, is the table below (`answers`); docs/kernels.md lists it.
The module is patched only while the block runs (and torch is only touched when the kernel
imports it: importing torch costs seconds), then put back, so the persistent worker starts
every request from the same state.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from typing import Any, Callable, Iterator

from triton_aot.compile.build_driver import DeviceAccessRefused, caller_line
from triton_aot.core.target import Target

# The device a target names, for kernels that look up per-device config files by name (as
# vLLM's and SGLang's fused-MoE configs are): the data-centre part of each architecture.
CUDA_DEVICE_NAMES = {
    75: "Tesla T4",
    80: "NVIDIA A100-SXM4-80GB",
    86: "NVIDIA A10",
    89: "NVIDIA L40S",
    90: "NVIDIA H100 80GB HBM3",
    100: "NVIDIA B200",
    103: "NVIDIA B300",
    120: "NVIDIA RTX PRO 6000 Blackwell Server Edition",
}
HIP_DEVICE_NAMES = {
    "gfx90a": "AMD Instinct MI250X/MI250",
    "gfx942": "AMD Instinct MI300X",
    "gfx950": "AMD Instinct MI355X",
}

# torch.cuda functions that need a device or its memory. `_lazy_init` is what torch's C++ side
# calls before the first allocation on "cuda" (torch.empty(..., device="cuda"), .cuda()), so
# refusing it covers tensor creation too.
_REFUSED = ("_lazy_init", "init", "synchronize", "current_stream", "default_stream", "set_stream",
            "stream", "set_device", "device", "Stream", "Event", "ExternalStream",
            "mem_get_info", "memory_allocated", "max_memory_allocated", "memory_reserved",
            "max_memory_reserved", "empty_cache", "memory_stats", "reset_peak_memory_stats",
            "get_rng_state", "set_rng_state", "utilization", "temperature", "power_draw",
            "clock_rate", "ipc_collect", "graph", "CUDAGraph")


def device_name(backend: str, arch: Any) -> str:
    target = Target(backend, arch, 0)
    if target.is_hip:
        return HIP_DEVICE_NAMES.get(str(arch), f"AMD {arch}")
    return CUDA_DEVICE_NAMES.get(int(arch), f"NVIDIA sm_{arch}")


def capability(backend: str, arch: Any) -> tuple[int, int]:
    """(major, minor) as torch reports it: sm_90 is (9, 0); gfx942 is (9, 4) as on ROCm."""
    if Target(backend, arch, 0).is_hip:
        digits = str(arch)[3:]  # gfx942 -> 942, gfx90a -> 90a, gfx1100 -> 1100
        return int(digits[:-2]), int(digits[-2], 16)
    return int(arch) // 10, int(arch) % 10


def answers(backend: str, arch: Any, warp_size: int) -> dict[str, Any]:
    """The answered torch.cuda questions and their values for one target (what docs/kernels.md
    documents)."""
    target = Target(backend, arch, warp_size)
    major, minor = capability(backend, arch)
    return {
        "is_available()": True,
        "is_initialized()": False,
        "device_count()": 1,
        "current_device()": 0,
        "get_device_capability()": (major, minor),
        "get_device_name()": device_name(backend, arch),
        "get_arch_list()": [str(arch) if target.is_hip else f"sm_{arch}"],
        "is_bf16_supported()": target.is_hip or int(arch) >= 80,
        "get_device_properties().name": device_name(backend, arch),
        "get_device_properties().major": major,
        "get_device_properties().minor": minor,
        "get_device_properties().warp_size": warp_size,
        **({"get_device_properties().gcnArchName": str(arch)} if target.is_hip else {}),
    }


def _skip_dirs() -> tuple[str, ...]:
    import torch
    return (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,)


def _refusal(what: str, target_text: str, flag: str) -> DeviceAccessRefused:
    return DeviceAccessRefused(
        f"{flag}: {caller_line(_skip_dirs())} calls torch.cuda.{what}, which needs a GPU; at "
        f"build time torch.cuda only answers questions about the target being compiled "
        f"({target_text}: capability, device name, is_available, device_count). Move the call "
        "into the function that launches the kernel (it does not run at build time), or for "
        "the SM count use NUM_SMS in the grid")


class _Properties:
    """`torch.cuda.get_device_properties()`: what the target decides; the rest refuses."""

    def __init__(self, fields: dict[str, Any], refuse: Callable[[str], Exception]) -> None:
        self.__dict__["_fields"] = fields
        self.__dict__["_refuse"] = refuse

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        fields = self.__dict__["_fields"]
        if name in fields:
            return fields[name]
        raise self.__dict__["_refuse"](f"get_device_properties().{name}")

    def __repr__(self) -> str:
        return "_CudaDeviceProperties(" + ", ".join(
            f"{k}={v!r}" for k, v in self.__dict__["_fields"].items()) + ")"


class _Patch:
    """The replacement attributes of torch.cuda for one target, and the originals they hide."""

    def __init__(self, backend: str, arch: Any, warp_size: int, flag: str) -> None:
        target_text = f"{backend}:{arch}"
        table = answers(backend, arch, warp_size)
        prefix = "get_device_properties()."
        fields = {k[len(prefix):]: v for k, v in table.items() if k.startswith(prefix)}

        def refuse(what: str) -> Exception:
            return _refusal(what, target_text, flag)

        def constant(value: Any) -> Callable[..., Any]:
            return lambda *args, **kwargs: value

        def refusing(name: str) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                raise refuse(f"{name}()")
            return call

        self.replacements: dict[str, Any] = {
            name[:-2]: constant(value) for name, value in table.items() if name.endswith("()")}
        properties = _Properties(fields, refuse)
        self.replacements["get_device_properties"] = constant(properties)
        for name in _REFUSED:
            self.replacements[name] = refusing(name)
        self.saved: dict[str, Any] = {}
        self.module: Any = None

    def apply(self, module: Any) -> None:
        self.module = module
        for name, value in self.replacements.items():
            self.saved[name] = module.__dict__.get(name, _MISSING)
            setattr(module, name, value)

    def restore(self) -> None:
        if self.module is None:
            return
        for name, value in self.saved.items():
            if value is _MISSING:
                self.module.__dict__.pop(name, None)
            else:
                setattr(self.module, name, value)
        self.module = None


_MISSING = object()


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches torch.cuda right after a kernel file's `import torch` executes it."""

    def __init__(self, patch: _Patch) -> None:
        self._patch = patch

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "torch.cuda":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _PatchingLoader(spec.loader, self._patch)
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, patch: _Patch) -> None:
        self._loader = loader
        self._patch = patch

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        self._patch.apply(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...
        return getattr(self._loader, name)


@contextlib.contextmanager
def answering_for(backend: str, arch: Any, warp_size: int,
                  flag: str = "--kernel_path") -> Iterator[None]:
    """torch.cuda answers for `backend:arch` inside the block (when the kernel uses torch)."""
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        yield  # no torch in this environment: nothing can ask it
        return
    patch = _Patch(backend, arch, warp_size, flag)
    finder = None
    if "torch.cuda" in sys.modules:
        patch.apply(sys.modules["torch.cuda"])
    else:
        finder = _PatchOnImport(patch)
        sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder is not None and finder in sys.meta_path:
            sys.meta_path.remove(finder)
        patch.restore()
