"""Runs a launcher on fake inputs with no GPU and records every `kernel[grid](...)`.

torch's own capture of user-defined Triton kernels (torch.export with `wrap_triton`) sees only
launchers written for it; a kernel package's shipped wrapper calls `kernel[grid](...)` directly.
So while the launcher runs, `JITFunction.run` (what `kernel[grid](...)` calls, also through
`@triton.heuristics`) records the launch instead of compiling: each argument's type and the
JIT's specialization of its value by Triton's own `native_specialize_impl` (so `:16` and `:1`
follow the installed Triton exactly), the constexprs, num_warps, num_stages and the grid as an
expression of the dynamic sizes. Triton's driver and torch.cuda answer for the build's target
(build_driver, build_torch_cuda): a device query they cannot answer fails with its file:line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import re
import sys
import traceback
from typing import Any, Callable, Iterator

from triton_aot.compile.build_driver import DeviceAccessRefused
from triton_aot.capture import fake_cuda, kernel_writes, sizes, torch_graph, torch_work
from triton_aot.capture.examples import ExampleCall, FakeInputs
from triton_aot.capture.record import (Allocation, Argument, CallCapture, Launch, Step,
                                       TensorInput)
from triton_aot.core.errors import UserError


class CaptureRefused(UserError):
    """The launcher does something a build without a GPU cannot capture."""


def _skip_dirs() -> tuple[str, ...]:
    import torch
    import triton
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [here, os.path.dirname(os.path.abspath(triton.__file__)),
            os.path.dirname(os.path.abspath(torch.__file__)), os.path.dirname(contextlib.__file__)]
    try:
        import sympy
        dirs.append(os.path.dirname(os.path.abspath(sympy.__file__)))
    except ImportError:
        pass
    return tuple(d + os.sep for d in dirs)


def _user_line(frames: list[tuple[str, int]]) -> str:
    """file:line of the innermost frame in the user's code (not triton, torch or ours)."""
    skip = _skip_dirs()
    for name, line in reversed(frames):
        path = os.path.abspath(name)
        if not path.startswith(skip) and not name.startswith("<"):
            return f"{os.path.basename(path)}:{line}"
    return "<unknown line>"


def _stack_line() -> str:
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return _user_line(list(reversed(frames)))


def _traceback_line(e: BaseException) -> str:
    return _user_line([(f.filename, f.lineno) for f in traceback.extract_tb(e.__traceback__)])


class _Recorder:
    def __init__(self, inputs: FakeInputs, what: str) -> None:
        self.inputs = inputs
        self.what = what
        self.launches: list[Launch] = []
        self.input_storage: dict[int, list[tuple[str, Any]]] = {}  # storage -> [(name, tensor)]
        self.floats: dict[str, float] = {}
        self.ints: dict[str, int] = {}  # the launcher's int arguments (not bools)
        self.allocated: list[Any] = []  # tensors the launcher allocated, as first launched
        self.steps: list[Step] = []  # launches, allocations, views and torch work, in order
        self.fills: dict[int, float] = {}  # storage -> the constant an allocation was filled with
        self.graph = torch_graph.Graph(self.expr, self.float_name, self.tensor_input, self.steps)

    def float_name(self, value: float) -> str:
        """The launcher's float argument of this value ("" when none, or several)."""
        same = [n for n, v in self.floats.items() if v == value]
        return same[0] if len(same) == 1 else ""

    def tensor_input(self, name: str, t: Any) -> TensorInput:
        return TensorInput(name, str(t.dtype).removeprefix("torch."), self.sizes_of(t.shape),
                           self.sizes_of(t.stride()), bool(t.is_contiguous()))

    def source_of_tensor(self, t: Any) -> str:
        key = t.untyped_storage()._cdata
        if key in self.input_storage:  # views of one storage (q, k, v of a QKV) are distinct
            for name, base in self.input_storage[key]:
                if t.storage_offset() == base.storage_offset():
                    return f"input:{name}"
            return ""  # a pointer into an input at another offset: not bound by name
        for i, a in enumerate(self.allocated):
            if a.untyped_storage()._cdata == key:
                if not self.same_view(a, t):
                    raise CaptureRefused(
                        f"{self.what}: {_stack_line()}: {self.param} points into another part "
                        "or view of a tensor that an earlier launch got (out[:n], then out[n:]); "
                        "the op allocates one tensor per pointer parameter, so launch into "
                        "tensors of their own, or pass the whole tensor and offset in the kernel")
                return f"output:{i}"
        if not self.whole_storage(t):
            raise CaptureRefused(
                f"{self.what}: {_stack_line()}: {self.param} points into part of a tensor the "
                "launcher allocated (a slice such as out[:n] or out[1:], or a strided view); the "
                "op allocates exactly the tensor each pointer parameter gets, so allocate that "
                "tensor itself, or pass the whole allocation and offset in the kernel")
        self.allocated.append(t)
        return f"output:{len(self.allocated) - 1}"

    def concrete(self, value: Any) -> int:
        import torch
        return self.hint_of(value) if isinstance(value, torch.SymInt) else int(value)

    def whole_storage(self, t: Any) -> bool:
        """Whether `t` is its storage, whole and dense (asked at the example's sizes: asking
        adds no guard)."""
        return (self.concrete(t.storage_offset()) == 0 and bool(t.is_contiguous())
                and self.concrete(t.numel()) * t.element_size()
                == self.concrete(t.untyped_storage().nbytes()))

    def same_view(self, a: Any, t: Any) -> bool:
        return (self.concrete(a.storage_offset()) == self.concrete(t.storage_offset())
                and [self.concrete(v) for v in a.shape] == [self.concrete(v) for v in t.shape]
                and [self.concrete(v) for v in a.stride()] == [self.concrete(v) for v in t.stride()])

    def input_storage_of(self, a: Argument) -> int:
        name = a.source.partition(":")[2]
        return next(key for key, views in self.input_storage.items()
                    if any(n == name for n, _ in views))

    def source_of_float(self, name: str, value: float) -> str:
        same = [n for n, v in self.floats.items() if v == value]
        if len(same) > 1:
            raise CaptureRefused(f"{self.what}: {_stack_line()}: the launcher's float arguments "
                                 f"{' and '.join(same)} have the same example value {value!r}, "
                                 f"so which one reaches {name} is unknown; give them distinct "
                                 "example values")
        return f"arg:{same[0]}" if same else ""

    def source_of_int(self, value: int) -> str:
        """"arg:N" when exactly one int argument of the launcher has this value (0 and 1 are
        too common to tell, and the JIT specializes on 1); the capture's proof then passes that
        argument another value and checks that the kernel gets it."""
        same = [n for n, v in self.ints.items() if v == value]
        return f"arg:{same[0]}" if len(same) == 1 and value not in (0, 1) else ""

    def sizes_of(self, values: Any) -> tuple[str, ...]:
        import torch
        return tuple(self.expr(v) if isinstance(v, torch.SymInt) else str(int(v)) for v in values)

    def size_name(self, symbol: Any) -> str:
        if symbol not in self.inputs.names:
            raise CaptureRefused(f"{self.what}: {_stack_line()}: a launch argument or grid "
                                 f"depends on {symbol}, a value read from a tensor's contents, "
                                 "not from the inputs' sizes; compute it from sizes, or pass "
                                 "it as an argument of the launcher")
        return self.inputs.names[symbol]

    def expr(self, value: Any) -> str:
        return sizes.render(value.node.expr, self.size_name)

    def hint_of(self, value: Any) -> int:
        """The example's value of a SymInt (no guard is added: asking is not branching)."""
        try:  # torch >= 2.12 (size_hint is deprecated there)
            from torch.fx.experimental.symbolic_shapes import optimization_hint
        except ImportError:
            return int(value.node.shape_env.size_hint(value.node.expr))
        return int(optimization_hint(value))

    def record(self, fn: Any, args: tuple, kwargs: dict, grid: Any) -> None:
        import torch
        site = _stack_line()
        params = {p.name: p for p in fn.params}
        kernel_kwargs = {k: v for k, v in kwargs.items() if k in params}
        options = {k: v for k, v in kwargs.items() if k not in params}
        try:
            bound = fn.signature.bind(*args, **kernel_kwargs)
        except TypeError as e:
            raise CaptureRefused(f"{self.what}: {site}: {fn.__name__}[grid](...): {e}") from None
        bound.apply_defaults()
        algo_options = _algo_options(fn, options, self.what, site)
        arguments = tuple(self.argument(fn, params[name], value, site)
                          for name, value in bound.arguments.items())
        if callable(grid):
            grid = grid(dict(bound.arguments))
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        self.steps.append(Step("launch", fn.__name__, site))
        self.graph.launch(fn.__name__, [(n, v) for n, v in bound.arguments.items()
                                        if n in params and not params[n].is_constexpr
                                        and isinstance(v, torch.Tensor)], site)
        self.launches.append(Launch(
            kernel=fn.__name__, module=fn.fn.__module__, site=site, arguments=arguments,
            num_warps=int(options.get("num_warps", 4)),
            num_stages=int(options.get("num_stages", 3)),
            grid=tuple(self.grid_entry(fn, g, site) for g in grid),
            writes=kernel_writes.writes(fn, arguments), options=algo_options))

    def grid_entry(self, fn: Any, g: Any, site: str) -> str:
        import torch
        if isinstance(g, torch.SymInt):
            return self.expr(g)
        if isinstance(g, int):
            return str(g)
        raise CaptureRefused(f"{self.what}: {site}: the grid of {fn.__name__} has {g!r}; a grid "
                             "is made of sizes and ints")

    def argument(self, fn: Any, p: Any, value: Any, site: str) -> Argument:
        """One kernel parameter's record: its kind, type, the JIT's hint and its source."""
        import torch
        name = p.name
        if p.is_constexpr:
            if isinstance(value, torch.SymInt):
                # the sizes by name, not the expression: triton.next_power_of_2(n) of a
                # dynamic n is kilobytes of bit arithmetic
                used = sorted({self.size_name(s) for s in value.node.expr.free_symbols})
                raise CaptureRefused(
                    f"{self.what}: {site}: constexpr {name} of {fn.__name__} depends on the "
                    f"dynamic size{'s' if len(used) > 1 else ''} {', '.join(used)}; a constexpr "
                    "is compiled in, so make those sizes static (leave them out of `sizes`)")
            return Argument(name, "constexpr", value=_constexpr_value(value, self.what, site, name))
        if value is None:
            return Argument(name, "none")
        if isinstance(value, torch.Tensor):
            return self.pointer(fn, p, value, site)
        if isinstance(value, (bool, float)):
            spec = _specialize(value, p)
            is_bool = isinstance(value, bool)
            return Argument(name, "bool" if is_bool else "float", type=spec[0], value=value,
                            source="" if is_bool else self.source_of_float(name, value))
        expr = ""
        if isinstance(value, torch.SymInt):
            expr = self.expr(value)
            value = self.hint_of(value)
        if not isinstance(value, int):
            raise CaptureRefused(f"{self.what}: {site}: argument {name} of {fn.__name__} is "
                                 f"a {type(value).__name__}; the captured launch takes "
                                 "tensors, ints, floats, bools and None")
        spec = _specialize(value, p)
        if spec[0] == "constexpr":  # the JIT makes an int equal to 1 a constant
            return Argument(name, "int", type="i32", hint=1, value=value, expr=expr)
        return Argument(name, "int", type=spec[0], value=value,
                        hint=16 if spec[1] == "D" else 0, expr=expr,
                        source="" if expr else self.source_of_int(value))

    def pointer(self, fn: Any, p: Any, value: Any, site: str) -> Argument:
        import torch
        from torch._subclasses.fake_tensor import FakeTensor
        if not isinstance(value, FakeTensor) and value.device.type == "meta":
            raise CaptureRefused(
                f"{self.what}: {site}: argument {p.name} of {fn.__name__} is a tensor the "
                "launcher made from Python values (torch.tensor(...)), whose values the captured "
                "op would not hold; pass the tensor (or the scalar as a float) to the launcher "
                "as an argument")
        if not isinstance(value, FakeTensor):
            raise CaptureRefused(
                f"{self.what}: {site}: argument {p.name} of {fn.__name__} is a tensor the "
                "launcher neither got nor allocated (a global?); pass it to the "
                "launcher as an argument")
        offset = value.storage_offset()
        if isinstance(offset, torch.SymInt):
            offset = self.hint_of(offset)
        spec = _specialize(_Pointer(offset * value.element_size(), value.dtype), p)
        self.param = f"argument {p.name} of {fn.__name__}"
        return Argument(p.name, "pointer", type=spec[0], hint=16 if spec[1] == "D" else 0,
                        source=self.source_of_tensor(value))


def _algo_options(fn: Any, options: dict, what: str, site: str) -> tuple[tuple[str, Any], ...]:
    """The compile and launch options a launch passes (`kernel[grid](..., enable_fp_fusion=
    False)`) that its algo must carry (launch_options.OPTIONS but num_warps and num_stages,
    which the launch records itself), those not at their default, in the table's order. An
    option the build cannot set to the launch's value is refused: no library declared by
    hand could honour it either, so the only build that matches is of a launch without it."""
    from triton_aot.core import launch_options
    # @triton.jit(debug=True) compiles every launch with debug unless the launch says otherwise
    given = set(options)
    options = {"debug": bool(getattr(fn, "debug", False)), **options}
    supported = [o.name for o in launch_options.OPTIONS]
    out = []
    for name, value in options.items():
        option = launch_options.BY_NAME.get(name)
        if name in ("num_warps", "num_stages") or (
                option is None and launch_options.COMPILED_AS.get(name, ...) == value):
            continue
        launch = f"{fn.__name__}[grid](..., {name}={value!r})" if name in given else \
            f"@triton.jit({name}={value!r}) {fn.__name__}"
        if option is None:
            fixed = launch_options.COMPILED_AS.get(name, ...)
            at = f"cannot set {name}" if fixed is ... else \
                f"compiles every kernel with {name}={fixed!r}"
            raise CaptureRefused(
                f"{what}: {site}: {launch}: rules_triton {at} (an algo takes "
                f"{', '.join(supported)}), so no build, captured or declared with "
                f"triton_kernel_library, compiles the kernel this launch does; launch it "
                f"without {name} to build it ahead of time")
        if not option.allows(value):
            spelled = option.spelled or "True or False"
            raise CaptureRefused(f"{what}: {site}: {launch}: {name} must be {spelled}, as "
                                 "triton_algo takes it")
        if value != option.default:
            out.append((name, value))
    return tuple(sorted(out, key=lambda kv: supported.index(kv[0])))


def _specialize(value: Any, p: Any) -> tuple:
    """Triton's own specialization of a launch argument: (type, "D" / "" ...)."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import native_specialize_impl
    return native_specialize_impl(CUDABackend, value, False, not p.do_not_specialize,
                                  not p.do_not_specialize_on_alignment)


class _Pointer:
    """What native_specialize_impl reads off a tensor: its address and dtype."""

    def __init__(self, address: int, dtype: Any) -> None:
        self.dtype = dtype
        self._address = address

    def data_ptr(self) -> int:
        return self._address


def _constexpr_value(value: Any, what: str, site: str, name: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value  # None: the JIT's constexpr None, as triton_algo writes it
    text = str(value)
    if type(value).__name__ == "dtype":  # tl.float16 -> "tl.float16", as triton_algo writes it
        return "tl." + text
    if hasattr(value, "value"):  # tl.constexpr(...)
        return _constexpr_value(value.value, what, site, name)
    raise CaptureRefused(f"{what}: {site}: constexpr {name} is {value!r}, not an int, float, "
                         "bool, str, dtype or None; pass one of those")


class _NoDeviceGuard:
    """torch.cuda.device(...) at capture time: the op runs under its tensors' device guard."""

    def __init__(self, device: Any = None) -> None:
        pass

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


@contextlib.contextmanager
def _recording(recorder: _Recorder) -> Iterator[None]:
    import torch
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    saved_run, saved_autotune = JITFunction.run, Autotuner.run
    saved_device = torch.cuda.__dict__.get("device")

    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        recorder.record(self, args, kwargs, grid)

    def autotune(self: Any, *args: Any, **kwargs: Any) -> None:
        raise CaptureRefused(f"{recorder.what}: {_stack_line()}: {self.fn.__name__} is "
                             "@triton.autotune'd, which benchmarks on a GPU; capture a launcher "
                             "that picks its config, or use triton_autotune_algos")

    JITFunction.run, Autotuner.run = run, autotune
    torch.cuda.device = _NoDeviceGuard
    try:
        yield
    finally:
        JITFunction.run, Autotuner.run = saved_run, saved_autotune
        torch.cuda.device = saved_device


def capture_call(launcher: Callable, inputs: FakeInputs, call: ExampleCall,
                 what: str) -> CallCapture:
    """Runs `launcher(*call.args, **call.kwargs)` and returns what it launched."""
    recorder = _Recorder(inputs, what)
    tensors = _bind_inputs(launcher, recorder, call, what)
    guards_before = len(inputs.shape_env.guards)
    inputs.shape_env.guards = _SitedGuards(inputs.shape_env.guards)
    result = _run(launcher, recorder, call, what)
    if not recorder.launches:
        raise CaptureRefused(f"{what}: the launcher launched no Triton kernel on example call "
                             f"{call.text!r}; name the function that runs kernel[grid](...)")
    _refuse_specialized(inputs, guards_before, what)
    sited = inputs.shape_env.guards
    guards = tuple(sizes.render(g.expr, recorder.size_name)
                   for g, own in zip(sited[guards_before:], sited.own[guards_before:])
                   if own and g.expr.free_symbols and not _zero_one_guard(g.expr))
    launches, allocations = _outputs_in_return_order(recorder, result)
    returned = {t.untyped_storage()._cdata for t in _returned_tensors(result)}
    returned_inputs = tuple(name for key, views in recorder.input_storage.items()
                            if key in returned for name, _ in views)
    capture = CallCapture(call=call.text, launches=launches, guards=guards,
                          tensors=tuple(tensors), floats=tuple(recorder.floats.items()),
                          ints=tuple(recorder.ints.items()),
                          allocations=allocations, returned_inputs=returned_inputs,
                          steps=tuple(recorder.steps))
    if _computes_with_torch(recorder, result):
        return _with_graph(capture, recorder, result, what)
    _refuse_other_returns(recorder, result, what)
    return capture


def _refuse_other_returns(recorder: _Recorder, result: Any, what: str) -> None:
    """An op of launches alone returns the tensors the launcher allocated and returns, whole
    and dense, each once (the inputs and Python values a launcher also returns beside them, as
    Liger's forwards do for their autograd context, the caller has: they are not the op's
    results; a launcher that returns inputs alone is refused, since its op would return
    nothing).
    A returned transpose or part of such a tensor would make the op return another shape than
    the launcher, so it is refused naming the launcher's return line."""
    import torch
    site = f"{what}: {recorder.return_line}"
    returned = _returned_tensors(result)
    allocated = [t for t in returned
                 if t.untyped_storage()._cdata not in recorder.input_storage]
    if returned and not allocated:
        name = recorder.input_storage[returned[0].untyped_storage()._cdata][0][0]
        raise CaptureRefused(
            f"{site}: the launcher returns its input {name} (or a view of it) and no tensor it "
            "allocated, and an op cannot return an alias of its input (the op would return "
            "nothing); capture a wrapper that calls the launcher and returns None: the op then "
            f"writes {name} in place (Tensor(a!)), and the caller has it")
    for t in allocated:
        alloc = next(a for a in recorder.allocated
                     if a.untyped_storage()._cdata == t.untyped_storage()._cdata)
        if not (recorder.whole_storage(t)
                and recorder.concrete(t.numel()) == recorder.concrete(alloc.numel())):
            raise CaptureRefused(
                f"{site}: the launcher returns a strided view or a part of a tensor a kernel "
                "wrote (a transpose, a slice); the op returns the dense tensor the kernel got: "
                "return that tensor, or a .contiguous() copy")
    if len({t.untyped_storage()._cdata for t in allocated}) != len(allocated):
        raise CaptureRefused(f"{site}: the launcher returns one tensor twice (or two views of "
                             "one); an op returns each tensor once")


def _computes_with_torch(recorder: _Recorder, result: Any) -> bool:
    """Whether the launcher does torch work that computes values, or returns a tensor no kernel
    wrote (an allocation left as made): then its op replays its torch calls (a composite)."""
    if any(s.kind == "torch" for s in recorder.steps):
        return True
    launched = {a.untyped_storage()._cdata for a in recorder.allocated}
    return any(t.untyped_storage()._cdata not in launched | set(recorder.input_storage)
               for t in _returned_tensors(result))


def _with_graph(capture: CallCapture, recorder: _Recorder, result: Any,
                what: str) -> CallCapture:
    """The capture with the launcher's graph (its torch calls and launches, replayed by the
    composite op), or one refusal naming the launcher's line and the call it cannot replay."""
    graph = recorder.graph
    if graph.problems:
        site, problem = graph.problems[0]
        raise CaptureRefused(f"{what}: {site}: the launcher calls {problem}")
    work = next((s for s in recorder.steps if s.kind == "torch"), None) or \
        next(s for s in recorder.steps if s.kind == "allocation")
    written = {t.untyped_storage()._cdata for t in graph.written}
    written |= {recorder.input_storage_of(a) for launch in capture.launches
                for a in launch.arguments if a.name in launch.writes
                and a.source.startswith("input:")}
    mutated = tuple(name for key, views in recorder.input_storage.items()
                    if key in written for name, _ in views)
    return dataclasses.replace(
        capture, graph=tuple(graph.calls), result=_result_refs(graph, recorder, result, what),
        mutated=mutated,
        torch_work=f"{work.site}: {torch_work.torch_call(work.op)} ({work.op})")


def _result_refs(graph: torch_graph.Graph, recorder: _Recorder, result: Any, what: str) -> Any:
    """What the launcher returns, as references: a tensor, a tuple of tensors, or None."""
    import torch
    if result is None:
        return None
    items = result if isinstance(result, tuple) else (result,)
    if not all(isinstance(t, torch.Tensor) for t in items):
        raise CaptureRefused(f"{what}: the launcher returns {type(result).__name__}; an op "
                             "returns a tensor, a tuple of tensors or None")
    for t in items:
        views = recorder.input_storage.get(t.untyped_storage()._cdata)
        if views:
            raise CaptureRefused(f"{what}: the launcher returns its input {views[0][0]} (or a "
                                 "view of it), which an op cannot return; return a new tensor "
                                 "(e.g. a .clone()), or return None: the caller has the input")
    refs = [graph.encode(t) for t in items]
    return refs[0] if isinstance(result, torch.Tensor) else refs


def _bind_inputs(launcher: Callable, recorder: _Recorder, call: ExampleCall,
                 what: str) -> list[TensorInput]:
    """The launcher's tensor arguments (their storages noted, to name them in launches) and
    float arguments, as the example call gives them."""
    import torch
    try:
        bound = inspect.signature(launcher).bind(*call.args, **call.kwargs)
    except TypeError as e:
        raise UserError(f"{what}: example call {call.text!r} does not fit the launcher: {e}") from None
    bound.apply_defaults()
    tensors = []
    for name, value in bound.arguments.items():
        if isinstance(value, torch.Tensor):
            recorder.input_storage.setdefault(value.untyped_storage()._cdata, []).append(
                (name, value))
            recorder.graph.add_input(name, value)
            tensors.append(TensorInput(
                name, str(value.dtype).removeprefix("torch."), recorder.sizes_of(value.shape),
                recorder.sizes_of(value.stride()), bool(value.is_contiguous())))
        elif isinstance(value, float):
            recorder.floats[name] = value
        elif isinstance(value, int) and not isinstance(value, bool):
            recorder.ints[name] = value
    return tensors


def _run(launcher: Callable, recorder: _Recorder, call: ExampleCall, what: str) -> Any:
    """The launcher's result on the fake inputs, its launches and torch work recorded; one
    CaptureRefused naming the launcher's line for anything a build cannot run."""
    from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                               DynamicOutputShapeException)
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    try:
        def on_constant(made: Any, real: Any) -> None:
            recorder.graph.constant(made, real, _stack_line())

        with _recording(recorder), fake_cuda.looking_like_cuda(on_constant), \
                recorder.inputs.mode, _return_line(launcher, recorder), \
                torch_work.recorder(recorder.steps, _stack_line, recorder.fills, recorder.graph):
            return launcher(*call.args, **call.kwargs)
    except DeviceAccessRefused as e:  # the build-time driver's or torch.cuda's refusal
        asked = re.search(r"calls (\S+), which needs a GPU", e.message)
        called = asked.group(1).removesuffix("()") if asked else ""
        if called.endswith(".synchronize"):
            # a wait, not a question: nothing to pass instead, and nothing to wait for
            raise CaptureRefused(
                f"{what}: {_traceback_line(e)}: the launcher calls {called}(), which waits for "
                "the GPU; the captured op runs its launches in order on the caller's stream and "
                f"needs no wait: remove the {called}() call from the launcher") from None
        raise CaptureRefused(
            f"{what}: {_traceback_line(e)}: the launcher asks the GPU "
            f"({asked.group(1) if asked else 'a device query'}), which a build without one "
            "cannot answer (the build-time driver answers the target, its torch device and "
            "torch.cuda's capability questions); pass the value to the launcher as an argument, "
            "or for the SM count declare the kernel explicitly with NUM_SMS in its grid") from None
    except UserError as e:
        raise UserError(f"{e.message} (example call {call.text!r})") from None
    except fake_cuda.AddressRead as e:
        raise CaptureRefused(
            f"{what}: {_traceback_line(e)}: the launcher reads a tensor's address "
            "(.data_ptr()), which a build without a GPU has not, and which would reach the "
            "kernel as an integer; pass the tensor itself to the kernel (the op passes its "
            "address)") from None
    except (DataDependentOutputException, DynamicOutputShapeException,
            GuardOnDataDependentSymNode) as e:
        raise CaptureRefused(
            f"{what}: {_traceback_line(e)}: the launcher reads tensor values on the host (a "
            "host sync such as .item(), or a branch or grid on tensor contents), which a build "
            "cannot know; compute it from sizes, or pass it as an argument") from None
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise CaptureRefused(f"{what}: {_traceback_line(e)}: the launcher failed on example call "
                             f"{call.text!r}: {type(e).__name__}: {first}") from None


@contextlib.contextmanager
def _return_line(launcher: Callable, recorder: _Recorder) -> Iterator[None]:
    """Notes file:line of the launcher's `return` (a refusal of what it returns names it)."""
    code = getattr(inspect.unwrap(launcher), "__code__", None)
    recorder.return_line = "<the launcher's return>"
    if code is None:
        yield
        return
    recorder.return_line = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is code:
            recorder.return_line = f"{os.path.basename(code.co_filename)}:{frame.f_lineno}"

    saved = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(saved)


class _SitedGuards(list):
    """The ShapeEnv's guard list, noting the launcher's line that added each guard and whether
    the launcher's own code branched on a size there (`if n > 4096`, `min(n, 64)`), or torch's
    implementation of an op reasoned about sizes (a view's `(b * s) != b`, which only tells
    which path torch took at the example's sizes, not a limit of the launcher)."""

    def __init__(self, guards: list) -> None:
        super().__init__(guards)
        self.sites = ["<before the launcher>"] * len(guards)
        self.own = [False] * len(guards)

    def append(self, guard: Any) -> None:
        self.sites.append(_stack_line())
        self.own.append(_launcher_branch())
        super().append(guard)


# Where torch turns a symbolic comparison into a guard: the frames between a guard and the
# launcher's own line when the launcher itself compares sizes.
_SYMBOLIC_FILES = ("symbolic_shapes.py", "recording.py", "sym_node.py")
_SYMBOLIC_DUNDERS = ("__bool__", "__int__", "__index__", "__float__", "__lt__", "__le__",
                     "__gt__", "__ge__", "__eq__", "__ne__", "__hash__")


def _launcher_branch() -> bool:
    """Whether the guard being added comes from the launcher's own code asking a size question
    (only torch's symbolic machinery between it and the launcher's frame)."""
    skip = _skip_dirs()
    frame = sys._getframe(2)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(skip) and not frame.f_code.co_filename.startswith("<"):
            return True
        name = os.path.basename(path)
        if name not in _SYMBOLIC_FILES and not (
                name == "__init__.py" and frame.f_code.co_name in _SYMBOLIC_DUNDERS):
            return False
        frame = frame.f_back
    return False


def _refuse_specialized(inputs: FakeInputs, guards_before: int, what: str) -> None:
    """A dynamic size the launcher fixed to its example value (a guard `n == 512`, e.g. from
    `float(n)` arithmetic or a comparison with a constant) would make the op static: refused,
    naming the line of the guard."""
    import sympy
    guards = inputs.shape_env.guards
    for symbol, name in inputs.names.items():
        value = inputs.shape_env.replacements.get(symbol)
        if value is None or not isinstance(value, sympy.Integer):
            continue
        site = next((guards.sites[i] for i in range(guards_before, len(guards))
                     if symbol in guards[i].expr.free_symbols
                     and isinstance(guards[i].expr, sympy.Eq)), "<unknown line>")
        raise CaptureRefused(
            f"{what}: {site}: the launcher fixes the dynamic size {name} to its example value "
            f"{int(value)} (a guard {name} == {int(value)}, e.g. from float arithmetic on it or a "
            f"comparison with a constant), so the op would only run at {name} = {int(value)}; "
            f"compute with {name} as an int, or make it static (leave it out of `sizes`)")


def _zero_one_guard(expr: Any) -> bool:
    """`s != 1`, `s >= 2`...: what torch's own size reasoning adds for sizes 0 and 1 (the
    examples' sizes are >= 2), not a choice of the launcher."""
    import sympy
    if not isinstance(expr, sympy.core.relational.Relational):
        return False
    other = expr.rhs if expr.lhs.is_Symbol else expr.lhs if expr.rhs.is_Symbol else None
    return other is not None and other.is_Integer and int(other) in (0, 1, 2)


def _returned_tensors(value: Any) -> list[Any]:
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _returned_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _returned_tensors(v)]
    return []


def _outputs_in_return_order(recorder: _Recorder, result: Any):
    """The launches with `output:K` renumbered so that K follows the launcher's return order
    (scratch tensors last), and the allocations in that order."""
    returned = _returned_tensors(result)
    order, shapes = [], {}
    for r in returned:
        for i, a in enumerate(recorder.allocated):
            if i not in order and a.untyped_storage()._cdata == r.untyped_storage()._cdata:
                order.append(i)
                same_layout = r.is_contiguous() and r.numel() == a.numel()
                shapes[i] = r.shape if same_layout else a.shape
    returned_count = len(order)
    order += [i for i in range(len(recorder.allocated)) if i not in order]
    new_index = {old: new for new, old in enumerate(order)}
    allocations = tuple(
        Allocation(str(recorder.allocated[old].dtype).removeprefix("torch."),
                   recorder.sizes_of(shapes.get(old, recorder.allocated[old].shape)),
                   new < returned_count,
                   recorder.fills.get(recorder.allocated[old].untyped_storage()._cdata))
        for new, old in enumerate(order))

    def renumber(a: Argument) -> Argument:
        if a.source.startswith("output:"):
            return dataclasses.replace(a, source=f"output:{new_index[int(a.source[7:])]}")
        return a

    launches = tuple(dataclasses.replace(l, arguments=tuple(renumber(a) for a in l.arguments))
                     for l in recorder.launches)
    return launches, allocations
