"""Binds the parsed signature, --hints and --constexprs to the kernel's parameters.

signature.py reads the text; this module needs the kernel (its parameters, their annotations,
defaults and heuristics) and decides, for each parameter, its type, hint and constexpr value:
the `BoundSignature` that the grid, the decorators, the compile and the record use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Mapping, Sequence, Union

from triton_aot.core.arg_type import CONSTEXPR, ArgType
from triton_aot.core.errors import UserError
from triton_aot.core.signature import (SCALAR_TYPES, ConstValue, NameEntry, SigEntry, TypedEntry,
                                       ValueEntry, check_hint, parse_type, tensordesc_c_names,
                                       type_list)


@dataclass(frozen=True)
class ParamInfo:
    """What the binder needs to know about one kernel parameter (from JITFunction.params)."""

    name: str
    is_constexpr: bool
    annotation: str = ""  # Triton-normalised annotation ("i32", "*fp16", "constexpr" or "")


@dataclass(frozen=True)
class BoundArg:
    """One kernel parameter with its specialisation."""

    index: int
    name: str
    type: ArgType  # CONSTEXPR for a constexpr
    hint: int | None = None
    value: ConstValue | None = None  # constexprs only

    def __post_init__(self):
        # a type given as text (a hand-built signature) is parsed here, once
        object.__setattr__(self, "type", parse_type(self.type, f"parameter {self.name!r}"))

    @property
    def is_constexpr(self) -> bool:
        return self.type.is_constexpr

    @property
    def is_one(self) -> bool:
        """Specialised to the value 1 (`:1`): no kernel parameter, the grid sees 1."""
        return self.hint == 1


@dataclass(frozen=True)
class BoundSignature:
    args: tuple[BoundArg, ...]

    def by_name(self) -> dict[str, BoundArg]:
        return {a.name: a for a in self.args}


def _params_text(params: Sequence[ParamInfo]) -> str:
    return ", ".join(p.name + (": tl.constexpr" if p.is_constexpr else "") for p in params)


# Triton's own canonical scalar names, used to compare with parameter annotations.
_TRITON_SCALAR = {"i1": "u1"}


# A Python default that cannot become a constexpr value: why (see `bind`'s `defaults`).
UnusableDefault = str

NONE_VALUE = ConstValue("none", None, "None")


def bind(entries: Sequence[SigEntry], params: Sequence[ParamInfo], hints: Mapping[str, int],
         constexprs: Mapping[str, ConstValue], kernel_name: str,
         defaults: Mapping[str, Union[ConstValue, UnusableDefault]] | None = None,
         deferred: Collection[str] = ()) -> BoundSignature:
    """Matches signature entries, --hints and --constexprs to the kernel's parameters.

    The signature may stop before the last parameters, as a call to the JIT may: each omitted
    parameter then takes, in this order, its --constexprs value, a value a @triton.heuristics
    of the kernel computes (a name in `deferred`: bound with value None here, filled in by
    `with_values` once the heuristic ran), or its Python default (`defaults`: parameter name ->
    the default as a constexpr value, or why it cannot be one). A non-constexpr parameter may
    be omitted only when its default is None, and `None` may be written for any parameter:
    as the JIT does, a None argument is specialised as the constexpr None (it is no argument of
    the compiled kernel, nor of the C API).
    """
    defaults = defaults or {}
    if len(entries) > len(params):
        raise UserError(f"--signature has {len(entries)} entries but kernel {kernel_name!r} has "
                        f"{len(params)} parameters: ({_params_text(params)}); give exactly one "
                        "entry per parameter")
    names = [p.name for p in params]
    for flag, given in (("hints", hints), ("constexprs", constexprs)):
        for name in given:
            if name not in names:
                raise UserError(f"--{flag}: {name!r} is not a parameter of {kernel_name!r}; "
                                f"its parameters are ({_params_text(params)})"
                                + ("; remove it from the algo's constexprs (triton_algo("
                                   "constexprs = ...) in `algos`) or fix its spelling"
                                   if flag == "constexprs" else ""))

    # what the signature says is checked first, then what it leaves out
    args = _bind_entries(entries, params, hints, constexprs, kernel_name)
    for i, param in enumerate(params[len(entries):], start=len(entries)):
        args.append(_omitted(i, param, params, len(entries), hints, constexprs, defaults,
                             deferred, kernel_name))
    return BoundSignature(tuple(args))


def _omitted(i: int, param: ParamInfo, params: Sequence[ParamInfo], n_entries: int,
             hints: Mapping[str, int], constexprs: Mapping[str, ConstValue],
             defaults: Mapping[str, Union[ConstValue, UnusableDefault]],
             deferred: Collection[str], kernel_name: str) -> BoundArg:
    """A parameter after the signature's last entry (see `bind`)."""
    where = (f"--signature has {n_entries} entries for the {len(params)} parameters of "
             f"{kernel_name!r} ({_params_text(params)}); the omitted {param.name!r}")
    default = defaults.get(param.name)
    if param.name in hints:
        raise UserError(f"--hints: {param.name!r} is not in --signature (which stops after "
                        f"{n_entries} entries); give its type there")
    if not param.is_constexpr:
        if param.name in constexprs:
            raise UserError(f"--constexprs: {param.name!r} is not tl.constexpr in "
                            f"{kernel_name!r}; remove it from the algo's constexprs (or declare "
                            f"the parameter `{param.name}: tl.constexpr`)")
        if isinstance(default, ConstValue) and default.kind == "none":
            return BoundArg(i, param.name, "constexpr", value=NONE_VALUE)
        raise UserError(f"{where} is not tl.constexpr and has no default None; give it an "
                        "entry (its type, e.g. i32, or None)")
    if param.name in constexprs:
        return BoundArg(i, param.name, "constexpr", value=constexprs[param.name])
    if param.name in deferred:
        return BoundArg(i, param.name, "constexpr", value=None)
    if isinstance(default, ConstValue):
        return BoundArg(i, param.name, "constexpr", value=default)
    if isinstance(default, str):
        raise UserError(f"{where} has the default {default}; set {param.name} in the algo's "
                        "constexprs or give its value in --signature")
    raise UserError(f"{where} is a tl.constexpr without a default, so it has no value; give it "
                    f"an entry, or set it in every algo's constexprs "
                    f"(--constexprs={param.name}=VALUE)")


def with_values(sig: BoundSignature, values: Mapping[str, ConstValue]) -> BoundSignature:
    """`sig` with the deferred constexprs (value None) set from `values`."""
    args = []
    for a in sig.args:
        if a.is_constexpr and a.value is None:
            if a.name not in values:
                raise UserError(f"internal error: constexpr {a.name!r} got no value")
            a = BoundArg(a.index, a.name, "constexpr", value=values[a.name])
        args.append(a)
    return BoundSignature(tuple(args))


def _bind_entries(entries: Sequence[SigEntry], params: Sequence[ParamInfo],
                  hints: Mapping[str, int], constexprs: Mapping[str, ConstValue],
                  kernel_name: str) -> list[BoundArg]:
    """The parameters the signature's entries give."""
    from triton_aot.core.abi import check_c_parameter_name

    args = []
    for i, (entry, param) in enumerate(zip(entries, params)):
        where = f"--signature entry {i + 1} (parameter {param.name!r})"
        if isinstance(entry, ValueEntry) and entry.value.kind == "none" and not param.is_constexpr:
            # the JIT specialises a None argument as the constexpr None, whatever the parameter
            if param.name in hints:
                raise UserError(f"--hints: {param.name!r} is None in --signature; hints apply "
                                "to pointer and integer arguments only")
            if param.name in constexprs:
                raise UserError(f"--constexprs: {param.name!r} is not tl.constexpr in "
                                f"{kernel_name!r}; remove it from the algo's constexprs")
            args.append(BoundArg(i, param.name, CONSTEXPR, value=entry.value))
            continue
        if isinstance(entry, TypedEntry):
            if param.is_constexpr:
                raise UserError(f"{where}: {param.name!r} is tl.constexpr, but the entry is the "
                                f"type {entry.type}; give its value (e.g. 128) or write "
                                f"{param.name} and pass --constexprs={param.name}=VALUE")
            if param.name in constexprs:
                raise UserError(f"--constexprs: {param.name!r} is not tl.constexpr in "
                                f"{kernel_name!r}; remove it from --constexprs (or declare the "
                                f"parameter `{param.name}: tl.constexpr`)")
            check_c_parameter_name(param.name)
            _check_annotation(entry.type, param, where)
            hint = entry.hint
            if param.name in hints:
                flag_hint = hints[param.name]
                if hint is not None and hint != flag_hint:
                    raise UserError(f"--hints: {param.name}:{flag_hint} contradicts the "
                                    f"signature's {entry.type}:{hint}; keep only one")
                check_hint(entry.type, flag_hint, f"--hints {param.name}:{flag_hint}")
                hint = flag_hint
            args.append(BoundArg(i, param.name, entry.type, hint=hint))
            continue

        if not param.is_constexpr and isinstance(entry, NameEntry) and entry.name != param.name:
            later = [p.name for p in params[i + 1:]]
            if entry.name in later and len(entries) < len(params):
                # the entries are shifted: one meant for an earlier parameter is not there
                raise UserError(
                    f"--signature: an entry is missing: it has {len(entries)} entries for the "
                    f"{len(params)} parameters of {kernel_name!r} ({_params_text(params)}), so "
                    f"entry {i + 1}, {entry.name!r}, lines up with {param.name!r}; add the "
                    f"missing entry (the type of each parameter, in order, up to "
                    f"{entry.name!r})")
            raise UserError(f"{where}: unknown type {entry.name!r}; use {type_list()}")
        if not param.is_constexpr:
            given = entry.value.repr if isinstance(entry, ValueEntry) else entry.name
            raise UserError(f"{where}: {param.name!r} is not tl.constexpr, so it cannot be given "
                            f"the constant {given!r}; give a type such as i32 (i32:1 specialises "
                            f"it to 1), or declare it `{param.name}: tl.constexpr`")
        if param.name in hints:
            raise UserError(f"--hints: {param.name!r} is tl.constexpr; hints apply to pointer "
                            "and integer arguments only")
        if isinstance(entry, ValueEntry):
            if param.name in constexprs:
                raise UserError(f"--constexprs: {param.name!r} already has the value "
                                f"{entry.value.repr} in --signature; give it in one place only "
                                f"(write {param.name} in --signature to take it from "
                                "--constexprs)")
            value = entry.value
        else:
            if entry.name != param.name:
                raise UserError(f"{where}: {entry.name!r} is neither a type nor the parameter's "
                                f"name; write {param.name} (value from --constexprs), a value "
                                f"(a string is quoted: '{entry.name}'), or a type "
                                f"({type_list()})")
            if param.name not in constexprs:
                raise UserError(f"{where}: {param.name} has no value; pass "
                                f"--constexprs={param.name}=VALUE")
            value = constexprs[param.name]
        args.append(BoundArg(i, param.name, CONSTEXPR, value=value))
    _check_tensordesc_names(args, kernel_name)
    return args


def _check_tensordesc_names(args: Sequence["BoundArg"], kernel_name: str) -> None:
    """A descriptor `d` becomes the C parameters d_base, d_shape0, ..., d_stride0, ...: none
    may be another parameter's name."""
    taken = {a.name: a.name for a in args if not a.type.is_tensordesc}
    for a in args:
        if a.type.is_tensordesc:
            for c_name in tensordesc_c_names(a.name, a.type.rank):
                if c_name in taken:
                    raise UserError(f"kernel {kernel_name!r}: tensor descriptor {a.name!r} "
                                    f"becomes the C parameter {c_name!r}, which clashes "
                                    f"with parameter {taken[c_name]!r}; rename one of them")
                taken[c_name] = a.name


def _check_annotation(type_: ArgType, param: ParamInfo, where: str) -> None:
    """A scalar annotation (`n: tl.int64`) fixes the type Triton uses; it must agree."""
    ann = param.annotation
    if not ann or type_.is_pointer or ann.startswith("*") or ann not in {
            _TRITON_SCALAR.get(t, t) for t in SCALAR_TYPES}:
        return
    if _TRITON_SCALAR.get(type_, type_) != ann:
        raise UserError(f"{where}: the kernel annotates {param.name!r} as {ann} but the "
                        f"signature says {type_}; make them agree")
