"""`triton_torch_library`: triton_kernel_library entry points as torch ops (no JIT at run time).

`triton_torch_op` describes one op (its tensor-level arguments and how each C parameter is
derived from them); the `triton_torch_library` macro collects the kernel libraries the ops
name and calls the rule, which generates (TritonTorchOps) one C++ source registering every op
through libtorch's stable ABI and a Python module registering their fake implementations,
compiles the C++ into lib<name>.so and provides the module as a Python library.
"""

load("@rules_cc//cc:find_cc_toolchain.bzl", "use_cc_toolchain")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("@rules_python//python:defs.bzl", "PyInfo")
load("//rules/private:providers.bzl", "TritonKernelInfo", "TritonTorchLibraryInfo")
load("//rules/private:toolchain_type.bzl", "find_triton_exec_toolchain", "triton_exec_groups")
load("//rules/private/actions:torch_actions.bzl", "compile_torch_op_library", "generate_torch_ops")

_ENTRIES = ["", "auto", "default", "algo"]

def triton_torch_op(lib = None, args = [], outputs = {}, bind = {}, checks = [], contiguous = None, mutates = [], entry = "", algo_choice = [], steps = [], returns = [], fills = {}, composite = None):
    """Describes one torch op over a `triton_kernel_library`'s C API.

    The op's schema is tensor-level (`matmul(Tensor a, Tensor b) -> Tensor`); every parameter
    of the C entry point is derived from the op's arguments:

    - a pointer parameter is an input tensor (`bind = {"a_ptr": "a"}`; by default the argument
      named like the parameter, or like it without a `_ptr` suffix) or an output the op
      allocates (`outputs`); its element type (`*fp16`) is the tensor's dtype (checked);
    - an integer or float parameter is an expression over the arguments
      (`bind = {"M": "a.size(0)", "stride_am": "a.stride(0)"}`), or the scalar argument of
      the same name.

    Expressions are Python syntax: `x.size(i)`, `x.stride(i)` (negative `i` counts from the
    end), `x.numel()`, `x.dim()`, scalar arguments, literals, `+ - * // % ( )`, `cdiv(a, b)`,
    `min(a, b)`, `max(a, b)`; checks add comparisons, `and`, `or`, `not`.

    Before it launches, the op refuses (one RuntimeError naming the op and the argument): a
    tensor of another dtype than its pointer's, with fewer dimensions than the expressions
    index, not contiguous (tensors in `contiguous`), a failed `checks` entry, a value that does
    not fit its C type (`int32_t`), values no variant of the library was compiled for (the
    specializations' `:16` / `:1` hints: a misaligned pointer when every variant assumes
    `x_ptr:16`), and finally a tensor that is not on CUDA or not on the first tensor's device.

    Args:
      lib: the `triton_kernel_library` (a label string).
      args: the op's arguments in order: `"a"` (a Tensor), `"eps: float"`, `"n: int"`
        (`SymInt` in the schema: a size from a dynamic dimension stays symbolic under
        `torch.export` and `torch.compile`), `"mode: static int"` (`int`: specialized, for
        values that are never sizes), `"flag: bool"`, with an optional default
        (`"eps: float = 1e-6"`); the arguments with a default come last.
      outputs: pointer parameter -> the shape of the tensor the op allocates for it, e.g.
        `{"c_ptr": "a.size(0), b.size(1)"}` (contiguous, on the first tensor's device, the
        pointer's dtype). The op returns them in the C API's order (none: `-> ()`).
      fills: output pointer parameter -> the constant the op fills it with before the call
        (`{"acc_ptr": "0.0"}`, as `torch.zeros` would); the others are left uninitialised.
      bind: C parameter -> expression (see above).
      checks: conditions over the arguments that must hold, e.g. `["a.size(1) == b.size(0)"]`;
        a failed one is refused naming it.
      contiguous: the tensor arguments that must be contiguous; default: those whose strides
        no expression reads (a kernel that takes no stride for a tensor assumes it dense).
      mutates: tensor arguments the kernel writes (`Tensor(a!)` in the schema).
      entry: which C function: `"auto"` (`NAME_auto`, the tuning table's choice; the default
        when the library has `tuning_key`), `"default"` (`NAME_default`, the default
        otherwise), or `"algo"` (`NAME(..., algo_id)`; the op gets a required `int algo_id`
        argument after the arguments without a default, before those with one).
      algo_choice: `[[condition, algo index], ...]`: the op calls `NAME(..., algo_id)` with the
        algo of the first condition that holds, and refuses a call none covers (what a
        captured launcher's size choices become: `triton_launcher_library`).
      steps: instead of `lib`: one op over several launches, run in order: a list of dicts
        with this function's other attributes (`lib`, `args`, `bind`, `outputs`, `checks`,
        ...), each over the op's `args` and the tensors earlier steps allocated (by their
        pointer parameter's name). What a captured launcher with several launches becomes.
      returns: with `steps`: the tensors the op returns, `[[step index, pointer parameter]]`.
      composite: instead of `lib`: a launcher that computes with torch, as
        `triton_launcher_library` captures it (`OP["composite"]`): the aten calls the op
        replays (`graph`, with references to the op's arguments and earlier results), what it
        returns (`result`), its inputs' dtypes, and one primitive op per launch (`launches`:
        dicts of this function's attributes, each over the tensors its kernel gets, registered
        as `NAME__K`). The op is registered CompositeImplicitAutograd in the generated Python
        module: eager mode runs the torch calls and the kernels, and torch.compile,
        torch.export and AOTInductor see aten ops and the primitive kernel ops.

    Returns:
      A string (JSON) for `triton_torch_library`'s `ops`.
    """
    if type(args) != "list":
        fail("triton_torch_op: args must be a list such as [\"a\", \"b\", \"eps: float\"], got {}".format(type(args)))
    for name, value in [("outputs", outputs), ("bind", bind)]:
        if type(value) != "dict":
            fail("triton_torch_op: {} must be a dict of C parameter -> expression, got {}".format(name, type(value)))
    if entry not in _ENTRIES:
        fail("triton_torch_op: entry must be one of \"auto\", \"default\", \"algo\" (or \"\": auto when the library has a tuning table), got {}".format(repr(entry)))
    if composite != None:
        return json.encode({"args": args, "checks": checks, "mutates": mutates, "composite": composite})
    if steps:
        return json.encode({"args": args, "steps": steps, "returns": returns, "mutates": mutates})
    if lib == None:
        fail("triton_torch_op: give lib (or steps)")
    return json.encode({
        "lib": lib,
        "args": args,
        "outputs": outputs,
        "bind": bind,
        "checks": checks,
        "contiguous": contiguous,
        "mutates": mutates,
        "entry": entry,
        "algo_choice": algo_choice,
        "fills": fills,
    })

def _target_version(label, text):
    parts = text.split(".")
    if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
        fail("{}: attribute 'torch_target_version': {} is not MAJOR.MINOR (e.g. \"2.11\")".format(label, repr(text)))
    major, minor = int(parts[0]), int(parts[1])
    if (major, minor) < (2, 10):
        fail("{}: attribute 'torch_target_version': {} is older than 2.10, the first torch whose stable ABI has what the ops use".format(label, text))
    return major, minor

def _include_path(header):
    # "kernels/add.h" for the main repository, without "../repo/" for another one.
    path = header.short_path
    if path.startswith("../"):
        path = path.split("/", 2)[2]
    return path

def _triton_torch_library_impl(ctx):
    label = ctx.label
    toolchain = find_triton_exec_toolchain(ctx)
    by_label = {str(lib.label): lib for lib in ctx.attr.libs}
    ops, inputs = [], []

    def lib_of(op_name, spec):
        lib = by_label.get(spec["lib"])
        if lib == None:
            fail("{}: op '{}' names lib {}, which is not in libs ({})".format(label, op_name, spec["lib"], ", ".join(by_label.keys())))
        info = lib[TritonKernelInfo]
        inputs.append(info.description)
        return {
            "description": info.description.path,
            "include": _include_path(info.header),
        }

    for op_name, text in ctx.attr.ops.items():
        spec = json.decode(text)
        if spec.get("composite"):  # torch work and one primitive op per launch
            ops.append({"name": op_name, "spec": spec, "launches": [
                {"spec": launch, "lib": lib_of(op_name, launch)}
                for launch in spec["composite"]["launches"]
            ]})
            continue
        if spec.get("steps"):  # one op over several launches (triton_launcher_library)
            ops.append({"name": op_name, "spec": spec, "steps": [
                {"spec": step, "lib": lib_of(op_name, step)}
                for step in spec["steps"]
            ]})
            continue
        ops.append({"name": op_name, "spec": spec, "lib": lib_of(op_name, spec)})
    target_version = _target_version(label, ctx.attr.torch_target_version)
    so_name = "lib{}.so".format(label.name)
    plan = ctx.actions.declare_file(label.name + ".torch_ops.json")
    ctx.actions.write(plan, json.encode({
        "namespace": ctx.attr.namespace,
        "label": str(label),
        "so_name": so_name,
        "ops": ops,
    }))
    out_cc = ctx.actions.declare_file(label.name + "_ops.cc")
    out_py = ctx.actions.declare_file(label.name + ".py")
    generate_torch_ops(ctx, toolchain, plan = plan, inputs = inputs, out_cc = out_cc, out_py = out_py)

    headers = ctx.attr._torch_headers[CcInfo]
    compiled = compile_torch_op_library(
        ctx,
        source = out_cc,
        compilation_contexts = [lib[CcInfo].compilation_context for lib in ctx.attr.libs] + [headers.compilation_context],
        linking_contexts = [lib[CcInfo].linking_context for lib in ctx.attr.libs],
        target_version = target_version,
    )

    # cc_common.link names it lib<name>.so, next to the module, which loads it from there.
    shared = compiled
    if shared.basename != so_name or shared.dirname != out_py.dirname:
        fail("{}: the op library is {}, not {} next to {}".format(label, shared.path, so_name, out_py.path))
    files = depset([out_py, shared])
    workspace = ctx.label.workspace_name or ctx.workspace_name
    return [
        DefaultInfo(files = files, runfiles = ctx.runfiles(files = [out_py, shared])),
        PyInfo(transitive_sources = depset([out_py]), imports = depset([workspace])),
        OutputGroupInfo(c_sources = depset([out_cc]), plan = depset([plan])),
        TritonTorchLibraryInfo(
            namespace = ctx.attr.namespace,
            ops = ctx.attr.ops.keys(),
            shared_library = shared,
            module = out_py,
        ),
    ]

_triton_torch_library = rule(
    implementation = _triton_torch_library_impl,
    doc = "The rule behind the `triton_torch_library` macro (which fills `libs` from the ops).",
    attrs = {
        "namespace": attr.string(mandatory = True, doc = "The ops' namespace: `torch.ops.NAMESPACE.OP`."),
        "ops": attr.string_dict(mandatory = True, doc = "op name -> `triton_torch_op(...)`."),
        "libs": attr.label_list(providers = [CcInfo, TritonKernelInfo], doc = "The kernel libraries the ops call."),
        "torch_target_version": attr.string(default = "2.11", doc = "The oldest torch the op library loads in."),
        "_torch_headers": attr.label(default = Label("@rules_triton_torch//:headers"), providers = [CcInfo]),
    },
    toolchains = use_cc_toolchain(),
    exec_groups = triton_exec_groups(),
    fragments = ["cpp"],
    provides = [PyInfo, TritonTorchLibraryInfo],
)

def triton_torch_library(name, namespace, ops, torch_target_version = "2.11", **kwargs):
    """torch ops over `triton_kernel_library` entry points, with no Triton or JIT at run time.

    Builds `lib<name>.so` (the kernel libraries and every op's registration through libtorch's
    stable ABI, compiled with `TORCH_TARGET_VERSION`: one binary for every torch from
    `torch_target_version` on, whatever torch it was built against) and `<name>.py` next to it,
    a Python module that loads it and registers the ops' fake implementations. Depend on the
    target from a `py_binary`/`py_test` and import the module (`from pkg import name`): then
    `torch.ops.NAMESPACE.OP(...)` runs in eager mode, under `torch.compile` (an opaque node,
    no graph break) and in `torch.export` programs. The op calls the C API on torch's current
    CUDA stream of its tensors' device (with that device's primary context current).

        triton_torch_library(
            name = "example_ops",
            namespace = "rules_triton_examples",
            ops = {
                "matmul": triton_torch_op(
                    lib = "//kernels:matmul_tuned",       # NAME_auto: the tuning table's algo
                    args = ["a", "b"],
                    outputs = {"c_ptr": "a.size(0), b.size(1)"},
                    bind = {"M": "a.size(0)", "N": "b.size(1)", "K": "a.size(1)",
                            "stride_am": "a.stride(0)", "stride_ak": "a.stride(1)", ...},
                    checks = ["a.size(1) == b.size(0)"],
                ),
            },
        )

    Output groups: `c_sources` (the generated C++), `plan` (the generator's input).

    Args:
      name: the target; the shared object is `lib<name>.so`, the module `<name>.py`.
      namespace: the ops' namespace (`torch.ops.NAMESPACE.OP`); one library per namespace.
      ops: dict of op name -> `triton_torch_op(...)`.
      torch_target_version: `"MAJOR.MINOR"`, the oldest torch the library must load in
        (default `"2.11"`; at least `"2.10"`).
      **kwargs: common attributes (`visibility`, `tags`, `testonly`, ...).
    """
    libs, resolved = [], {}
    for op_name, text in ops.items():
        spec = json.decode(text)
        parts = spec["composite"]["launches"] if spec.get("composite") else spec.get("steps") or [spec]
        for part in parts:
            lib = native.package_relative_label(part["lib"])
            part["lib"] = str(lib)
            if lib not in libs:
                libs.append(lib)
        resolved[op_name] = json.encode(spec)
    _triton_torch_library(
        name = name,
        namespace = namespace,
        ops = resolved,
        libs = libs,
        torch_target_version = torch_target_version,
        **kwargs
    )
