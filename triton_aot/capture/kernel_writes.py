"""Which pointer parameters a kernel stores to, by torch's own analysis of user Triton kernels.

An op whose kernels write into one of its inputs must say so in its schema (`Tensor(a!)`), or
torch.compile may drop or reorder the call (an in-place launcher that returns None would leave
its output untouched). torch already answers this for `wrap_triton` kernels: it lowers the
kernel to TTIR and follows every store and atomic back to the parameters
(torch._higher_order_ops.triton_kernel_wrap). The same analysis runs here on the launch's own
arguments, each tensor standing in as a small CPU tensor of its dtype (TTIR depends on the
types, the constexprs and the hints, never on the memory). When the analysis cannot run, every
pointer counts as written: a read marked written costs a copy, never a wrong result.
"""

from __future__ import annotations

from typing import Any

from triton_aot.capture.examples import DTYPES
from triton_aot.capture.record import Argument
from triton_aot.core.signature import canonical_type


def _stand_in(a: Argument) -> Any:
    import torch
    if a.kind == "pointer":
        arg_type = canonical_type(a.type)  # "*bf16" -> a pointer to "bf16"
        element = arg_type.elem if arg_type is not None and arg_type.is_pointer else None
        name = "bool" if element == "i1" else DTYPES.get(element, "uint8")
        return torch.empty(16, dtype=getattr(torch, name))
    return a.value


def writes(kernel: Any, arguments: tuple[Argument, ...]) -> tuple[str, ...]:
    """The names of the pointer parameters `kernel` (a JITFunction) stores to."""
    pointers = tuple(a.name for a in arguments if a.kind == "pointer")
    if not pointers:
        return ()
    from torch.utils._python_dispatch import _disable_current_modes
    try:
        from torch._higher_order_ops import triton_kernel_wrap as wrap
        with _disable_current_modes():  # real stand-ins, outside the capture's fake mode
            kwargs = {a.name: _stand_in(a) for a in arguments}
            if hasattr(wrap, "identify_accessed_tensors"):  # torch >= 2.12
                accesses = wrap.identify_accessed_tensors(kernel, kwargs, {})
                names = {dep.name for dep in accesses.read_writes.writes}
            else:
                names = set(wrap.identify_mutated_tensors(kernel, kwargs, {}))
    except Exception:  # noqa: BLE001 - any failure of torch's analysis: all written, as torch does
        return pointers
    return tuple(n for n in pointers if n in names)
