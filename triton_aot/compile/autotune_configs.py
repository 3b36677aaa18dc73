"""`python -m triton_aot.compile.autotune_configs`: a kernel file's @triton.autotune configs as a .bzl
file of `triton_algo(...)` lists, one per kernel, that a BUILD file loads as its `algos`.

Why a generated file rather than configs read during the build: Bazel fixes the actions of a
target at analysis time, before any Python runs, and one TritonCompile action per (config x
specialization x target) needs the configs then. So the configs are evaluated here, by a build
action whose output a test compares with the committed copy next to the BUILD file, and a
`bazel run` target rewrites it (rules/private/rules/autotune.bzl, docs/design.md).

Configs built by code are evaluated by importing the kernel file, as the JIT would. An
`early_config_prune` is applied when it runs without run-time arguments (it gets a `named_args`
that refuses every read); one that needs them, or a device, keeps every config, and the file
says so in a comment. `perf_model`/`top_k` need run-time arguments and are never applied.

The output is deterministic (configs in the kernel's order, kernels in --kernels order) and
formatted as buildifier formats it. The command-line convention is triton_aot.core.cli's.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

from absl import flags

from triton_aot.compile import environment
from triton_aot.core import cli
from triton_aot.core.atomic_write import write_atomic
from triton_aot.core.build_terms import in_build_terms
from triton_aot.core.errors import UserError

DEFAULT_DEFS = "@rules_triton//rules:defs.bzl"


def define_flags(fv: flags.FlagValues) -> None:
    s = flags.DEFINE_string
    s("kernel_path", None, "Python file defining the autotuned kernels.", flag_values=fv)
    s("kernel_module", None, "Installed module defining the kernels, instead of --kernel_path "
      "(e.g. liger_kernel.ops.dyt).", flag_values=fv)
    s("target", "cuda:90", "The target the kernel file is imported for: what "
      "triton.runtime.driver.active.get_current_target() answers while it is read.",
      flag_values=fv)
    flags.DEFINE_list("kernels", None, "Names of the @triton.autotune kernels in --kernel_path, "
                      "comma separated.", flag_values=fv)
    s("out", None, "Write the .bzl file here.", flag_values=fv)
    s("defs", DEFAULT_DEFS, "The .bzl file the output loads triton_algo from.", flag_values=fv)
    s("bzl_name", None, "The committed file's name, for the docstring's load() line (default: "
      "the name of --out).", flag_values=fv)
    s("update_command", "", "The command that rewrites the committed copy (named in the file's "
      "docstring), e.g. 'bazel run //kernels:matmul_algos.update'.", flag_values=fv)
    flags.DEFINE_multi_string("import_path", [], "Extra sys.path root for imports of the "
                              "kernel file (repeatable).", flag_values=fv)
    environment.define_action_flags(fv)


# --------------------------------------------------------------------------- Starlark text


def _star_string(text: str) -> str:
    """A Starlark string literal; only plain text reaches here (names, checked values)."""
    if any(ch in text for ch in '"\\\n'):
        raise UserError(f"internal error: cannot write {text!r} as a Starlark string")
    return f'"{text}"'


def _star_value(value) -> str:
    """A ConstValue as the Starlark value triton_algo takes."""
    if value.kind == "none":
        return "None"
    if value.kind == "bool":
        return "True" if value.value else "False"
    if value.kind in ("int", "float"):
        return value.repr
    return _star_string(str(value.value))  # a string constexpr, or a dtype "tl.float16"


def render_algo(kwargs: dict, options: dict, comment: str) -> list[str]:
    """One `triton_algo(...)` in buildifier's layout (one argument a line, sorted)."""
    lines = [f"        # {comment}", "        triton_algo("]
    args: list[tuple[str, list[str]]] = []
    if kwargs:
        body = [f"                {_star_string(k)}: {_star_value(v)}," for k, v in kwargs.items()]
        args.append(("constexprs", ["            constexprs = {", *body, "            },"]))
    for name in ("maxnreg", "num_ctas", "num_stages", "num_warps"):
        if name in options and not (name == "num_ctas" and options[name] == 1):
            args.append((name, [f"            {name} = {int(options[name])},"]))
    for _, text in sorted(args):
        lines += text
    lines.append("        ),")
    return lines


def render(file_name: str, kernels: Sequence[tuple[str, Any]], defs: str,
           update_command: str, bzl_name: str) -> str:
    """The .bzl text: `ALGOS = {kernel: [triton_algo(...), ...]}` and `AUTOTUNE_KEYS`."""
    from triton_aot.compile.decorators import config_values
    how = f"`{update_command}`" if update_command else "python -m triton_aot.compile.autotune_configs"
    out = [
        f'"""The @triton.autotune configs of {file_name} as triton_algo lists.',
        "",
        f"Generated by {how}: do not edit. Load it in the BUILD file:",
        f'    load(":{bzl_name}", "ALGOS")',
        f'    triton_kernel_library(..., algos = ALGOS["{kernels[0][0]}"])',
        '"""',
        "",
        f"load({_star_string(defs)}, \"triton_algo\")",
        "",
        "ALGOS = {",
    ]
    keys = []
    for name, tuned in kernels:
        key_text = ", ".join(tuned.key)
        out.append(f"    # {name}: key = [{key_text}]; {len(tuned.configs)} of "
                   f"{len(tuned.all_configs)} configs")
        if tuned.note:
            out.append(f"    # {tuned.note}")
        out.append(f"    {_star_string(name)}: [")
        seen: dict[tuple, int] = {}
        for config in tuned.configs:
            index = next(i for i, c in enumerate(tuned.all_configs) if c is config)
            kwargs, options = config_values(config, f"{name} config {index}")
            identity = (tuple((k, v.repr) for k, v in kwargs.items()),
                        tuple(sorted(options.items())))
            if identity in seen:
                out.append(f"        # config {index} is config {seen[identity]} again: left out")
                continue
            seen[identity] = index
            comment = f"config {index}"
            if getattr(config, "pre_hook", None) is not None:
                comment += " (its pre_hook runs only in the JIT: not here)"
            out += render_algo(kwargs, options, comment)
        out.append("    ],")
        keys.append(f"    {_star_string(name)}: [{', '.join(_star_string(k) for k in tuned.key)}],")
    out.append("}")
    out += ["", "# The autotune `key` of each kernel: the arguments it re-tunes on.",
            "AUTOTUNE_KEYS = {", *keys, "}"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- the work


def run(fv: flags.FlagValues) -> None:
    from pathlib import Path
    from triton_aot.compile import decorators
    from triton_aot.compile.build_env import kernel_for_target
    from triton_aot.compile.kernel_loader import kernel_wrappers
    from triton_aot.compile.triton_adapter import parse_target

    cli.require(fv, "kernels", "out")
    if fv.env_fingerprint:
        environment.check(fv.env_fingerprint)
    if (fv.kernel_path is None) == (fv.kernel_module is None):
        raise UserError("--kernel_path: give the kernel file, or --kernel_module, not both "
                        "and not neither")
    target = parse_target(fv.target)
    names = [n.strip() for n in fv.kernels if n.strip()]
    if not names:
        raise UserError("--kernels is empty; name the @triton.autotune kernels of --kernel_path")
    if len(set(names)) != len(names):
        raise UserError("--kernels: a kernel is named twice; list each once")
    file_name = Path(fv.kernel_path).name if fv.kernel_path else fv.kernel_module
    kernels = []
    for name in names:
        with kernel_for_target(target, fv.kernel_path, name, fv.import_path, fv.kernel_module,
                               fv.bazel_target) as kernel:
            tuned = decorators.autotune_configs(kernel_wrappers(kernel), name)
            if tuned is None:
                raise UserError(f"--kernels: {name!r} in {file_name} has no @triton.autotune; "
                                "list only autotuned kernels (give the others triton_algo(...) "
                                "in BUILD)")
            kernels.append((name, tuned))
    text = render(file_name, kernels, fv.defs, fv.update_command,
                  fv.bzl_name or Path(fv.out).name)
    write_atomic(fv.out, text.encode())


# The flags that a triton_autotune_algos attribute sets (rules/private/rules/autotune.bzl).
FLAG_ATTRIBUTES = {"kernel_path": "srcs", "kernel_module": "kernel_module", "import_path": "deps",
                   "target": "target", "kernels": "kernels", "kernel_name": "kernels"}


def _run(fv: flags.FlagValues, _: list[str]) -> None:
    try:
        run(fv)
    except UserError as e:
        if not fv.bazel_target:
            raise
        # a build's action: the error names the target and its attributes, not this tool's flags
        raise UserError(in_build_terms(e.message, fv.bazel_target, FLAG_ATTRIBUTES,
                                        default="kernels")) from e


TOOL = cli.Tool(
    module="triton_aot.compile.autotune_configs",
    usage="python -m triton_aot.compile.autotune_configs --kernel_path=K.py --kernels=a,b --out=F.bzl",
    define_flags=define_flags,
    run=_run,
)


def main(argv: Optional[Sequence[str]] = None) -> int:
    return cli.main(TOOL, argv)


if __name__ == "__main__":
    sys.exit(main())
