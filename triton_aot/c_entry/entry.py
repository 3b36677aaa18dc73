"""`python -m triton_aot.c_entry.entry`: a captured launcher's whole call as one C function.

The generator behind `triton_launcher_c_library`. From the launcher's op record (`OP` of
NAME.launcher.bzl, read by triton_aot.c_entry.record: the same record the torch op is
generated from) and the library description of each kernel library it launches
(triton_aot.contract.library), it writes one C file and its header:

    CUresult NAME(CUstream stream, const DLTensor *x, ..., float eps, ...,
                  const DLTensor *out, ..., void *workspace, size_t workspace_bytes);
    CUresult NAME_workspace_size(const DLTensor *x, ..., size_t *bytes);

`NAME` does what the torch op does, with the caller's tensors and memory: it checks every
tensor (device type CUDA, one device, dtype, rank, the record's checks: static sizes, fixed
strides and guards; contiguity; the shape of each output the caller passes; the values fit
their C types; a variant takes them), reads the dynamic sizes off the tensors, binds every
kernel parameter, picks the algo by the record's size conditions, and only then runs every
launch in order on `stream`, intermediates carved from `workspace` (256-byte aligned, at
256-byte aligned offsets; a workspace of 0 bytes may be NULL), the tensors the launcher made
with `torch.zeros` / `torch.full` (the record's `fills`) memset to their constant on `stream`
before the first launch; it returns the first error. Any refusal is CUDA_ERROR_INVALID_VALUE
with nothing launched. The generated C never allocates, prints or exits.
"""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

from absl import flags

from triton_aot.contract import library as library_desc
from triton_aot.core import abi, cli, op_expression, targets
from triton_aot.core.c_syntax import CCode, comment, ident
from triton_aot.core.errors import UserError
from triton_aot.c_entry import expr as entry_expr
from triton_aot.c_entry import record as entry_record
from triton_aot.emit_c.c_render import Templates

# Triton element type -> the DLPack dtype (type code enumerator, bits) a tensor must have.
DL_DTYPES = {
    "fp16": ("kDLFloat", 16),
    "bf16": ("kDLBfloat", 16),
    "fp32": ("kDLFloat", 32),
    "fp64": ("kDLFloat", 64),
    "i8": ("kDLInt", 8),
    "i16": ("kDLInt", 16),
    "i32": ("kDLInt", 32),
    "i64": ("kDLInt", 64),
    "u8": ("kDLUInt", 8),
    "u16": ("kDLUInt", 16),
    "u32": ("kDLUInt", 32),
    "u64": ("kDLUInt", 64),
}
INT_RANGES = abi.C_INT_RANGES
FLOAT_CTYPES = abi.C_FLOAT_TYPES
WORKSPACE_ALIGN = 256
# The stage's own templates (out of //templates, which every Triton action takes).
TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_RANK = 8  # the views' fixed arrays; a launcher's tensors have fewer dimensions
# The entry's own parameters: no tensor or scalar of the launcher may take these names.
_OWN = ("stream", "workspace", "workspace_bytes", "bytes")


@dataclass
class _Tensor:
    name: str  # as the record names it
    var: CCode  # its trt_entry_view
    role: str  # "input", "output" (the caller passes it), "scratch" (workspace)
    element: str  # Triton element type
    shape: list[CCode] = field(default_factory=list)  # outputs, scratch: C expressions
    shape_text: list[str] = field(default_factory=list)
    c_name: CCode = CCode("")  # inputs and outputs: the C parameter


@dataclass
class _Entry:
    """Everything the generated function does, as C lines, in order."""

    inputs: list[_Tensor] = field(default_factory=list)
    outputs: list[_Tensor] = field(default_factory=list)
    scratch: list[_Tensor] = field(default_factory=list)
    scalars: list[tuple[str, str, CCode]] = field(default_factory=list)  # (name, C type, C name)
    prepare: list[str] = field(default_factory=list)  # checks, bindings, shapes, algo choice
    hints: list[str] = field(default_factory=list)  # conditions over pointers, before launching
    launches: list[str] = field(default_factory=list)
    # (tensor, the record's constant, its element's bits over 32 bits): memset before launching
    fills: list[tuple[_Tensor, str, int]] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    contiguous: set[str] = field(default_factory=set)  # inputs that must be contiguous
    needs: dict[str, int] = field(default_factory=dict)  # input -> the rank indices need
    scalar_vars: dict[str, str] = field(default_factory=dict)  # scalar argument -> C local
    name: str = ""  # the C entry's name


def build(name: str, op: dict, libraries: dict[str, library_desc.Library],
          includes: dict[str, str]) -> _Entry:
    """The entry of launcher record `op`; UserError (NoCEntry) when the C cannot run it."""
    record = entry_record.read(op)
    fname = ident(name, "the C entry's name")
    _check_clashes(fname, libraries)
    builder = _Builder(record, libraries, includes, fname, _Entry(name=name))
    builder.arguments()
    for index, launch in enumerate(record.launches):
        builder.launch(index, launch)
    builder.finish()
    return builder.e


def _check_clashes(fname: CCode, libraries: dict[str, library_desc.Library]) -> None:
    """Refuse an entry named like a function of the C API of a library it launches."""
    for lib in libraries.values():
        taken = {f.name for f in lib.functions} | {v.symbol for v in lib.variants} | {
            lib.name, f"load_{lib.name}", f"unload_{lib.name}", f"{lib.name}_get_num_algos",
            f"{lib.name}_get_algo_info"}
        for mine in (fname, f"{fname}_workspace_size"):
            if mine in taken:
                raise UserError(f"the C entry {mine}() would clash with the C API of kernel library "
                            f"{lib.name}: give the C entry another name (attribute 'function')")


@dataclass
class _Call:
    """One launch's call of its library's C function, as its parameters are bound."""

    index: int
    launch: entry_record.LaunchOp
    where: str  # how messages name the launch
    lib: library_desc.Library
    function: library_desc.Function
    params: list[library_desc.Param]  # the function's, less the stream (and the algo id)
    cargs: list[str] = field(default_factory=lambda: ["stream"])
    ints: dict[str, str] = field(default_factory=dict)  # parameter -> the C variable of its value
    pointers: dict[str, _Tensor] = field(default_factory=dict)
    allocated: list[_Tensor] = field(default_factory=list)


class _Builder:
    """Builds an `_Entry` step by step: the launcher's arguments, each launch, the outputs."""

    def __init__(self, record: entry_record.OpRecord, libraries: dict[str, library_desc.Library],
                 includes: dict[str, str], fname: CCode, e: _Entry) -> None:
        self.record, self.libraries, self.includes, self.fname, self.e = (
            record, libraries, includes, fname, e)
        self.names = entry_expr.Names(tensors={}, ranks={}, scalars={})
        self.used_names: set[str] = set(_OWN)
        self.arg_kinds = {a.name: a.kind for a in record.args}
        self.scalar_ctypes: dict[str, set[str]] = {}  # scalar argument -> the C types it binds
        self.tensors: dict[str, _Tensor] = {}  # the inputs, then each allocation in turn
        self.returned: set[tuple[int, str]] = set()
        self.caller_outputs: dict[tuple[int, str], _Tensor] = {}

    def c_param(self, n: str) -> CCode:
        c = CCode(abi.c_param_name(n))
        if c in self.used_names or c == self.fname:
            raise UserError(f"the launcher's argument or output {n!r} is named like another "
                        f"parameter of the C entry ({c}); no C entry can take both")
        self.used_names.add(c)
        return c

    def arguments(self) -> None:
        """The launcher's tensors (the entry's inputs) and scalars, in the record's order."""
        names, record = self.names, self.record
        for a in record.args:
            if a.kind == "Tensor":
                t = _Tensor(a.name, CCode(f"trt_v_{len(names.tensors)}"), "input", "",
                            c_name=self.c_param(a.name))
                names.tensors[a.name] = t.var
                self.e.inputs.append(t)
            else:
                var = CCode(f"trt_s_{len(names.scalars)}")
                names.scalars[a.name] = var
                self.scalar_ctypes[a.name] = set()
        self.tensors = {t.name: t for t in self.e.inputs}
        self.returned = set(record.returns)
        if len(record.launches) == 1:  # the torch op returns its outputs in the C API's order
            self.returned = {(0, p) for p in record.launches[0].outputs}

    def launch(self, index: int, launch: entry_record.LaunchOp) -> None:
        """One launch: its checks, its bound parameters, its algo, what it allocates, its call."""
        call = self._call(index, launch)
        for text in launch.checks:
            cond = entry_expr.to_c(text, self.names, f"{call.where}: checks", boolean=True)
            self.e.prepare.append(f"  if (!{cond}) return CUDA_ERROR_INVALID_VALUE;  /* {comment(text)} */")
        for p in call.params:
            self._param(call, p)
        if launch.algo_choice:
            self._algo_choice(call)
        self._allocations(call)
        self._fills(call)
        c_function = ident(call.function.name, "function")
        self.e.launches.append(f"  trt_r = {c_function}({', '.join(call.cargs)});")
        self.e.launches.append("  if (trt_r != CUDA_SUCCESS) return trt_r;")
        self._hints(call)
        several = len(self.record.launches) > 1
        if index == 0 or several:
            self.e.docs.append(f"{'launch ' + str(index) + ': ' if several else ''}"
                               f"{call.function.name}()"
                               + (", the algo by the sizes" if launch.algo_choice else ""))
        self.e.docs += [f"  refused unless {text}" for text in launch.checks]

    def _call(self, index: int, launch: entry_record.LaunchOp) -> _Call:
        """The launch's library function and parameters, checked against what the record says."""
        where = f"launch {index}" if len(self.record.launches) > 1 else "the op"
        lib = self.libraries.get(launch.lib)
        if lib is None:
            raise UserError(f"{where} names kernel library {launch.lib!r}, which was not given")
        if not targets.BACKENDS[lib.backend].dlpack_entry:
            raise UserError(f"kernel library {lib.name} is a {lib.backend} library; C entries over "
                        "DLPack tensors are CUDA only")
        if self.includes.get(launch.lib) and self.includes[launch.lib] not in self.e.includes:
            self.e.includes.append(self.includes[launch.lib])
        for n in launch.arg_names:
            if n not in self.arg_kinds and n not in self.tensors:
                raise UserError(f"{where} takes {n!r}, which is no argument of the launcher and no "
                            "tensor an earlier launch allocated")
        choice = launch.algo_choice
        kind = "algo" if choice else launch.entry or ("auto" if lib.function("auto") else "default")
        function = lib.function(kind)
        if function is None or not function.params or function.params[0].c_type != "CUstream":
            raise UserError(f"kernel library {lib.name} has no CUDA {kind} entry point")
        params = list(function.params[1:-1] if kind == "algo" else function.params[1:])
        for p in params:
            if p.type is not None and p.type.is_tensordesc:
                raise UserError(f"{lib.name} takes a tensor descriptor ({p.kernel_param}); C entries "
                            "over tensor descriptors are not supported yet")
        pnames = [p.kernel_param or p.name for p in params]
        for key in list(launch.bind) + list(launch.outputs):
            if key not in pnames:
                raise UserError(f"{where}: {key!r} is not a parameter of {function.name}()")
        return _Call(index, launch, where, lib, function, params)

    def _param(self, call: _Call, p: library_desc.Param) -> None:
        """Binds parameter `p`: a pointer to a tensor, an integer or float to an expression."""
        pname = p.kernel_param or p.name
        if p.c_type == "CUdeviceptr":
            self._pointer(call, p, pname)
        elif p.c_type in INT_RANGES or p.c_type in FLOAT_CTYPES or p.c_type == "bool":
            self._scalar(call, p, pname)
        else:
            raise UserError(f"{call.where}: parameter {pname!r} of {call.function.name}() has C type "
                        f"{p.c_type!r}, which C entries do not support yet")

    def _pointer(self, call: _Call, p: library_desc.Param, pname: str) -> None:
        element = p.type.elem if p.type is not None and p.type.is_pointer else None
        if element not in DL_DTYPES:
            raise UserError(f"{call.lib.name}: {pname} has type {p.type!r}, which has no DLPack "
                        "dtype")
        launch, index = call.launch, call.index
        if pname in launch.outputs:
            t = _allocation(launch, index, call.where, pname, element, self.tensors, self.names,
                            (index, pname) in self.returned)
            call.allocated.append(t)
        else:
            t = _bound_tensor(launch, call.where, call.function.name, pname, element, self.tensors)
        call.pointers[pname] = t
        call.cargs.append(f"{t.var}.ptr")

    def _scalar(self, call: _Call, p: library_desc.Param, pname: str) -> None:
        where, e = call.where, self.e
        text = call.launch.bind.get(pname)
        if text is None:
            if pname in self.arg_kinds and self.arg_kinds[pname] != "Tensor":
                text = pname
            else:
                raise UserError(f"{where}: parameter {pname!r} ({p.c_type}) of "
                            f"{call.function.name}() is bound to nothing")
        value = entry_expr.to_c(text, self.names, f"{where}: bind[{pname!r}]")
        var = f"trt_p{call.index}_{len(call.cargs)}"
        if p.c_type in FLOAT_CTYPES:
            e.prepare.append(f"  const double {var} = (double)({value});  /* {comment(pname)} = {comment(text)} */")
            if text.strip() in self.scalar_ctypes:
                self.scalar_ctypes[text.strip()].add(p.c_type)
        else:
            lo, hi = INT_RANGES.get(p.c_type, (0, 1))
            e.prepare.append(f"  const int64_t {var} = {value};  /* {comment(pname)} = {comment(text)} */")
            e.prepare.append(f"  if ({var} < {_i64(lo)} || {var} > {_i64(hi)}) return CUDA_ERROR_INVALID_VALUE;")
            call.ints[pname] = var
        call.cargs.append(f"({p.c_type}){var}")

    def _algo_choice(self, call: _Call) -> None:
        """The algo id: the first of the record's size conditions that holds, else refused."""
        where, prepare = call.where, self.e.prepare
        algo = f"trt_algo{call.index}"
        prepare.append(f"  int {algo} = -1;")
        for i, (text, a) in enumerate(call.launch.algo_choice):
            if a >= len(call.lib.algos):
                raise UserError(f"{where}: algo_choice names algo {a}; {call.lib.name} has "
                            f"{len(call.lib.algos)}")
            cond = "1" if text.strip() == "True" else \
                entry_expr.to_c(text, self.names, f"{where}: algo_choice", boolean=True)
            prepare.append(f"  {'else ' if i else ''}if ({cond}) {algo} = {a};  /* {comment(text)} */")
        prepare.append(f"  if ({algo} < 0) return CUDA_ERROR_INVALID_VALUE;  /* no example call covers these sizes */")
        call.cargs.append(algo)

    def _allocations(self, call: _Call) -> None:
        """The tensors the launch allocates: their shapes, then visible to later launches."""
        for t in call.allocated:
            for d, (cc, text) in enumerate(zip(t.shape, t.shape_text)):
                self.e.prepare.append(f"  {t.var}.shape[{d}] = {cc};  /* {comment(t.name)}: {comment(text)} */")
            self.e.prepare.append(f"  if (!trt_entry_dense(&{t.var}, {len(t.shape)}, {_elem_size(t.element)})) return CUDA_ERROR_INVALID_VALUE;")
            self.tensors[t.name] = t
            self.names.tensors[t.name] = t.var
            self.names.ranks[t.name] = len(t.shape)
            if t.role == "output":
                t.c_name = self.c_param(t.name)
                self.caller_outputs[(call.index, t.name)] = t
            else:
                self.e.scratch.append(t)

    def _fills(self, call: _Call) -> None:
        """The tensors the launch's record fills with a constant (torch.zeros, torch.full)."""
        allocated = {t.name: t for t in call.allocated}
        for pname, text in call.launch.fills.items():
            t = allocated.get(pname)
            if t is None:
                raise UserError(f"{call.where}: fills[{pname!r}]: {pname!r} is not a tensor the "
                                "launch allocates (outputs)")
            self.e.fills.append((t, text, fill_pattern(t.element, text, f"{call.where}: "
                                                                          f"fills[{pname!r}]")))

    def _hints(self, call: _Call) -> None:
        """When no variant is generic, refuse values no variant takes before anything launches."""
        lib, ints, pointers = call.lib, call.ints, call.pointers
        if not (lib.specializations and all(lib.specializations)):
            return
        alternatives = []
        for pattern in lib.specializations:
            parts = []
            for pname, hint in pattern:
                if pname in ints:
                    parts.append(f"({ints[pname]} % 16 == 0)" if hint == 16
                                 else f"({ints[pname]} == 1)")
                elif pname in pointers and pointers[pname].role != "scratch":
                    parts.append(f"({pointers[pname].var}.ptr % 16 == 0)")
            alternatives.append(" && ".join(parts) or "1")
        self.e.hints.append(f"  if (!({' || '.join('(' + a + ')' for a in alternatives)})) "
                            f"return CUDA_ERROR_INVALID_VALUE;  /* no variant of {comment(lib.name)} takes these values */")

    def finish(self) -> None:
        """After every launch: contiguity, the outputs in the C API's order, the scalars."""
        e, record = self.e, self.record
        e.contiguous = self._contiguous()
        for t in e.inputs:
            if not t.element:
                raise UserError(f"tensor argument {t.name!r} is passed to no pointer parameter")
        self._outputs()
        for a in record.args:
            if a.kind == "Tensor":
                continue
            ctypes = self.scalar_ctypes[a.name]
            ctype = "int64_t" if a.kind == "int" else "float" if ctypes == {"float"} else "double"
            e.scalars.append((a.name, ctype, self.c_param(a.name)))
        e.needs = dict(self.names.needs)
        e.scalar_vars = dict(self.names.scalars)

    def _contiguous(self) -> set[str]:
        """The inputs that must be contiguous (torch's rules: contiguous when no stride is read)."""
        contiguous: set[str] = set()
        for launch in self.record.launches:
            if launch.contiguous is None:
                read = {n for n in self.tensors if f"{n}.stride(" in " ".join(launch.bind.values())}
                contiguous |= {a for a in launch.arg_names if a not in read}
            else:
                contiguous |= set(launch.contiguous)
        return contiguous

    def _outputs(self) -> None:
        """The outputs the caller passes, in the order the launcher returns them."""
        record, caller_outputs = self.record, self.caller_outputs
        order = {(i, p): k for k, (i, p) in enumerate(record.returns)}
        if len(record.launches) == 1:
            lib0 = self.libraries[record.launches[0].lib]
            fn_params = [p.kernel_param or p.name for f in lib0.functions[:1] for p in f.params]
            order = {(0, p): fn_params.index(p) for p in record.launches[0].outputs}
        for key in sorted(caller_outputs, key=lambda k: order.get(k, 1 << 30)):
            if key not in order:
                raise UserError(f"the launcher returns no {key[1]!r} of launch {key[0]}")
            self.e.outputs.append(caller_outputs[key])
        for (i, pname) in record.returns:
            if (i, pname) not in caller_outputs:
                raise UserError(f"returns: launch {i} allocates no {pname!r}")


def _allocation(launch, index, where, pname, element, tensors, names, returned) -> "_Tensor":
    """The tensor a launch allocates for `pname`, its shape over what the launch sees."""
    text = launch.outputs[pname].strip()
    if text.endswith(".shape") and text[:-6] in tensors and tensors[text[:-6]].role != "input":
        like = tensors[text[:-6]]
        dims = [f"{like.name}.size({d})" for d in range(len(like.shape))]
    elif text.endswith(".shape"):
        raise UserError(f"{where}: outputs[{pname!r}] = {text!r}: an output shaped like an input of "
                    "any rank is not supported by C entries yet")
    else:
        dims = op_expression.split_top(text)
    if not dims or len(dims) > MAX_RANK:
        raise UserError(f"{where}: outputs[{pname!r}] must have 1 to {MAX_RANK} dimensions")
    t = _Tensor(pname, CCode(f"trt_v_{len(names.tensors)}_{pname}"),
                "output" if returned else "scratch", element, shape_text=dims)
    t.shape = [entry_expr.to_c(d, names, f"{where}: outputs[{pname!r}]") for d in dims]
    return t


def _bound_tensor(launch, where, function, pname, element, tensors) -> "_Tensor":
    """The tensor bound to pointer parameter `pname` (by `bind`, else by its name), typed."""
    target = launch.bind.get(pname)
    if target is None:
        base = pname
        for suffix in ("_ptr", "_PTR", "Ptr", "_p"):
            if pname.endswith(suffix):
                base = pname[: -len(suffix)]
                break
        target = pname if pname in tensors else base if base in tensors else None
    if target is None or target not in tensors:
        raise UserError(f"{where}: pointer parameter {pname!r} of {function}() is bound to no "
                    f"tensor ({target!r})")
    t = tensors[target]
    if t.role == "input" and not t.element:
        t.element = element
    if t.element != element:
        raise UserError(f"{where}: tensor {target!r} is *{t.element}, passed as *{element}")
    return t


# The largest finite value of each float element type: torch refuses to fill beyond it.
_FLOAT_MAX = {"fp16": 65504.0, "bf16": float.fromhex("0x1.fep127"),
              "fp32": float.fromhex("0x1.fffffep127"), "fp64": float.fromhex("0x1.fffffffffffffp1023")}


def _bf16_bits(f32: int) -> int:
    # c10::BFloat16(float): round to nearest even on the upper 16 bits (finite values only here)
    return ((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16) & 0xFFFF


def fill_pattern(element: str, text: str, where: str) -> int:
    """The 32-bit memset value that writes constant `text` into every `element` of a tensor:
    the element's bits (as torch's fill_ converts the constant: a float through float32 to fp16
    and bf16, toward zero to an integer type, a negative one wrapping into an unsigned type)
    repeated over 32 bits. NoCEntry (one line) when torch could not fill it or no 32-bit
    pattern writes it (an 8-byte element whose halves differ)."""
    def refuse(why: str) -> entry_record.NoCEntry:
        return entry_record.refuse(f"{where} = {text!r} ({why})")

    try:
        value = float(text)
    except ValueError:
        raise refuse("not a number") from None
    if not math.isfinite(value):
        raise refuse("not a finite number")
    code, bits = DL_DTYPES[element]
    if code in ("kDLFloat", "kDLBfloat"):
        if abs(value) > _FLOAT_MAX[element]:
            raise refuse(f"beyond the largest {element}")
        if element == "fp64":
            pattern = struct.unpack("<Q", struct.pack("<d", value))[0]
        else:  # torch's Half and BFloat16 are made from a float
            f32 = struct.unpack("<f", struct.pack("<f", value))[0]
            f32_bits = struct.unpack("<I", struct.pack("<f", f32))[0]
            pattern = (f32_bits if element == "fp32" else _bf16_bits(f32_bits)
                       if element == "bf16" else struct.unpack("<H", struct.pack("<e", f32))[0])
    else:
        n = int(value)  # toward zero, as a C cast
        lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if code == "kDLInt" else
                  (-((1 << bits) - 1), (1 << bits) - 1))
        if not lo <= n <= hi:
            raise refuse(f"out of the range of {element}")
        pattern = n & ((1 << bits) - 1)
    if bits == 64:
        if pattern >> 32 != pattern & 0xFFFFFFFF:
            raise refuse(f"its {element} bits 0x{pattern:016x} are no 32-bit pattern repeated, "
                         "which a memset cannot write")
        return pattern & 0xFFFFFFFF
    return {8: pattern * 0x01010101, 16: pattern * 0x00010001, 32: pattern}[bits]


def _i64(v: int) -> str:
    return f"INT64_C({v})" if v >= 0 else f"(-INT64_C({-v}))"


def render(name: str, label: str, e: _Entry, templates: Templates | None = None) -> tuple[str, str]:
    """(C source, header) of the entry `name`."""
    templates = templates or Templates(TEMPLATES)
    fname = ident(name, "the C entry's name")
    contiguous, needs, scalar_vars = e.contiguous, e.needs, e.scalar_vars
    in_params = [f"const DLTensor *{t.c_name}" for t in e.inputs]
    scalar_params = [f"{ctype} {c}" for _, ctype, c in e.scalars]
    out_params = [f"const DLTensor *{t.c_name}" for t in e.outputs]
    run_params = ", ".join(["CUstream stream"] + in_params + scalar_params + out_params +
                           ["void *workspace", "size_t workspace_bytes"])
    size_params = ", ".join(in_params + ["size_t *bytes"])

    body: list[str] = []
    w = body.append
    for t in e.inputs + e.outputs + e.scratch:
        w(f"  trt_entry_view {t.var};")
    w("  int32_t trt_device = -1;")
    w("  CUresult trt_r;")
    for n, var in scalar_vars.items():
        c = next(c for sn, _, c in e.scalars if sn == n)
        w(f"  const double {var} = (double){c};" if next(ct for sn, ct, _ in e.scalars if sn == n)
          != "int64_t" else f"  const int64_t {var} = {c};")
    w("  /* The inputs: device, dtype, rank, contiguity. */")
    for t in e.inputs:
        code, bits = DL_DTYPES[t.element]
        w(f"  trt_r = trt_entry_input({t.c_name}, {code}, {bits}, {needs.get(t.name, 0)}, "
          f"{1 if t.name in contiguous else 0}, &trt_device, &{t.var});")
        w("  if (trt_r != CUDA_SUCCESS) return trt_r;")
    w("  /* Per launch: the record's checks, the kernel arguments, the algo; the shapes of the")
    w("   * tensors it allocates. */")
    body += e.prepare
    w("  /* The workspace: each intermediate at a 256-byte aligned offset. */")
    w("  size_t trt_need = 0;")
    for t in e.scratch:
        w(f"  const size_t trt_off_{t.var} = trt_need;")
        w(f"  trt_need += trt_entry_round({t.var}.bytes);")
    w("  if (bytes != NULL) {")
    w("    *bytes = trt_need;")
    w("    return CUDA_SUCCESS;")
    w("  }")
    w("  /* The outputs the caller passes: device, dtype, shape, contiguous. */")
    for t in e.outputs:
        code, bits = DL_DTYPES[t.element]
        w(f"  trt_r = trt_entry_output({t.c_name}, {code}, {bits}, &trt_device, &{t.var});")
        w("  if (trt_r != CUDA_SUCCESS) return trt_r;")
    body += _carve_lines(e)
    body += e.hints
    body += _fill_lines(e)
    w("  /* Nothing was launched so far: every launch, in order, on the caller's stream. */")
    body += e.launches
    w("  return CUDA_SUCCESS;")

    run_call = ", ".join(["stream"] + [t.c_name for t in e.inputs] + [c for _, _, c in e.scalars] +
                         [t.c_name for t in e.outputs] + ["workspace", "workspace_bytes", "NULL"])
    size_call = ", ".join(["NULL"] + [t.c_name for t in e.inputs] +
                          [("0" if ct == "int64_t" else "0.0") for _, ct, _ in e.scalars] +
                          ["NULL" for _ in e.outputs] + ["NULL", "0", "bytes"])
    includes = "\n".join(f'#include "{comment(i)}"' for i in e.includes)
    if e.fills:  # the memsets through the runtime's driver table (trt_entry_fill)
        includes += '\n#include "trt_runtime.h"\n\n#define TRT_ENTRY_FILLS 1'

    source = templates.render(
        "entry.c.tmpl",
        label=comment(label), header=comment(name + ".h"), includes=CCode(includes), name=fname,
        run_params=CCode(", ".join(["CUstream stream"] + in_params + scalar_params + out_params +
                                   ["void *workspace", "size_t workspace_bytes", "size_t *bytes"])),
        body=CCode("\n".join(body)), params=CCode(run_params), size_params=CCode(size_params),
        run_call=CCode(run_call), size_call=CCode(size_call),
        max_rank=MAX_RANK, align=WORKSPACE_ALIGN)
    header = templates.render(
        "entry.h.tmpl", label=comment(label), name=fname,
        guard=CCode("RULES_TRITON_ENTRY_" + fname.upper() + "_H_"),
        doc=CCode("\n".join(" * " + comment(line) for line in _doc(e))),
        params=CCode(run_params), size_params=CCode(size_params))
    return source, header


def _carve_lines(e: _Entry) -> list[str]:
    """The intermediates carved from the caller's workspace, once it is checked."""
    if not e.scratch:
        return ["  (void)workspace;", "  (void)workspace_bytes;"]
    # A workspace of 0 bytes (every intermediate empty) may be NULL, 0 as the header says:
    # nothing is carved from it, and the empty intermediates' address is never read.
    out = ["  if (trt_need > workspace_bytes || (trt_need != 0 && (workspace == NULL ||",
           f"      (uintptr_t)workspace % {WORKSPACE_ALIGN} != 0))) return CUDA_ERROR_INVALID_VALUE;"]
    return out + [f"  {t.var}.ptr = (CUdeviceptr)(uintptr_t)workspace + trt_off_{t.var};"
                  for t in e.scratch]


def _fill_lines(e: _Entry) -> list[str]:
    """The memsets of the tensors the launcher fills with a constant, and their checks."""
    out = []
    for t, _, _ in e.fills:
        if t.role == "output":  # the memset's unit divides the element (the workspace's: 256)
            out.append(f"  if ({t.var}.ptr % {_elem_size(t.element)} != 0) "
                       "return CUDA_ERROR_INVALID_VALUE;")
    if not e.fills:
        return out
    # After every check, before any launch: a refused call writes nothing; the launches that
    # follow on the same stream see the constants, as the torch op's fill_ before them.
    out += ["  /* Every check passed: the tensors the launcher fills with a constant (torch.zeros,",
            "   * torch.full), memset on the caller's stream before the first launch. */",
            "  {", "    const trt_driver *trt_drv = NULL;"]
    for t, text, p32 in e.fills:
        out.append(f"    trt_r = trt_entry_fill(&trt_drv, stream, {t.var}.ptr, {t.var}.bytes, "
                   f"0x{p32:08x}u);  /* {comment(t.name)} = {comment(text.strip())} "
                   f"({t.element}) */")
        out.append("    if (trt_r != CUDA_SUCCESS) return trt_r;")
    return out + ["  }"]


def _elem_size(element: str) -> int:
    return DL_DTYPES[element][1] // 8


def _doc(e: _Entry) -> list[str]:
    """The header's comment: the tensors' dtypes and shapes, the workspace, what runs."""
    ranks: dict[str, int] = {}
    static: dict[tuple[str, int], str] = {}
    for line in e.docs:
        m = re.fullmatch(r"  refused unless (\w+)\.dim\(\) == (\d+)", line)
        if m:
            ranks.setdefault(m.group(1), int(m.group(2)))
        m = re.fullmatch(r"  refused unless (\w+)\.size\((\d+)\) == (\d+)", line)
        if m:
            static.setdefault((m.group(1), int(m.group(2))), m.group(3))
    shapes = {t.name: t.shape_text for t in e.outputs + e.scratch}

    def of_inputs(text: str) -> str:
        # an allocation's size written over the inputs: Partial.size(0) -> q.size(0)
        for _ in range(len(shapes) + 1):
            text = re.sub(r"\b(\w+)\.size\((\d+)\)",
                          lambda m: shapes[m.group(1)][int(m.group(2))]
                          if m.group(1) in shapes else m.group(0), text)
        return text

    lines = ["Inputs (DLPack, on one CUDA device; refused unless as the record says):"]
    for t in e.inputs:
        rank = ranks.get(t.name)
        dims = "" if rank is None else "[" + ", ".join(
            static.get((t.name, d), f"{t.name}.size({d})") for d in range(rank)) + "]"
        lines.append(f"  {t.c_name}: {t.element}{dims}"
                     + (", contiguous" if t.name in e.contiguous else ""))
    for _, ctype, c in e.scalars:
        lines.append(f"  {c}: {ctype}")
    lines.append("Outputs the caller allocates (contiguous, on the inputs' device):")
    for t in e.outputs:
        lines.append(f"  {t.c_name}: {t.element}[{', '.join(of_inputs(d) for d in t.shape_text)}]")
    if not e.outputs:
        lines.append("  none: the launcher writes into its inputs")
    lines.append(f"Workspace ({e.name}_workspace_size() bytes, {WORKSPACE_ALIGN}-byte aligned):")
    for t in e.scratch:
        lines.append(f"  {t.name}: {t.element}[{', '.join(of_inputs(d) for d in t.shape_text)}]")
    if not e.scratch:
        lines.append("  none: pass NULL, 0")
    lines.append("What it runs, in order, after every check below has passed:")
    if e.fills:
        lines.append("memsets on `stream` (the launcher's torch.zeros / torch.full), empty tensors "
                     "skipped:")
        lines += [f"  {t.name} = {text.strip()}" for t, text, _ in e.fills]
    lines += e.docs
    return lines


# --- tool -----------------------------------------------------------------------------------


def define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("op", None, "The launcher's op record (JSON: OP of NAME.launcher.bzl).",
                        flag_values=fv)
    flags.DEFINE_multi_string("library", [], "LIB=PATH: the library description of the kernel "
                              "library the record names LIB.", flag_values=fv)
    flags.DEFINE_multi_string("include", [], "LIB=PATH: how the C includes LIB's header.",
                              flag_values=fv)
    flags.DEFINE_string("function", None, "The C entry's name.", flag_values=fv)
    flags.DEFINE_string("target", "", "The Bazel target, for messages.", flag_values=fv)
    flags.DEFINE_string("out_c", None, "The C source to write.", flag_values=fv)
    flags.DEFINE_string("out_h", None, "The header to write.", flag_values=fv)


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for v in values:
        key, sep, value = v.partition("=")
        if not sep:
            raise UserError(f"--{flag}: {v!r} is not LIB=PATH")
        out[key] = value
    return out


def _run(fv: flags.FlagValues, _: list[str]) -> None:
    cli.require(fv, "op", "function", "out_c", "out_h")
    try:
        op = json.loads(Path(fv.op).read_text())
        libraries = {k: library_desc.read_library(v)
                     for k, v in _pairs(fv.library, "library").items()}
        entry = build(fv.function, op, libraries, _pairs(fv.include, "include"))
        source, header = render(fv.function, fv.target, entry)
    except UserError as e:
        raise UserError(f"{fv.target}: {e.message}" if fv.target else e.message) from None
    Path(fv.out_c).write_text(source)
    Path(fv.out_h).write_text(header)


TOOL = cli.Tool(module="triton_aot.c_entry.entry",
                usage="python -m triton_aot.c_entry.entry --op=OP.json --library=LIB=D.json "
                      "--include=LIB=pkg/lib.h --function=NAME --out_c=F.c --out_h=F.h",
                define_flags=define_flags, run=_run)

if __name__ == "__main__":
    sys.exit(cli.main(TOOL))
