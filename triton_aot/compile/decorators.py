"""What `@triton.autotune` and `@triton.heuristics` mean ahead of time.

A kernel file's `matmul_kernel` is often `Autotuner(Heuristics(JITFunction))`. The compile tool
compiles the JITFunction itself, one variant per (algo x specialization x target); this module
gives the wrappers their build-time meaning:

- Python defaults of the kernel's parameters become constexpr values (`param_defaults`);
- each `@triton.heuristics` value is computed for the variant being compiled
  (`apply_heuristics`) from what is known at build time: constexpr values, launch options and
  the *hint facts* of the run-time arguments. An integer with a `:16` hint is a `RuntimeValue`
  that knows it is divisible by 16 (`n % 16 == 0` is True, `n % 8` is 0); one with `:1` is the
  int 1; anything that would need a run-time value (`K % 64 == 0` under a `:16` hint, `n > 0`,
  `next_power_of_2(n)`, a tensor's shape) is refused with one error naming the heuristic and
  what to write instead. A pointer's `.dtype` is its signature element type (equal to the tl
  and the torch dtype of that name) and a run-time argument is never None;
- the autotune `key` and which of the autotuner's configs an algo is (`autotune_info`), for the
  variant record;
- the config list itself, for `python -m triton_aot.compile.autotune_configs` (`autotune_configs`).

Needs triton (imported lazily), and runs inside kernel_loader.load_kernel().
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from triton_aot.compile.triton_adapter import python_value
from triton_aot.core.binding import BoundSignature, NONE_VALUE
from triton_aot.core.errors import UserError
from triton_aot.core.signature import ConstValue, TL_DTYPES, parse_value

# Launch options a triton.Config carries besides its kwargs (all of triton 3.5 to 3.9's
# Config.__init__ except pre_hook and ir_override, which have no build-time meaning), and that a
# heuristic may set as the JIT lets it.
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


# --------------------------------------------------------------------------- the wrappers


def _autotuners(wrappers: Sequence[Any]) -> list:
    from triton.runtime.autotuner import Autotuner
    return [w for w in wrappers if isinstance(w, Autotuner)]


def _heuristics(wrappers: Sequence[Any]) -> list:
    from triton.runtime.autotuner import Heuristics
    return [w for w in wrappers if isinstance(w, Heuristics)]


def heuristic_names(wrappers: Sequence[Any]) -> list[str]:
    """The names the kernel's heuristics set, in the order the JIT computes them."""
    return [name for h in _heuristics(wrappers) for name in h.values]


# --------------------------------------------------------------------------- Python values


def python_const(value: Any, what: str) -> ConstValue:
    """A Python value (a default, a config kwarg, a heuristic's result) as a constexpr value;
    UserError naming `what` when it has no such form."""
    import triton.language as tl
    if isinstance(value, tl.constexpr):
        value = value.value
    if value is None:
        return NONE_VALUE
    text = None
    if isinstance(value, bool):
        text = repr(value)
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise UserError(f"{what} is {value!r}; a float constexpr must be finite")
        return ConstValue("float", value, repr(value))
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, tl.dtype):
        names = [n for n in sorted(TL_DTYPES) if getattr(tl, n, None) == value]
        if names:
            return ConstValue("dtype", "tl." + names[0], "tl." + names[0])
    if text is not None:
        try:
            parsed = parse_value(text)
        except UserError as e:
            raise UserError(f"{what} is {value!r}: {e.message}") from None
        if parsed is not None:
            return parsed
    raise UserError(f"{what} is {value!r} ({type(value).__name__}), which rules_triton cannot "
                    "record as a constexpr value (int, float, bool, None, a string of letters, "
                    "digits, spaces and _.+-, or a tl dtype)")


def param_defaults(fn: Any) -> dict[str, ConstValue | str]:
    """Parameter name -> its Python default as a constexpr value, or why it cannot be one
    (binding.bind's `defaults`)."""
    out: dict[str, ConstValue | str] = {}
    for p in fn.params:
        if not p.has_default:
            continue
        try:
            out[p.name] = python_const(p.default, f"the default of {p.name!r}")
        except UserError as e:
            out[p.name] = e.message.partition(" is ")[2] or e.message
    return out


# --------------------------------------------------------------------------- heuristics


class Undecided(Exception):
    """A heuristic needed a value only known at run time; `expr` says which."""

    def __init__(self, expr: str):
        super().__init__(expr)
        self.expr = expr


def _short(expr: str) -> str:
    return expr if len(expr) <= 60 else expr[:57] + "..."


class RuntimeValue:
    """A run-time argument as a heuristic sees it at build time: only its hint facts.

    `divisor`: the integer is a multiple of it (16 with a `:16` hint, 1 without one); None for
    non-integers (floats, pointers). Arithmetic keeps what stays known (`n * 2` is a multiple of
    32, `n + 16` of 16) and `n % d` is 0 when d divides the divisor; anything whose value would
    decide something (a comparison used as a bool, int(), an attribute) raises Undecided.
    """

    def __init__(self, expr: str, divisor: int | None):
        self._expr = expr
        self._divisor = divisor

    # -- what stays known
    def _combine(self, other: Any, op: str, divisor: int | None) -> "RuntimeValue":
        text = other._expr if isinstance(other, RuntimeValue) else repr(other)
        return RuntimeValue(f"({self._expr} {op} {text})", divisor)

    @staticmethod
    def _int_divisor(x: Any) -> int | None:
        if isinstance(x, RuntimeValue):
            return x._divisor
        if isinstance(x, int) and not isinstance(x, bool):
            return abs(x)  # 0 is a multiple of everything: gcd(d, 0) == d
        return None

    def __mod__(self, other: Any) -> Any:
        d = self._divisor
        if (d is not None and isinstance(other, int) and not isinstance(other, bool)
                and other > 0 and d % other == 0):
            return 0
        return self._combine(other, "%", None)

    def __add__(self, other: Any) -> "RuntimeValue":
        a, b = self._divisor, self._int_divisor(other)
        return self._combine(other, "+", math.gcd(a, b) if a is not None and b is not None
                             else None)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "RuntimeValue":
        return self.__add__(other)._renamed(f"({self._expr} - {_text(other)})")

    def __rsub__(self, other: Any) -> "RuntimeValue":
        return self.__add__(other)._renamed(f"({_text(other)} - {self._expr})")

    def __mul__(self, other: Any) -> "RuntimeValue":
        a, b = self._divisor, self._int_divisor(other)
        return self._combine(other, "*", a * b if a is not None and b is not None else None)

    __rmul__ = __mul__

    def __neg__(self) -> "RuntimeValue":
        return RuntimeValue(f"-{self._expr}", self._divisor)

    def _renamed(self, expr: str) -> "RuntimeValue":
        return RuntimeValue(expr, self._divisor)

    # -- what is unknown: the result is unknown too, and deciding on it is refused
    def _unknown(op: str, reflected: bool = False):  # noqa: N805 (a method factory)
        def method(self, other: Any = None) -> "RuntimeValue":
            left, right = (_text(other), self._expr) if reflected else (self._expr, _text(other))
            return RuntimeValue(f"({left} {op} {right})", None)
        return method

    # A run-time argument is never None (None is a build-time value: a None entry is the
    # constexpr None), so comparing one with None is decided.
    def __eq__(self, other: Any) -> Any:
        if other is None:
            return False
        return RuntimeValue(f"({self._expr} == {_text(other)})", None)

    def __ne__(self, other: Any) -> Any:
        if other is None:
            return True
        return RuntimeValue(f"({self._expr} != {_text(other)})", None)

    __floordiv__ = _unknown("//")
    __rfloordiv__ = _unknown("//", True)
    __truediv__ = _unknown("/")
    __rtruediv__ = _unknown("/", True)
    __rmod__ = _unknown("%", True)
    __pow__ = _unknown("**")
    __lshift__ = _unknown("<<")
    __rshift__ = _unknown(">>")
    __and__ = _unknown("&")
    __rand__ = _unknown("&", True)
    __or__ = _unknown("|")
    __ror__ = _unknown("|", True)
    __xor__ = _unknown("^")
    __lt__ = _unknown("<")
    __le__ = _unknown("<=")
    __gt__ = _unknown(">")
    __ge__ = _unknown(">=")
    del _unknown

    def _decide(self, *_: Any) -> Any:
        raise Undecided(_short(self._expr))

    __bool__ = __int__ = __index__ = __float__ = __hash__ = __len__ = __iter__ = _decide

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise Undecided(_short(f"{self._expr}.{name}"))


# Element types: the signature's spelling -> (triton.language dtype name, torch dtype name).
_ELEMENT_TYPES = {
    "i1": ("int1", "bool"), "i8": ("int8", "int8"), "i16": ("int16", "int16"),
    "i32": ("int32", "int32"), "i64": ("int64", "int64"), "u1": ("int1", "bool"),
    "u8": ("uint8", "uint8"), "u16": ("uint16", "uint16"), "u32": ("uint32", "uint32"),
    "u64": ("uint64", "uint64"), "fp16": ("fp16", "float16"), "bf16": ("bf16", "bfloat16"),
    "fp32": ("fp32", "float32"), "fp64": ("fp64", "float64"),
    "fp8e4nv": ("fp8e4nv", "float8_e4m3fn"), "fp8e5": ("fp8e5", "float8_e5m2"),
    "fp8e4b8": ("fp8e4b8", "float8_e4m3fnuz"), "fp8e5b16": ("fp8e5b16", "float8_e5m2fnuz"),
    "fp8e4b15": ("fp8e4b15", ""),
}
_ELEMENT_BYTES = {"i1": 1, "u1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2,
                  "i32": 4, "u32": 4, "fp32": 4, "i64": 8, "u64": 8, "fp64": 8}


class ElementType:
    """A pointer argument's `.dtype` at build time: the signature's element type, equal to the
    triton.language dtype and to the torch dtype of that name (compared by name, so no torch is
    needed)."""

    def __init__(self, canonical: str):
        self.canonical = canonical
        self.tl_name, self.torch_name = _ELEMENT_TYPES.get(canonical, (canonical, ""))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ElementType):
            return other.canonical == self.canonical
        module = type(other).__module__ or ""
        if module.startswith("triton"):
            return getattr(other, "name", None) == self.tl_name
        if module.startswith("torch"):
            return bool(self.torch_name) and str(other) == "torch." + self.torch_name
        return False

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.canonical)

    @property
    def is_floating_point(self) -> bool:
        return self.canonical.startswith(("fp", "bf"))

    @property
    def itemsize(self) -> int:
        if self.canonical not in _ELEMENT_BYTES:
            raise Undecided(f"the size of {self.canonical}")
        return _ELEMENT_BYTES[self.canonical]

    def __repr__(self) -> str:
        return f"torch.{self.torch_name}" if self.torch_name else f"tl.{self.tl_name}"


class PointerValue(RuntimeValue):
    """A pointer (tensor) argument: its element type is known (`.dtype`, `.element_size()`),
    and with a `:16` hint so is `data_ptr() % 16 == 0`; shapes, strides and values are not."""

    def __init__(self, expr: str, element: str, hint: int | None):
        super().__init__(expr, None)
        self._element = element
        self._hint = hint

    @property
    def dtype(self) -> ElementType:
        return ElementType(self._element)

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> RuntimeValue:
        return RuntimeValue(f"{self._expr}.data_ptr()", 16 if self._hint == 16 else 1)


def _text(x: Any) -> str:
    return x._expr if isinstance(x, RuntimeValue) else repr(x)


def heuristic_args(sig: BoundSignature, options: Mapping[str, Any]) -> dict[str, Any]:
    """What a heuristic's `args` holds for this variant: constexprs as their values, run-time
    arguments as RuntimeValues (a `:1` integer is the int 1), and the launch options."""
    args: dict[str, Any] = {}
    for a in sig.args:
        if a.is_constexpr:
            if a.value is not None:  # a deferred one is missing, as in the JIT until it is set
                args[a.name] = python_value(a.value)
        elif a.hint == 1:
            args[a.name] = 1
        elif a.type.is_pointer:
            args[a.name] = PointerValue(a.name, a.type.elem, a.hint)
        elif a.type in ("fp16", "bf16", "fp32", "fp64"):
            args[a.name] = RuntimeValue(a.name, None)
        else:
            args[a.name] = RuntimeValue(a.name, 16 if a.hint == 16 else 1)
    args.update(options)
    return args


@dataclass(frozen=True)
class HeuristicResult:
    constexprs: dict  # name -> ConstValue, for the deferred constexprs
    options: dict  # launch option -> int, those a heuristic set


def apply_heuristics(wrappers: Sequence[Any], sig: BoundSignature, explicit: Iterable[str],
                     options: Mapping[str, Any], kernel_name: str,
                     hints_text: str) -> HeuristicResult:
    """Runs the kernel's @triton.heuristics as the JIT would for this variant.

    `explicit`: constexprs the signature or the algo set; those win (the heuristic is not run,
    so an undecidable heuristic can be overridden by setting its constexpr in the algo).
    """
    explicit = set(explicit)
    params = sig.by_name()
    args = heuristic_args(sig, options)
    constexprs: dict[str, ConstValue] = {}
    new_options: dict[str, int] = {}
    for h in _heuristics(wrappers):
        for name, heur in h.values.items():
            if name in explicit:
                continue
            where = f"@triton.heuristics value {name!r} of kernel {kernel_name!r}"
            param = params.get(name)
            if name not in LAUNCH_OPTIONS and (param is None or not param.is_constexpr):
                what = ("is not a parameter" if param is None else
                        "is a run-time argument (it is in the C API)")
                raise UserError(f"{where}: {name!r} {what}; a heuristic may only set a "
                                "tl.constexpr parameter or num_warps/num_stages/num_ctas/maxnreg")
            try:
                result = heur(dict(args))
                if isinstance(result, RuntimeValue):
                    raise Undecided(_short(result._expr))
            except Undecided as e:
                raise UserError(
                    f"{where} needs the run-time value {e.expr}, which this variant's hints "
                    f"({hints_text or 'none: the generic variant'}) do not decide; set {name} in "
                    f"the algo's constexprs (triton_algo(constexprs = {{\"{name}\": ...}}), then "
                    "used for every call), or give every specialization a hint that decides it "
                    "(e.g. n:16 makes n % 16 == 0 True)") from None
            except UserError:
                raise
            except Exception as e:  # the heuristic's own failure, e.g. a KeyError
                raise UserError(f"{where} failed at build time: {type(e).__name__}: {e}; set "
                                f"{name} in the algo's constexprs instead") from None
            if name in LAUNCH_OPTIONS:
                if isinstance(result, bool) or not isinstance(result, int):
                    raise UserError(f"{where} is {result!r}; {name} must be an int")
                new_options[name] = result
                args[name] = result
                continue
            value = python_const(result, where)
            constexprs[name] = value
            args[name] = python_value(value)
    return HeuristicResult(constexprs, new_options)


# --------------------------------------------------------------------------- autotune


@dataclass(frozen=True)
class AutotuneInfo:
    key: tuple[str, ...]  # the autotuner's `key`: argument names it re-tunes on
    config: int | None  # index of the algo in the autotuner's configs (unpruned), if it is one


def config_values(config: Any, what: str) -> tuple[dict, dict]:
    """(kwargs as {name: ConstValue}, launch options that are set) of a triton.Config."""
    kwargs = {str(k): python_const(v, f"{what} kwarg {k!r}") for k, v in config.kwargs.items()}
    options = {}
    for name in LAUNCH_OPTIONS:
        value = getattr(config, name, None)
        if value is not None:
            options[name] = value
    return kwargs, options


def autotune_info(wrappers: Sequence[Any], sig: BoundSignature,
                  options: Mapping[str, Any]) -> AutotuneInfo | None:
    """The outermost autotuner's key, and which of its configs this variant compiles (the first
    whose kwargs and launch options this variant has), for the variant record."""
    tuners = _autotuners(wrappers)
    if not tuners:
        return None
    tuner = tuners[0]
    values = {a.name: a.value.repr for a in sig.args if a.is_constexpr and a.value is not None}
    index = None
    for i, config in enumerate(tuner.configs):
        try:
            kwargs, opts = config_values(config, f"config {i}")
        except UserError:
            continue
        if (all(values.get(k) == v.repr for k, v in kwargs.items())
                and all(options.get(k) == v for k, v in opts.items())):
            index = i
            break
    return AutotuneInfo(tuple(str(k) for k in tuner.keys), index)


class _NoRunTimeArgs(Mapping):
    """The `named_args` an early_config_prune gets at build time: every read is refused (the
    pruner then needs run-time arguments, and all configs are kept)."""

    def __getitem__(self, key: Any) -> Any:
        raise Undecided(f"named_args[{key!r}]")

    def __iter__(self):
        raise Undecided("named_args")

    def __len__(self) -> int:
        raise Undecided("len(named_args)")

    def __contains__(self, key: Any) -> bool:
        raise Undecided(f"{key!r} in named_args")

    def get(self, key: Any, default: Any = None) -> Any:
        raise Undecided(f"named_args.get({key!r})")


@dataclass(frozen=True)
class TunerConfigs:
    key: tuple[str, ...]
    configs: tuple  # triton.Config objects, after build-time pruning
    all_configs: tuple  # before pruning (what config indexes count)
    note: str  # why pruning was or was not applied ("" when there is no pruner)


def autotune_configs(wrappers: Sequence[Any], kernel_name: str) -> TunerConfigs | None:
    """The outermost autotuner's configs, pruned by its early_config_prune when that runs with
    no run-time arguments; None when the kernel has no @triton.autotune."""
    tuners = _autotuners(wrappers)
    if not tuners:
        return None
    tuner = tuners[0]
    configs = list(tuner.configs)
    note = ""
    prune = getattr(tuner, "early_config_prune", None)
    if prune is not None:
        name = getattr(prune, "__name__", "early_config_prune")
        try:
            pruned = prune(list(configs), _NoRunTimeArgs())
        except Undecided as e:
            note = (f"early_config_prune {name} reads run-time arguments ({e.expr}): all "
                    f"{len(configs)} configs kept")
        except Exception as e:  # e.g. a device query, which fails at build time
            note = (f"early_config_prune {name} cannot run at build time "
                    f"({type(e).__name__}: {_short(str(e))}): all {len(configs)} configs kept")
        else:
            if not pruned:
                raise UserError(f"--kernel_name: the early_config_prune of {kernel_name!r} keeps "
                                "no config; it should return at least one")
            note = f"early_config_prune {name} kept {len(pruned)} of {len(configs)} configs"
            configs = list(pruned)
    if getattr(tuner, "perf_model", None) is not None:
        note += ("; " if note else "") + "perf_model/top_k need run-time arguments: not applied"
    return TunerConfigs(tuple(str(k) for k in tuner.keys), tuple(configs), tuple(tuner.configs),
                        note)
