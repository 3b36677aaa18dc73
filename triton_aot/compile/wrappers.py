"""A kernel file's kernel object: a JITFunction, often under `@triton.autotune` and
`@triton.heuristics` wrappers (`Autotuner(Heuristics(JITFunction))`).

Its own module because both sides need it: kernel_loader finds the function to compile under the
wrappers, and decorators gives the wrappers their build-time meaning (and reaches the Triton
adapter, which imports kernel_loader). Needs triton, imported when called.
"""

from __future__ import annotations

from typing import Any


def unwrap(obj: Any) -> tuple[Any, tuple]:
    """(the JITFunction, the wrappers around it, outermost first), or (None, ()) when `obj` is
    no Triton kernel. Wrappers are any KernelInterface with an `fn` (Autotuner, Heuristics)."""
    from triton.runtime.jit import JITFunction, KernelInterface
    wrappers = []
    while obj is not None and not isinstance(obj, JITFunction) and isinstance(
            obj, KernelInterface) and hasattr(obj, "fn"):
        wrappers.append(obj)
        obj = obj.fn
    return (obj, tuple(wrappers)) if isinstance(obj, JITFunction) else (None, ())
