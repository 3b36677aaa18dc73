"""C code generation for rules_triton: variant C/H and dispatcher C/H.

Templates are real files under templates/ (repo root, next to this package), rendered by a tiny
substitution engine: `${name}` inserts a value, `${#list}...${/list}` repeats its body once per item
of a list of dicts (names resolve in the item first, then outside), `$$` is a literal `$`.  The
engine never evaluates anything; every value is made C-safe here before it is inserted (identifiers
are validated, strings escaped, comments sanitised), so metadata cannot inject code.

The template directory can be overridden with the RULES_TRITON_TEMPLATE_DIR environment variable
or the `template_dir` argument (Bazel passes the templates as inputs of the action).

Output is a pure function of the inputs: same metadata + cubin -> same bytes.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

TEMPLATE_DIR_ENV = "RULES_TRITON_TEMPLATE_DIR"
VARIANT_FORMAT = "rules_triton.variant.v1"

# Bytes of cubin per line of the embedded string literal; see tests/link/measure_compile_time.py.
BYTES_PER_LINE = 64


class CodegenError(ValueError):
    """Metadata that cannot be turned into valid C; the message names the offending field."""


# ---------------------------------------------------------------------------------------------
# Template engine

_TOKEN = re.compile(r"\$(?:\$|\{([#/]?)([A-Za-z_][A-Za-z0-9_]*)\})")


def _parse(text: str, name: str):
    """Parses a template into a tree of str | ("var", key) | ("section", key, children)."""
    root: list = []
    stack: list[tuple[str | None, list]] = [(None, root)]
    pos = 0
    for m in _TOKEN.finditer(text):
        stack[-1][1].append(text[pos:m.start()])
        pos = m.end()
        kind, key = m.group(1), m.group(2)
        if m.group(0) == "$$":
            stack[-1][1].append("$")
        elif kind == "#":
            children: list = []
            stack[-1][1].append(("section", key, children))
            stack.append((key, children))
        elif kind == "/":
            if stack[-1][0] != key:
                raise CodegenError(f"template {name}: ${{/{key}}} closes ${{#{stack[-1][0]}}}")
            stack.pop()
        else:
            stack[-1][1].append(("var", key))
    stack[-1][1].append(text[pos:])
    if len(stack) != 1:
        raise CodegenError(f"template {name}: unclosed section ${{#{stack[-1][0]}}}")
    if "${" in "".join(x for x in root if isinstance(x, str)):
        raise CodegenError(f"template {name}: malformed placeholder")
    return root


def _lookup(scopes: Sequence[Mapping[str, Any]], key: str, name: str):
    for scope in reversed(scopes):
        if key in scope:
            return scope[key]
    raise CodegenError(f"template {name}: no value for ${{{key}}}")


def _render_nodes(nodes, scopes, name, out):
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif node[0] == "var":
            value = _lookup(scopes, node[1], name)
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise CodegenError(f"template {name}: ${{{node[1]}}} is {type(value).__name__}")
            out.append(str(value))
        else:
            for item in _lookup(scopes, node[1], name):
                _render_nodes(node[2], [*scopes, item], name, out)


def render_template(text: str, values: Mapping[str, Any], name: str = "<template>") -> str:
    out: list[str] = []
    _render_nodes(_parse(text, name), [values], name, out)
    return "".join(out)


def template_dir(override: str | os.PathLike | None = None) -> Path:
    if override:
        return Path(override)
    env = os.environ.get(TEMPLATE_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "templates"


def load_template(filename: str, override: str | os.PathLike | None = None) -> str:
    path = template_dir(override) / filename
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise CodegenError(f"cannot read template {path}: {e.strerror}") from None


# ---------------------------------------------------------------------------------------------
# C-safe values

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# C11 and C++20 keywords plus names the generated code relies on: a parameter with one of these
# names would not compile or would silently change meaning.
_RESERVED = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class co_await co_return co_yield compl concept const const_cast consteval constexpr
constinit continue decltype default delete do double dynamic_cast else enum explicit export extern
false float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr
operator or or_eq private protected public register reinterpret_cast requires restrict return short
signed sizeof static static_assert static_cast struct switch template this thread_local throw true
try typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
NULL CUresult CUstream CUdeviceptr CUfunction CUmodule CUcontext int8_t int16_t int32_t int64_t
uint8_t uint16_t uint32_t uint64_t uintptr_t size_t main errno
""".split())


def c_identifier(value: Any, what: str) -> str:
    """Validates a name that becomes a C identifier."""
    if not isinstance(value, str) or not _IDENT.match(value):
        raise CodegenError(f"{what} {value!r} is not a valid C identifier")
    if value in _RESERVED:
        raise CodegenError(f"{what} {value!r} is a reserved C/C++ name; rename it")
    if value.lower().startswith("trt_"):
        raise CodegenError(f"{what} {value!r}: the trt_ prefix is reserved for generated code")
    if value.startswith(("CU_", "CUDA_", "RULES_TRITON_")):
        raise CodegenError(f"{what} {value!r}: the CU_/CUDA_ prefixes belong to cuda.h")
    return value


def comment_text(value: Any) -> str:
    """Text safe inside a /* */ comment: one ASCII line that cannot close the comment."""
    text = str(value).encode("ascii", "backslashreplace").decode("ascii")
    text = re.sub(r"[\r\n\t\f\v]+", " ", text)
    return text.replace("*/", "* /").replace("/*", "/ *")


_PRINTABLE = {c: chr(c) for c in range(0x20, 0x7F)}
# Escape the quote and backslash; escape '?' to rule out trigraphs (??=) under -std=c99/-trigraphs.
for _c in b'"\\?':
    del _PRINTABLE[_c]
# Always three octal digits: an octal escape stops after three, so a following digit is safe
# (a \x escape would swallow it).
_ESCAPE = [_PRINTABLE.get(c, "\\%03o" % c) for c in range(256)]


def c_string_literal(data: bytes, indent: str = "    ", bytes_per_line: int = BYTES_PER_LINE) -> str:
    """Bytes as adjacent C string literals, one line per `bytes_per_line` input bytes."""
    if not data:
        return indent + '""'
    esc = _ESCAPE
    lines = []
    for start in range(0, len(data), bytes_per_line):
        chunk = data[start:start + bytes_per_line]
        lines.append(indent + '"' + "".join([esc[b] for b in chunk]) + '"')
    return "\n".join(lines)


def c_string(text: str) -> str:
    """A short text as the inside of a C string literal (ASCII, escaped)."""
    return "".join(_ESCAPE[b] for b in text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# ABI (docs/design.md "C ABI of scalar types")

# Triton type -> (C parameter type, type of the value whose address goes into kernelParams).
_SCALAR_ABI = {
    "i1": ("bool", "int8_t"),  # the kernel takes i1 as one byte; bool's representation is not ours
    "i8": ("int8_t", None),
    "i16": ("int16_t", None),
    "i32": ("int32_t", None),
    "i64": ("int64_t", None),
    "u1": ("uint8_t", None),
    "u8": ("uint8_t", None),
    "u16": ("uint16_t", None),
    "u32": ("uint32_t", None),
    "u64": ("uint64_t", None),
    "fp16": ("uint16_t", None),
    "bf16": ("uint16_t", None),
    "fp32": ("float", None),
    "fp64": ("double", None),
}
_INT_TYPES = frozenset(t for t in _SCALAR_ABI if t[0] in "iu" and t not in ("i1", "u1"))


def arg_ctype(arg: Mapping[str, Any]) -> str:
    ty = arg.get("type")
    if isinstance(ty, str) and ty.startswith("*"):
        ctype = "CUdeviceptr"
    elif ty in _SCALAR_ABI:
        ctype = _SCALAR_ABI[ty][0]
    else:
        raise CodegenError(f"argument {arg.get('name')!r}: unsupported type {ty!r}")
    if arg.get("ctype") not in (None, ctype):
        raise CodegenError(
            f"argument {arg.get('name')!r}: ctype {arg.get('ctype')!r} does not match the ABI "
            f"type {ctype!r} for {ty}")
    return ctype


def _hint(arg: Mapping[str, Any]) -> int | None:
    hint = arg.get("hint")
    if hint is None:
        return None
    ty = arg.get("type")
    is_ptr = isinstance(ty, str) and ty.startswith("*")
    if hint == 16 and (is_ptr or ty in _INT_TYPES):
        return 16
    if hint == 1 and ty in _INT_TYPES:
        return 1
    raise CodegenError(f"argument {arg.get('name')!r}: hint {hint!r} is not valid for type {ty}"
                       " (pointers take :16, integers :16 or :1)")


def runtime_args(meta: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Arguments the dispatcher takes: every non-constexpr argument, :1 ones included."""
    return [a for a in meta["args"] if not a.get("constexpr")]


def kernel_args(meta: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Arguments the variant launcher and the kernel take: non-constexpr, not specialised to 1."""
    return [a for a in runtime_args(meta) if _hint(a) != 1]


def hint_conditions(meta: Mapping[str, Any]) -> list[str]:
    """C conditions under which this variant's hints hold, in argument order."""
    conds = []
    for a in runtime_args(meta):
        hint = _hint(a)
        if hint == 16:
            conds.append(f"({a['name']} % 16 == 0)")
        elif hint == 1:
            conds.append(f"({a['name']} == 1)")
    return conds


def hint_summary(meta: Mapping[str, Any]) -> str:
    parts = []
    for a in runtime_args(meta):
        hint = _hint(a)
        if hint == 16:
            parts.append(f"{a['name']}%16")
        elif hint == 1:
            parts.append(f"{a['name']}==1")
    return " ".join(parts) if parts else "(no hints)"


def _stream_name(args) -> str:
    return "trt_stream" if any(a["name"] == "stream" for a in args) else "stream"


def _param_list(args, stream: str) -> str:
    return ", ".join([f"CUstream {stream}"] + [f"{arg_ctype(a)} {a['name']}" for a in args])


def _check_args(meta: Mapping[str, Any]) -> None:
    seen = set()
    for a in meta["args"]:
        name = a.get("name")
        if not isinstance(name, str) or name in seen:
            raise CodegenError(f"argument name {name!r} is missing or appears twice")
        seen.add(name)
        if not a.get("constexpr"):  # constexprs only ever appear in comments and info strings
            c_identifier(name, "argument name")
            arg_ctype(a)
            _hint(a)


_GRID_EXPR = re.compile(r"^[A-Za-z0-9_ +\-*/%()<>=!&|^~?:,.]+$")
# Assignments and ++/-- would change an argument before it is passed to the kernel.
_SIDE_EFFECT = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)|[-+*/%&|^]=|<<=|>>=")


def _grid_expr(expr: Any, i: int) -> str:
    # grid_c comes from the compile tool; refuse anything that could end the expression or open a
    # comment/preprocessor line, so the template cannot be broken out of.
    if (not isinstance(expr, str) or not _GRID_EXPR.match(expr) or "/*" in expr or "//" in expr
            or "*/" in expr or _SIDE_EFFECT.search(expr)):
        raise CodegenError(f"grid_c[{i}] {expr!r} is not a plain C expression")
    return expr


def _int(meta: Mapping[str, Any], key: str, minimum: int = 0) -> int:
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CodegenError(f"metadata field {key!r} must be an integer >= {minimum}, got {value!r}")
    return value


def _constexpr_summary(meta: Mapping[str, Any]) -> str:
    items = meta.get("constexprs") or {}
    return " ".join(f"{k}={v}" for k, v in items.items()) if items else "(none)"


def algo_info(meta: Mapping[str, Any]) -> str:
    """The NAME_get_algo_info string: constexprs then launch config (non-defaults only for the
    rarer knobs, so the common case reads like upstream's)."""
    parts = [f"{k}={v}" for k, v in (meta.get("constexprs") or {}).items()]
    parts += [f"num_warps={meta['num_warps']}", f"num_stages={meta['num_stages']}"]
    if meta.get("num_ctas", 1) != 1:
        parts.append(f"num_ctas={meta['num_ctas']}")
    if meta.get("launch_cooperative_grid"):
        parts.append("launch_cooperative_grid=1")
    if meta.get("launch_pdl"):
        parts.append("launch_pdl=1")
    return " ".join(parts)


def target_arch(meta: Mapping[str, Any]) -> int:
    target = meta.get("target") or {}
    if target.get("backend") != "cuda":
        raise CodegenError(f"target backend {target.get('backend')!r} is not supported (cuda only)")
    arch = target.get("arch")
    if isinstance(arch, bool) or not isinstance(arch, int) or arch < 10:
        raise CodegenError(f"target arch {arch!r} is not an SM number like 90")
    return arch


# ---------------------------------------------------------------------------------------------
# Variant


def render_variant(meta: dict, cubin: bytes, ptx: str | None, *,
                   template_dir: str | os.PathLike | None = None) -> tuple[str, str]:
    """Renders (C text, H text) for one variant. `ptx` is embedded when given and
    meta["ptx_embedded"] is true; the cubin is always embedded."""
    if meta.get("format") != VARIANT_FORMAT:
        raise CodegenError(f"metadata format {meta.get('format')!r} is not {VARIANT_FORMAT!r}")
    symbol = c_identifier(meta.get("symbol"), "symbol")
    kernel_name = c_identifier(meta.get("kernel_name"), "kernel_name")
    _check_args(meta)
    arch = target_arch(meta)
    warp_size = _int(meta["target"], "warp_size", 1)
    num_warps = _int(meta, "num_warps", 1)
    num_ctas = _int(meta, "num_ctas", 1)
    grid_c = meta.get("grid_c")
    if not isinstance(grid_c, (list, tuple)) or len(grid_c) != 3:
        raise CodegenError(f"grid_c must hold 3 C expressions, got {grid_c!r}")
    grid = [_grid_expr(e, i) for i, e in enumerate(grid_c)]
    if not isinstance(cubin, (bytes, bytearray)) or not cubin:
        raise CodegenError("cubin must be non-empty bytes")
    cubin = bytes(cubin)
    embed_ptx = bool(meta.get("ptx_embedded"))
    if embed_ptx and not ptx:
        raise CodegenError("ptx_embedded is true but no PTX text was given")

    kargs = kernel_args(meta)
    all_names = {a["name"] for a in meta["args"]}
    for suffix in ("_cubin", "_ptx", "_info", "_kernel"):
        if symbol + suffix in all_names:
            raise CodegenError(f"argument {symbol + suffix!r} collides with a generated name")
    stream = _stream_name(kargs)

    # i1 goes to the kernel as one byte: copy bool into an int8_t so its size is 1 by construction.
    locals_, refs = [], []
    for a in kargs:
        if a["type"] in _SCALAR_ABI and _SCALAR_ABI[a["type"]][1]:
            local = f"trt_arg_{a['name']}"
            locals_.append(f"  {_SCALAR_ABI[a['type']][1]} {local} = "
                           f"({_SCALAR_ABI[a['type']][1]})({a['name']} ? 1 : 0);\n")
            refs.append(f"&{local}")
        else:
            refs.append(f"&{a['name']}")
    refs += ["&trt_scratch[0]", "&trt_scratch[1]"]  # global, profile scratch (trt_kernel_launch_in)

    ptx_note = " (+PTX)" if embed_ptx else ""
    if embed_ptx:
        ptx_bytes = ptx.encode("utf-8")
        ptx_definition = (f"/* PTX, {len(ptx_bytes)} bytes: JIT fallback for newer GPUs */\n"
                          f"static const char {symbol}_ptx[{len(ptx_bytes) + 1}] =\n"
                          f"{c_string_literal(ptx_bytes)};")
        ptx_ref = f"{symbol}_ptx"
    else:
        ptx_definition, ptx_ref = "", "NULL"

    visibility = ("" if meta.get("export_symbols") else '__attribute__((visibility("hidden"))) ')
    kernel_file = comment_text(os.path.basename(str(meta.get("kernel_file", "?"))))
    values = {
        "runtime": load_template("runtime.inc", template_dir),
        "symbol": symbol,
        "guard": f"RULES_TRITON_VARIANT_{symbol.upper()}_H_",
        "kernel_name": kernel_name,
        "kernel_file": kernel_file,
        "target_name": f"sm_{arch}",
        "ptx_note": ptx_note,
        "triton_version": comment_text(meta.get("triton_version", "?")),
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
        "constexpr_info": comment_text(_constexpr_summary(meta)),
        "hint_info": comment_text(hint_summary(meta)),
        "num_warps": num_warps,
        "num_stages": _int(meta, "num_stages", 0),
        "num_ctas": num_ctas,
        "shared": _int(meta, "shared"),
        "grid_info": comment_text(", ".join(str(g) for g in meta.get("grid", grid))),
        "visibility": visibility,
        "launcher_params": _param_list(kargs, stream),
        "stream": stream,
        "cubin_size": len(cubin),
        "cubin_array_size": len(cubin) + 1,
        "cubin_literal": c_string_literal(cubin),
        "ptx_definition": ptx_definition,
        "ptx_ref": ptx_ref,
        "arch": arch,
        "block_x": num_warps * warp_size,
        "cooperative": int(bool(meta.get("launch_cooperative_grid"))),
        "pdl": int(bool(meta.get("launch_pdl"))),
        "global_scratch_size": _int(meta, "global_scratch_size"),
        "global_scratch_align": _int(meta, "global_scratch_align", 1),
        "profile_scratch_size": _int(meta, "profile_scratch_size"),
        "profile_scratch_align": _int(meta, "profile_scratch_align", 1),
        "grid_x": grid[0],
        "grid_y": grid[1],
        "grid_z": grid[2],
        "param_locals": "".join(locals_),
        "num_params_plus_2": len(kargs) + 2,
        "param_refs": ", ".join(refs),
        "call_args": ", ".join([stream] + [a["name"] for a in kargs]),
    }
    c_text = render_template(load_template("variant.c.tmpl", template_dir), values, "variant.c.tmpl")
    h_text = render_template(load_template("variant.h.tmpl", template_dir), values, "variant.h.tmpl")
    return c_text, h_text


# ---------------------------------------------------------------------------------------------
# Dispatcher


def render_dispatcher(plan: Mapping[str, Any], *,
                      template_dir: str | os.PathLike | None = None) -> tuple[str, str]:
    """Renders (C text, H text) of the dispatcher from a plan built by triton_aot.link:

        {"name", "header", "kernel_name", "kernel_file",
         "targets": [{"arch": 80, "has_ptx": bool}, ...],             # ascending arch
         "algos": [{"info": str, "variants": [[meta, ...] per target]}]}  # dispatch order
    """
    name = c_identifier(plan["name"], "--name")
    targets = plan["targets"]
    algos = plan["algos"]
    first = algos[0]["variants"][0][0]
    rargs = runtime_args(first)
    stream = _stream_name(rargs)
    algo_name = "trt_algo_id" if any(a["name"] == "algo_id" for a in rargs) else "algo_id"
    params = _param_list(rargs, stream)
    call_args = ", ".join([stream] + [a["name"] for a in rargs])

    variant_items, selector_items, algo_items = [], [], []
    loads_per_target: list[list[str]] = [[] for _ in targets]
    for ai, algo in enumerate(algos):
        selector_names = []
        header_variants = []
        for ti, (target, metas) in enumerate(zip(targets, algo["variants"])):
            fn = f"trt_select_{name}_a{ai}_sm{target['arch']}"
            selector_names.append(fn)
            body, used = [], set()
            for meta in metas:
                symbol = c_identifier(meta["symbol"], "symbol")
                _check_args(meta)
                kargs = kernel_args(meta)
                variant_items.append({
                    "symbol": symbol,
                    "launcher_params": _param_list(kargs, _stream_name(kargs)),
                })
                header_variants.append({"arch": target["arch"], "symbol": symbol,
                                        "hint_info": comment_text(hint_summary(meta))})
                loads_per_target[ti].append(symbol)
                call = (f"trt_dispatch_{symbol}(trt_driver_table, trt_context_key_, "
                        f"{', '.join([stream] + [a['name'] for a in kargs])});")
                used.update(a["name"] for a in kargs)
                conds = hint_conditions(meta)
                used.update(a["name"] for a in runtime_args(meta) if _hint(a) is not None)
                if conds:
                    body.append(f"  if ({' && '.join(conds)})\n    return {call}\n")
                else:
                    body.append(f"  return {call}\n")
                    break  # unconditional: later variants are unreachable (link.py orders them)
            else:
                body.append("  return CUDA_ERROR_INVALID_VALUE; /* no variant's hints hold */\n")
            unused = [f"  (void){a['name']};\n" for a in rargs if a["name"] not in used]
            selector_items.append({"fn": fn, "algo_id": ai, "arch": target["arch"],
                                   "body": "".join(unused + body)})
        algo_items.append({
            "algo_id": ai,
            "info": comment_text(algo["info"]),
            "info_c": c_string(algo["info"]),
            "selector_list": ", ".join(selector_names),
            "variants": header_variants,
        })

    target_items = []
    for ti, t in enumerate(targets):
        target_items.append({
            "arch": t["arch"],
            "has_ptx": int(bool(t["has_ptx"])),
            "ptx_note": " (+PTX fallback)" if t["has_ptx"] else "",
            "load_list": "".join(f"load_{s}, " for s in loads_per_target[ti]),
        })
    values = {
        "runtime": load_template("runtime.inc", template_dir),
        "name": name,
        "guard": f"RULES_TRITON_{name.upper()}_H_",
        "header": c_string(os.path.basename(plan["header"])),
        "kernel_name": c_identifier(plan["kernel_name"], "kernel_name"),
        "kernel_file": comment_text(os.path.basename(str(plan.get("kernel_file", "?")))),
        "num_algos": len(algos),
        "num_targets": len(targets),
        "params": params,
        "param_types": ", ".join(["const trt_driver *", "unsigned long long", "CUstream"]
                                 + [arg_ctype(a) for a in rargs]),
        "call_args": call_args,
        "algo_name": algo_name,
        "variants": variant_items,
        "selectors": selector_items,
        "algos": algo_items,
        "targets": target_items,
        "target_load_lists": ", ".join(f"{name}_load_sm{t['arch']}" for t in targets),
        "unload_list": "".join(f"unload_{v['symbol']}, " for v in variant_items),
    }
    c_text = render_template(load_template("dispatcher.c.tmpl", template_dir), values,
                             "dispatcher.c.tmpl")
    h_text = render_template(load_template("dispatcher.h.tmpl", template_dir), values,
                             "dispatcher.h.tmpl")
    return c_text, h_text
