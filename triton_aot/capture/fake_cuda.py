"""Fake inputs that are CUDA tensors to the launcher, with no GPU and a CPU build of torch.

The example calls' tensors are FakeTensors on the meta device: a fake "cuda" tensor would need
torch's CUDA device guard for indexing (`x[0]`, `x[None]`) and copies, which a CPU build of
torch does not have. Launchers check their inputs, though (`assert x.is_cuda`,
`x.device.type == "cuda"`, `torch.cuda.current_device() == x.device.index`), and allocate on
`x.device` or on "cuda". While the launcher runs, the launcher's own code (any caller outside
torch and rules_triton) sees the fake tensors on cuda:0, and a tensor it asks for on a CUDA
device (`device=x.device`, `device="cuda"`, `.to("cuda")`, `.cuda()`) is made on meta, like
the inputs; torch's own fake-tensor machinery still sees the meta device it computes on.
`x.data_ptr()` raises AddressRead: a fake tensor has no address (torch would answer 0, which
would reach a kernel as an integer).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterator


class AddressRead(Exception):
    """The launcher read a fake tensor's address (`x.data_ptr()`), which a build has not."""


def _internal_dirs() -> tuple[str, ...]:
    import torch
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, here + os.sep)


def is_cuda_device(device: Any) -> bool:
    import torch
    if isinstance(device, torch.SymInt) or isinstance(device, bool) or \
            not isinstance(device, (str, torch.device, int)):
        return False  # a dynamic size is no device index (asking would fix it to its value)
    try:
        return torch.device(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False


def on_meta(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments of a factory or `.to` with every CUDA device replaced by meta."""
    import torch
    meta = torch.device("meta")
    # positional: a device or its name (an int there is a value: `full(shape, 0)`)
    args = tuple(meta if isinstance(a, (str, torch.device)) and is_cuda_device(a) else a
                 for a in args)
    if is_cuda_device(kwargs.get("device")):
        kwargs = dict(kwargs, device=meta)
    return args, kwargs


@contextlib.contextmanager
def looking_like_cuda(on_constant: Any = None) -> Iterator[None]:
    """FakeTensors on meta answer cuda:0 to the launcher's code while the block runs.

    `torch.tensor(values, device=<cuda>)` makes a fake tensor of the values' shape and dtype
    and tells `on_constant(fake, real)` the values (`real`, a CPU tensor)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensor

    internal = _internal_dirs()
    cuda0 = torch.device("cuda", 0)
    saved = {name: FakeTensor.__dict__.get(name) for name in
             ("device", "is_cuda", "get_device", "cuda", "to", "data_ptr")}
    saved_tensor, saved_as_tensor = torch.tensor, torch.as_tensor
    real_device = saved["device"]

    def launcher_asks() -> bool:
        return not sys._getframe(2).f_code.co_filename.startswith(internal)

    def device(self: Any) -> Any:
        d = real_device.__get__(self)
        return cuda0 if d.type == "meta" and launcher_asks() else d

    def is_cuda(self: Any) -> bool:
        d = real_device.__get__(self)
        return d.type == "cuda" or (d.type == "meta" and launcher_asks())

    def get_device(self: Any) -> int:
        return 0

    def cuda(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = on_meta(args, kwargs)
        return torch.Tensor.to(self, *args, **kwargs)

    def data_ptr(self: Any) -> int:
        raise AddressRead("data_ptr")

    def tensor(*args: Any, **kwargs: Any) -> Any:
        if on_constant is not None and args and not isinstance(args[0], torch.Tensor) \
                and is_cuda_device(kwargs.get("device")):
            from torch.utils._python_dispatch import _disable_current_modes
            with _disable_current_modes():  # neither fake nor recorded: the values themselves
                real = saved_tensor(args[0], dtype=kwargs.get("dtype"))
            made = torch.empty(real.shape, dtype=real.dtype, device="meta")
            on_constant(made, real)
            return made
        return saved_tensor(*on_meta(args, kwargs)[0], **on_meta(args, kwargs)[1])

    def as_tensor(*args: Any, **kwargs: Any) -> Any:
        return saved_as_tensor(*on_meta(args, kwargs)[0], **on_meta(args, kwargs)[1])

    FakeTensor.device = property(device)
    FakeTensor.is_cuda = property(is_cuda)
    FakeTensor.get_device, FakeTensor.cuda, FakeTensor.to = get_device, cuda, to
    FakeTensor.data_ptr = data_ptr
    torch.tensor, torch.as_tensor = tensor, as_tensor
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                delattr(FakeTensor, name)
            else:
                setattr(FakeTensor, name, value)
        torch.tensor, torch.as_tensor = saved_tensor, saved_as_tensor
