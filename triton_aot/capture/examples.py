"""The example calls of a launcher, as fake CUDA tensors with symbolic sizes.

An example call is written as Python call arguments, e.g.
    "bf16(n_rows, 1024), bf16(1024), 1e-06, 0.0, 'llama', False"
where `bf16(...)` (also fp16, fp32, fp64, i8, i16, i32, i64, u8, bool_) makes a contiguous
tensor of those sizes (on the meta device: a launcher's `device=x.device` allocations follow) (`strides=(...)` for another layout, `offset=` a storage offset
in elements), and each name of `sizes` (`{"n_rows": 4096}`) is a dynamic size: a ShapeEnv
symbol whose example value is the given number. Any other size is static. The tensors are
FakeTensors: no memory, no device; torch views and factories work on them as on real ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from triton_aot.core.errors import UserError

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
          "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
          "bool_": "bool", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}


@dataclass
class ExampleCall:
    text: str
    args: tuple
    kwargs: dict


class FakeInputs:
    """A FakeTensorMode over a ShapeEnv whose symbols are the dynamic sizes, by name."""

    def __init__(self, sizes: dict[str, int], what: str) -> None:
        import torch
        from torch._dynamo.source import ConstantSource
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

        self.torch = torch
        # no duck sizing: two sizes that happen to be equal in the example stay two sizes
        self.shape_env = ShapeEnv(duck_shape=False, specialize_zero_one=False)
        self.mode = FakeTensorMode(shape_env=self.shape_env)
        self.names: dict[Any, str] = {}  # sympy symbol -> size name
        self.values: dict[str, Any] = {}
        for name, value in sizes.items():
            if not name.isidentifier() or not isinstance(value, int) or value < 2:
                raise UserError(f"{what}: sizes: {name!r}: {value!r}; give a C identifier and "
                                "an example value >= 2 (0 and 1 are sizes the JIT specializes on)")
            symbol = self.shape_env.create_symbol(value, ConstantSource(name),
                                                  dynamic_dim=DimDynamic.DYNAMIC)
            self.names[symbol] = name
            self.values[name] = self.shape_env.create_symintnode(
                symbol, hint=value, source=ConstantSource(name))

    def tensor(self, dtype_name: str, sizes: tuple, strides: tuple | None = None,
               offset: int = 0):
        torch = self.torch
        if strides is None:
            strides, step = [], 1
            for size in reversed(sizes):
                strides.append(step)
                step = step * size
            strides = tuple(reversed(strides))
        with self.mode:
            # meta, not a fake "cuda": a CPU build of torch has no CUDA device guard, which
            # copies (.contiguous(), .clone()) of a fake CUDA tensor need
            base = torch.empty_strided(sizes, strides, dtype=getattr(torch, DTYPES[dtype_name]),
                                       device="meta")
            if offset:
                base = base.as_strided(sizes, strides, offset)
        return base

    def parse(self, text: str, what: str) -> ExampleCall:
        namespace: dict[str, Any] = {}
        for short in DTYPES:
            namespace[short] = (lambda d: lambda *sizes, strides=None, offset=0:
                                self.tensor(d, sizes, strides, offset))(short)
        namespace.update(self.values)
        namespace["_call"] = lambda *a, **k: (a, k)
        try:
            with self.mode:
                args, kwargs = eval(f"_call({text})", namespace)  # the BUILD file's own text
        except Exception as e:
            raise UserError(f"{what}: example call {text!r}: {type(e).__name__}: {e}; write "
                            "call arguments such as \"bf16(n_rows, 1024), 1e-06, eps=0.5\" with "
                            "sizes named in `sizes`") from None
        return ExampleCall(text, args, kwargs)
