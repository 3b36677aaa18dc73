"""`python3 -m triton_aot.capture.tool`: capture a launcher's launches and write the declaration.

Run by the capture action of `triton_launcher_library` (rules/private/launcher.bzl): imports the
launcher (a function of an installed module or of the rule's srcs), runs it on every example
call with fake tensors (triton_aot.capture.tracer), and writes the record (JSON), the
declaration the BUILD file loads (NAME.launcher.bzl) and the same declaration as explicit
`triton_kernel_library` targets (what `bazel run :NAME_declaration` prints).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from pathlib import Path

from absl import flags

from triton_aot.core import cli
from triton_aot.core.errors import UserError


# The flags that name a file the tool writes (the worker moves them out of its private tree).
OUTPUT_FLAGS = ("out_record", "out_bzl", "out_build")


def _define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("target", None, "The Bazel target, for messages.", flag_values=fv)
    flags.DEFINE_string("launcher_module", None, "Module that defines the launcher.",
                        flag_values=fv)
    flags.DEFINE_string("launcher_path", None, "Or: the file that defines it.", flag_values=fv)
    flags.DEFINE_string("launcher", None, "The launcher function's name.", flag_values=fv)
    flags.DEFINE_multi_string("src", [], "The rule's srcs files (a kernel file elsewhere, in a "
                              "dep, is imported by module name).", flag_values=fv)
    flags.DEFINE_string("package", "", "The target's package (for the printed labels).",
                        flag_values=fv)
    flags.DEFINE_multi_string("print_src", [], "The target's srcs, as labels to print.",
                              flag_values=fv)
    flags.DEFINE_multi_string("print_dep", [], "The target's deps, as labels to print.",
                              flag_values=fv)
    flags.DEFINE_multi_string("import_path", [], "sys.path roots of srcs and deps.",
                              flag_values=fv)
    flags.DEFINE_multi_string("call", [], "An example call (Python call arguments).",
                              flag_values=fv)
    flags.DEFINE_string("sizes", "{}", "JSON: dynamic size name -> example value.",
                        flag_values=fv)
    flags.DEFINE_string("gpu_target", "cuda:90", "The target the driver answers for.",
                        flag_values=fv)
    flags.DEFINE_string("name", None, "The target's name (prefix of the libraries).",
                        flag_values=fv)
    flags.DEFINE_multi_string("targets", [], "The libraries' targets.", flag_values=fv)
    flags.DEFINE_string("out_record", None, "The capture record (JSON).", flag_values=fv)
    flags.DEFINE_string("out_bzl", None, "NAME.launcher.bzl.", flag_values=fv)
    flags.DEFINE_string("out_build", None, "The explicit BUILD text.", flag_values=fv)


def load_launcher(module: str | None, path: str | None, name: str, roots: list[str],
                  what: str):
    from triton_aot.compile import kernel_loader
    sys.path[:0] = [os.path.abspath(r) for r in roots]
    if path:
        module = kernel_loader.import_name(Path(path), [os.path.abspath(r) for r in roots])
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        mod = importlib.import_module(module)
    except UserError:
        raise
    except Exception as e:
        # the line that raised: the launcher file's, or that of a helper module next to it
        # which the launcher imports (not the launcher's `import` line)
        place = kernel_loader.raised_at(e, Path(path)) if path else ""
        if isinstance(e, SyntaxError) and e.lineno:
            place = f"{os.path.basename(e.filename or path or module)}:{e.lineno}"
        raise UserError(f"{what}: attribute 'launcher': importing {module} failed: "
                        f"{type(e).__name__}: {e}" + (f" ({place})" if place else "")) from None
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise UserError(f"{what}: attribute 'launcher': {module} defines no function {name!r}; "
                        "name the Python function that runs kernel[grid](...)")
    return fn


def split_sizes(text: str, what: str) -> tuple[dict[str, int], str]:
    """"[rows=8192] bf16(rows, 64)" -> ({"rows": 8192}, "bf16(rows, 64)"): a call's own
    example values of the dynamic sizes (a launcher that chooses by a dynamic size needs a
    call on each side of the choice)."""
    text = text.strip()
    if not text.startswith("["):
        return {}, text
    head, sep, rest = text[1:].partition("]")
    own = {}
    for item in head.split(","):
        name, eq, value = item.partition("=")
        if not sep or not eq or not value.strip().isdigit():
            raise UserError(f"{what}: example call {text!r}: write its own size values as "
                            "\"[rows=8192] ARGS\"")
        own[name.strip()] = int(value)
    return own, rest.strip()


def _check_sizes_used(shared: dict[str, int], calls: list[str], what: str) -> None:
    """A name of `sizes` that no example call uses would leave the op static where the BUILD
    file says dynamic (a misspelling, or a size the calls write as a number)."""
    for name in shared:
        if not any(re.search(rf"\b{re.escape(name)}\b", split_sizes(c, what)[1]) for c in calls):
            raise UserError(f"{what}: attribute 'sizes': {name!r} is used by no example call in "
                            "`calls`; write it where the calls give that size "
                            f"(e.g. \"bf16({name}, 1024)\"), or remove it from `sizes`")


def capture_launcher(fn, call_texts: list[str], shared: dict[str, int], name: str, what: str,
                     srcs: set[str] | None = None):
    """Runs the launcher `fn` on every example call and returns (calls, declaration, op record).

    Must run inside the build-time driver's answers (build_driver / build_torch_cuda)."""
    from triton_aot.capture import composite, declaration, op, proof, tracer
    from triton_aot.capture.examples import FakeInputs
    from triton_aot.contract import op_record

    if not call_texts:
        raise UserError(f"{what}: attribute 'calls': no example call; give at least one")
    _check_sizes_used(shared, call_texts, what)
    calls, examples = [], []
    for text in call_texts:
        own, text = split_sizes(text, what)
        inputs = FakeInputs(shared | own, what)  # fresh symbols and guards per call
        calls.append(tracer.capture_call(fn, inputs, inputs.parse(text, what), what))
        examples.append((text, shared | own))
    decl = declaration.declare(calls, name, what, srcs)
    # a launcher that computes with torch: a composite of its torch calls and its launches
    declare_op = composite.declare_op if any(c.graph for c in calls) else op.declare_op
    record = op_record.read(declare_op(decl, calls, what), what)

    def capture_static(text: str):
        """The launcher at one call whose sizes are all numbers; None where it fails."""
        inputs = FakeInputs({}, what)
        try:
            return tracer.capture_call(fn, inputs, inputs.parse(text, what), what)
        except UserError:
            return None

    proof.prove(examples, record, decl, what, capture_static, op.renames(calls))
    return calls, decl, record


def _run(fv: flags.FlagValues, rest: list[str]) -> None:
    from triton_aot.compile import build_driver, build_torch_cuda
    from triton_aot.capture import declaration, record
    from triton_aot.compile.triton_adapter import hermetic_env, parse_target

    cli.require(fv, "target", "launcher", "name", "out_record", "out_bzl", "out_build")
    what = fv.target
    target = parse_target(fv.gpu_target)
    answers = (target.backend, target.arch, target.warp_size, f"{what}: attribute 'launcher'")
    with hermetic_env(), build_driver.answering_for(*answers), \
            build_torch_cuda.answering_for(*answers):
        fn = load_launcher(fv.launcher_module, fv.launcher_path, fv.launcher, fv.import_path,
                           what)
        calls, decl, torch_op = capture_launcher(
            fn, fv.call, json.loads(fv.sizes), fv.name, what,
            set(fv.src) if fv.src or fv.launcher_module else None)
    op = torch_op.to_dict()
    Path(fv.out_record).write_text(record.to_json(calls), encoding="utf-8")
    Path(fv.out_bzl).write_text(declaration.bzl_text(decl, what, op), encoding="utf-8")
    build = declaration.build_text(decl, fv.targets, op, fv.name, fv.package,
                                   tuple(fv.print_src), tuple(fv.print_dep))
    Path(fv.out_build).write_text(build, encoding="utf-8")


TOOL = cli.Tool(
    module="triton_aot.capture.tool",
    usage="python3 -m triton_aot.capture.tool --target=//pkg:name --launcher_module=MOD "
          "--launcher=FN --call='bf16(n, 64)' --sizes='{\"n\": 4096}' --name=NAME "
          "--out_record=R.json --out_bzl=NAME.launcher.bzl --out_build=NAME.BUILD",
    define_flags=_define_flags,
    run=_run,
)


def _worker_warm_up(handle):
    """The capture worker's warm-up: torch, Triton and this tool's modules imported once.

    A capture runs the user's launcher, so every request gets a fresh child (no key); what the
    children share is what the tool imports before the launcher."""

    def warm_up() -> int:
        import triton  # noqa: F401

        from triton_aot.compile import worker
        worker.import_torch()
        from triton_aot.capture import composite, declaration, op, record, tracer  # noqa: F401
        return 0

    return warm_up


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--persistent_worker" in argv:
        from triton_aot.compile import worker

        # every capture in a fresh child of a warm process: a launcher's run may leave state
        # in its modules (caches, registries) that a second run in one process would see
        return worker.serve_tool(TOOL.module, argv,
                                 lambda a: cli.run_command_line(TOOL, a, sys.stderr),
                                 _worker_warm_up, None, output_flags=OUTPUT_FLAGS)
    return cli.main(TOOL, argv)


if __name__ == "__main__":
    sys.exit(main())
