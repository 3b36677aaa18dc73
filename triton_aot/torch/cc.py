"""C++ rendering: one source that registers every op of a namespace through libtorch's
stable ABI (`STABLE_TORCH_LIBRARY`, `torch::stable::Tensor`), checks the arguments, allocates
the outputs and calls the C API on torch's current CUDA stream. It never prints or exits: every
refusal is one exception whose message names the op and the argument.
"""

from __future__ import annotations

import json

from triton_aot.torch.binding import Op
from triton_aot.torch.schema import DTYPES, INT_RANGES, SCALAR_KINDS, schema


def cstr(text: str) -> str:
    return json.dumps(text)


def cc_op(ns: str, op: Op) -> str:
    """The op's C++ function `op_NAME`: checks, bindings, the algo, outputs, the C call."""
    full = f"{ns}::{op.name}"
    L = []
    w = L.append
    n_out = len(op.outputs)
    ret = "void" if n_out == 0 else "Tensor" if n_out == 1 else \
        "std::tuple<" + ", ".join(["Tensor"] * n_out) + ">"
    params = []
    for a in op.args:
        params.append(f"Tensor t_{a.name}" if a.kind == "Tensor" else f"{SCALAR_KINDS[a.kind]} v_{a.name}")
    w(f"// {full}: {schema(op)}; calls {op.entry}().")
    w(f"static {ret} op_{op.name}({', '.join(params)}) {{")
    w(f"  static const char kOp[] = {cstr(full)};")
    tensors = [a.name for a in op.args if a.kind == "Tensor"]
    dtype_of = {}
    for b in op.bindings:
        if b.kind == "tensor":
            dtype_of.setdefault(b.tensor, b.dtype)
    w("  // Every check runs before anything touches a device.")
    for t in tensors:
        tname, enum = DTYPES[dtype_of[t]]
        w(f"  trt_check_tensor(kOp, {cstr(t)}, t_{t}, ScalarType::{enum}, {cstr(tname)}, {op.min_dims.get(t, 0)}, {'true' if t in op.contiguous else 'false'});")
    for cond, text in op.checks:
        w(f"  if (!{cond}) trt_fail(kOp, {cstr('check failed: ' + text)});")
    for b in op.bindings:
        if b.kind == "int":
            lo, hi = INT_RANGES[b.param.ctype]
            w(f"  const int64_t p_{b.param.name} = {b.cc};")
            w(f"  trt_check_range(kOp, {cstr(b.param.name)}, {cstr(b.text)}, p_{b.param.name}, "
              f"INT64_C({lo}), INT64_C({hi}), {cstr(b.param.ctype)});")
        elif b.kind == "float":
            w(f"  const double p_{b.param.name} = static_cast<double>({b.cc});")
    L += _cc_algo(op)
    L += _cc_hints(op)
    L += _cc_call(op, tensors)
    return "\n".join(L)


def _cc_algo(op: Op) -> list[str]:
    """The algo: chosen by the examples' conditions, or the op's algo_id argument."""
    L = []
    w = L.append
    if op.algo_choice:
        w("  int trt_algo = -1;  // the algo the example call of these sizes ran")
        for i, (cc, text, algo) in enumerate(op.algo_choice):
            w(f"  {'else ' if i else ''}if ({cc}) trt_algo = {algo};  // {text}")
        covered = " | ".join(text for _, text, _ in op.algo_choice)
        w(f"  if (trt_algo < 0) trt_fail(kOp, {cstr('no example call of the launcher covers these sizes (' + covered + ')')});")
    if op.algo_arg:
        w(f"  if (v_algo_id < 0 || v_algo_id >= {op.lib}_get_num_algos()) trt_fail(kOp, "
          f"\"argument 'algo_id' is not an algo of {op.lib} (0..\" + std::to_string({op.lib}_get_num_algos() - 1) + \")\");")
    return L


def _cc_hints(op: Op) -> list[str]:
    """A refusal when no variant's hints hold for the arguments."""
    L = []
    w = L.append
    # Hints: the C API launches the first variant whose hints hold; refuse when none does.
    if op.hint_sets and all(op.hint_sets):
        by_param = {b.param.name: b for b in op.bindings}
        conds = []
        for hints in op.hint_sets:
            parts = []
            for pname, hint in hints:
                b = by_param.get(pname)
                if b is None or b.kind == "output":
                    continue  # outputs are fresh allocations (aligned)
                if b.kind == "tensor":
                    parts.append(f"(reinterpret_cast<uintptr_t>(t_{b.tensor}.data_ptr()) % 16 == 0)")
                elif b.kind == "int":
                    parts.append(f"(p_{pname} % 16 == 0)" if hint == 16 else f"(p_{pname} == 1)")
            conds.append(" && ".join(parts) or "true")
        w(f"  if (!({' || '.join('(' + c + ')' for c in conds)})) {{")
        loosest = min(op.hint_sets, key=len)
        w(f"    // No variant of {op.lib} takes these values; name the first hint of the least")
        w("    // specialised variant that fails.")
        for pname, hint in loosest:
            b = by_param.get(pname)
            if b is None or b.kind == "output":
                continue
            every = f"every variant of {op.lib} assumes {pname}:{hint}"
            if b.kind == "tensor":
                w(f"    if (reinterpret_cast<uintptr_t>(t_{b.tensor}.data_ptr()) % 16 != 0) trt_fail(kOp, "
                  f"{cstr(f'argument {b.tensor!r} must be 16-byte aligned ({every}), got address ')} "
                  f"+ trt_hex(t_{b.tensor}.data_ptr()));")
            elif hint == 16:
                w(f"    if (p_{pname} % 16 != 0) trt_fail(kOp, {cstr(f'{pname} = {b.text} must be a multiple of 16 ({every}), got ')} + std::to_string(p_{pname}));")
            else:
                w(f"    if (p_{pname} != 1) trt_fail(kOp, {cstr(f'{pname} = {b.text} must be 1 ({every}), got ')} + std::to_string(p_{pname}));")
        w(f"    trt_fail(kOp, \"no variant of {op.lib} takes these arguments\");")
        w("  }")
    return L


def _cc_call(op: Op, tensors: list[str]) -> list[str]:
    """The device check, the outputs' allocation and the C API call on torch's stream."""
    L = []
    w = L.append
    n_out = len(op.outputs)
    # Device: every tensor on the same CUDA device; the last check.
    first = tensors[0] if tensors else None
    if first is None:
        w("  trt_fail(kOp, \"an op needs at least one tensor argument\");")
    else:
        for t in tensors:
            w(f"  trt_check_cuda(kOp, {cstr(t)}, t_{t}, t_{first});")
        w(f"  const int32_t device = t_{first}.get_device_index();")
        w("  torch::stable::accelerator::DeviceGuard guard(device);")
    for pname, elem, shape in op.outputs:
        if isinstance(shape, str):  # the shape of an input tensor
            w(f"  std::vector<int64_t> shape_{pname};")
            w(f"  for (int64_t i = 0; i < t_{shape}.dim(); ++i) shape_{pname}.push_back(t_{shape}.size(i));")
        else:
            dims = ", ".join(f"static_cast<int64_t>({cc})" for cc, _ in shape)
            w(f"  const std::vector<int64_t> shape_{pname} = {{{dims}}};")
            w(f"  for (int64_t d : shape_{pname}) if (d < 0) trt_fail(kOp, {cstr(f'output {pname!r} would have a negative size')});")
        w(f"  Tensor o_{pname} = torch::stable::new_empty(t_{first}, shape_{pname}, ScalarType::{DTYPES[elem][1]});")
        if pname in op.fills:  # as the launcher's torch.zeros / full did
            w(f"  torch::stable::fill_(o_{pname}, {op.fills[pname]!r});")
    w("  CUstream stream = trt_current_stream(kOp, device);")
    cargs = ["stream"]
    for b in op.bindings:
        if b.kind in ("tensor", "output"):
            prefix = "t_" if b.kind == "tensor" else "o_"
            cargs.append(f"reinterpret_cast<CUdeviceptr>({prefix}{b.tensor}.data_ptr())")
        else:
            cargs.append(f"static_cast<{b.param.ctype}>(p_{b.param.name})")
    if op.algo_arg:
        cargs.append("static_cast<int>(v_algo_id)")
    elif op.algo_choice:
        cargs.append("trt_algo")
    w(f"  trt_check_launch(kOp, {cstr(op.entry)}, {op.entry}({', '.join(cargs)}));")
    if n_out == 1:
        w(f"  return o_{op.outputs[0][0]};")
    elif n_out > 1:
        w(f"  return std::make_tuple({', '.join('o_' + o[0] for o in op.outputs)});")
    w("}")
    return L




CC_PRELUDE = r'''// Generated by rules_triton (python -m triton_aot.torch.torch_ops) for {label}. Do not edit.
//
// torch ops {ns}::* over Triton kernels compiled ahead of time, registered through libtorch's
// stable ABI (built with TORCH_TARGET_VERSION: one binary for every torch since then). Each op
// checks its arguments (dtype, rank, contiguity, the library's hints, one CUDA device), allocates
// its outputs and calls the kernel library's C API on torch's current CUDA stream. Refusals are
// exceptions (RuntimeError in Python) naming the op and the argument; nothing prints or exits.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

{includes}

namespace {{

using torch::stable::Tensor;
using torch::headeronly::ScalarType;

[[noreturn]] void trt_fail(const char* op, const std::string& message) {{
  throw std::runtime_error(std::string(op) + ": " + message);
}}

[[maybe_unused]] std::string trt_hex(const void* p) {{
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  return buf;
}}

[[maybe_unused]] int64_t trt_cdiv(int64_t a, int64_t b) {{ return b == 0 ? 0 : (a + b - 1) / b; }}
[[maybe_unused]] int64_t trt_div(int64_t a, int64_t b) {{ return b == 0 ? 0 : a / b; }}
[[maybe_unused]] int64_t trt_mod(int64_t a, int64_t b) {{ return b == 0 ? 0 : a % b; }}

const char* trt_dtype_name(ScalarType t) {{
  switch (t) {{
{dtype_cases}
    default: return "another dtype";
  }}
}}

void trt_check_tensor(const char* op, const char* name, const Tensor& t, ScalarType dtype,
                      const char* dtype_name, int64_t min_dim, bool contiguous) {{
  if (!t.defined()) trt_fail(op, std::string("argument '") + name + "' is an undefined tensor");
  if (t.scalar_type() != dtype)
    trt_fail(op, std::string("argument '") + name + "' must be " + dtype_name + ", got " +
                     trt_dtype_name(t.scalar_type()));
  if (t.dim() < min_dim)
    trt_fail(op, std::string("argument '") + name + "' must have at least " +
                     std::to_string(min_dim) + " dimension(s), got " + std::to_string(t.dim()));
  if (contiguous && !t.is_contiguous())
    trt_fail(op, std::string("argument '") + name + "' must be contiguous");
}}

void trt_check_range(const char* op, const char* param, const char* text, int64_t v, int64_t lo,
                     int64_t hi, const char* ctype) {{
  if (v < lo || v > hi)
    trt_fail(op, std::string(param) + " = " + text + " = " + std::to_string(v) +
                     " does not fit the kernel's " + ctype);
}}

void trt_check_cuda(const char* op, const char* name, const Tensor& t, const Tensor& first) {{
  if (!t.is_cuda()) {{
    trt_fail(op, std::string("argument '") + name + "' must be a CUDA tensor, got " +
                     (t.is_cpu() ? "a CPU tensor" : "a tensor on another device"));
  }}
  if (t.get_device_index() != first.get_device_index())
    trt_fail(op, std::string("argument '") + name + "' is on cuda:" +
                     std::to_string(t.get_device_index()) + ", the others on cuda:" +
                     std::to_string(first.get_device_index()));
}}

// torch's current CUDA stream, through the AOTI shim of libtorch_cuda (looked up at run time:
// the op library links against no torch library, and a CPU-only torch has no CUDA shim).
using GetStreamFn = int32_t (*)(int32_t, void**);
using CuCtxGetCurrentFn = CUresult (*)(CUcontext*);
using CuCtxGetDeviceFn = CUresult (*)(CUdevice*);
using CuPrimaryCtxRetainFn = CUresult (*)(CUcontext*, CUdevice);
using CuCtxSetCurrentFn = CUresult (*)(CUcontext);
using CuGetErrorNameFn = CUresult (*)(CUresult, const char**);

struct TrtDriver {{
  GetStreamFn get_stream = nullptr;
  CuCtxGetCurrentFn ctx_get_current = nullptr;
  CuCtxGetDeviceFn ctx_get_device = nullptr;
  CuPrimaryCtxRetainFn primary_ctx_retain = nullptr;
  CuCtxSetCurrentFn ctx_set_current = nullptr;
  CuGetErrorNameFn get_error_name = nullptr;
}};

const TrtDriver& trt_driver() {{
  static TrtDriver d;
  static std::once_flag once;
  std::call_once(once, [] {{
    d.get_stream = reinterpret_cast<GetStreamFn>(dlsym(RTLD_DEFAULT, "aoti_torch_get_current_cuda_stream"));
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cuda != nullptr) {{
      d.ctx_get_current = reinterpret_cast<CuCtxGetCurrentFn>(dlsym(cuda, "cuCtxGetCurrent"));
      d.ctx_get_device = reinterpret_cast<CuCtxGetDeviceFn>(dlsym(cuda, "cuCtxGetDevice"));
      d.primary_ctx_retain = reinterpret_cast<CuPrimaryCtxRetainFn>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
      d.ctx_set_current = reinterpret_cast<CuCtxSetCurrentFn>(dlsym(cuda, "cuCtxSetCurrent"));
      d.get_error_name = reinterpret_cast<CuGetErrorNameFn>(dlsym(cuda, "cuGetErrorName"));
    }}
  }});
  return d;
}}

std::string trt_error_name(CUresult r) {{
  const char* name = nullptr;
  const TrtDriver& d = trt_driver();
  if (d.get_error_name == nullptr || d.get_error_name(r, &name) != CUDA_SUCCESS || name == nullptr)
    return "CUresult " + std::to_string(static_cast<int>(r));
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}}

// The stream torch uses on `device`, with that device's primary context current on this thread
// (the context torch's CUDA runtime uses), as the kernel library's C API expects.
CUstream trt_current_stream(const char* op, int32_t device) {{
  const TrtDriver& d = trt_driver();
  if (d.get_stream == nullptr)
    trt_fail(op, "this torch has no CUDA support (aoti_torch_get_current_cuda_stream is missing)");
  if (d.ctx_get_current == nullptr || d.ctx_get_device == nullptr ||
      d.primary_ctx_retain == nullptr || d.ctx_set_current == nullptr)
    trt_fail(op, "cannot open the CUDA driver (libcuda.so.1)");
  void* stream = nullptr;
  if (d.get_stream(device, &stream) != 0)
    trt_fail(op, "torch could not give its current CUDA stream on cuda:" + std::to_string(device));
  CUcontext ctx = nullptr;
  CUdevice current = -1;
  if (d.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr ||
      d.ctx_get_device(&current) != CUDA_SUCCESS || current != device) {{
    CUcontext primary = nullptr;
    CUresult r = d.primary_ctx_retain(&primary, device);
    if (r == CUDA_SUCCESS) r = d.ctx_set_current(primary);
    if (r != CUDA_SUCCESS)
      trt_fail(op, "cannot make cuda:" + std::to_string(device) + "'s primary context current: " +
                       trt_error_name(r));
  }}
  return reinterpret_cast<CUstream>(stream);
}}

void trt_check_launch(const char* op, const char* entry, CUresult r) {{
  if (r != CUDA_SUCCESS) trt_fail(op, std::string(entry) + " failed: " + trt_error_name(r));
}}

'''




def render_library(ns: str, label: str, ops: list, bodies: list[str],
                   includes: set[str], defined: tuple | list = ()) -> str:
    """The namespace's C++ source: the prelude, each op's function (`bodies`, rendered by
    cc_op or by the op over several launches), and the registrations of `ops`; the schemas of
    `defined` (composites, implemented in Python) are only defined."""
    includes = "\n".join(sorted(f'#include "{inc}"' for inc in includes))
    cases = "\n".join(f"    case ScalarType::{enum}: return \"{name}\";" for name, enum in
                      sorted(set(DTYPES.values()), key=lambda v: v[1]))
    out = [CC_PRELUDE.format(label=label, ns=ns, includes=includes, dtype_cases=cases)]
    out += [body + "\n" for body in bodies]
    out.append("}  // namespace\n")
    out.append(f"STABLE_TORCH_LIBRARY({ns}, m) {{")
    out += [f"  m.def({cstr(schema(op))});" for op in list(defined) + ops]
    out.append("}\n")
    # CUDA is the real kernel; CPU and the others refuse with the same checks (a CPU tensor is
    # told it must be CUDA, after the dtype/shape checks, which CPU tests exercise).
    for key in ("CUDA", "CPU"):
        out.append(f"STABLE_TORCH_LIBRARY_IMPL({ns}, {key}, m) {{")
        out += [f"  m.impl({cstr(op.name)}, TORCH_BOX(&op_{op.name}));" for op in ops]
        out.append("}\n")
    return "\n".join(out)


