"""`python -m triton_aot.torch.torch_ops --plan=P.json --out_cc=F.cc --out_py=F.py`: torch ops.

The generator behind `triton_torch_library`: for each op it reads the kernel library's library
description (triton_aot.contract.library: the C functions `NAME`, `NAME_default`, `NAME_auto`
with their parameters' C and signature types, and the hint pattern of each specialization),
binds every C parameter to an expression over the op's arguments, and writes

- one C++ source that registers every op of the namespace through libtorch's stable ABI
  (`STABLE_TORCH_LIBRARY`, `torch::stable::Tensor`), checks the arguments, allocates the
  outputs and calls the C API on torch's current CUDA stream; it never prints or exits: every
  refusal is one exception whose message names the op and the argument;
- one Python module that loads the shared object and registers the fake (meta) implementations,
  so eager mode, torch.compile and torch.export see ordinary ops.

Argument types: `Tensor`, `int` (`SymInt` in the schema: a size taken from a dynamic dimension
stays symbolic under torch.export and torch.compile), `static int` (`int`: the value is
specialized, for arguments that are never sizes), `float`, `bool`. `entry = "algo"` adds
`int algo_id` after the arguments without a default and before those with one.

The expression language (bindings, output shapes, checks) is Python syntax over the op's
arguments: `a.size(0)`, `a.stride(-1)`, `a.numel()`, `a.dim()`, scalar arguments, integer and
float literals, `+ - * // % ( )`, `cdiv(x, y)`, `min(x, y)`, `max(x, y)`, and in checks
comparisons with `and`, `or`, `not`.

The stage, one job per module: `schema` (arguments and the schema text), `expression` (the
expression language in C++ and Python), `binding` (the C entry point's parameters bound to the
op's arguments: `Op`), `cc` (the C++ source), `fake` (the Python module and its fakes),
`torch_steps` (one op over several launches), `composite` (a launcher's torch work around one
primitive op per launch); this module is the command line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from absl import flags

from triton_aot.contract import op_record
from triton_aot.core import cli
from triton_aot.core.errors import UserError
from triton_aot.torch import cc, composite, fake, torch_steps
from triton_aot.torch.binding import build_op
from triton_aot.torch.schema import IDENT

__all__ = ["build_op", "check_python", "generate", "render_cc", "render_py"]


def _registered(ops: list) -> list:
    """The ops the C++ implements: a composite's primitive ops stand for it."""
    return [p for op in ops
            for p in (op.launches if isinstance(op, composite.CompositeOp) else [op])]


def render_cc(ns: str, label: str, ops: list) -> str:
    """The namespace's C++ source (ops over one launch, or several: torch_steps; a
    composite's schema, implemented in Python, and its primitive ops)."""
    bodies = [torch_steps.render_cc(ns, op) if isinstance(op, torch_steps.StepsOp)
              else cc.cc_op(ns, op) for op in _registered(ops)]
    includes = {inc for op in ops
                for inc in (op.includes if isinstance(op, (torch_steps.StepsOp,
                                                           composite.CompositeOp))
                            else {op.include})}
    defined = [op for op in ops if isinstance(op, composite.CompositeOp)]
    return cc.render_library(ns, label, _registered(ops), bodies, includes, defined)


def render_py(ns: str, label: str, so: str, ops: list) -> str:
    """The op library's Python module."""
    fakes = [torch_steps.render_py_fake(ns, op) if isinstance(op, torch_steps.StepsOp)
             else composite.render_py(ns, op) if isinstance(op, composite.CompositeOp)
             else fake.py_fake(ns, op) for op in ops]
    composites = [op for op in ops if isinstance(op, composite.CompositeOp)]
    if composites:
        fakes[-1] += composite.render_register(composites)
    listed = [p for op in ops for p in ([op] + op.launches if op in composites else [op])]
    return fake.render_module(ns, label, so, listed, fakes)


def _build(o: dict):
    """One op of the plan: its record (triton_aot.contract.op_record) over its libraries."""
    record = op_record.read(o["spec"], f"op {o['name']!r}")
    libs = [part["lib"] for part in o.get("launches") or o.get("steps") or [o]]
    if len(libs) != len(record.launches):
        raise UserError(f"op {o['name']!r}: {len(record.launches)} launches over "
                        f"{len(libs)} libraries")
    if record.form == "composite":
        return composite.build(o["name"], record, libs)
    if record.form == "steps":
        return torch_steps.build(o["name"], record, libs)
    return build_op(o["name"], record.launches[0], libs[0])


def generate(plan: dict) -> tuple[str, str]:
    ns = plan["namespace"]
    if not IDENT.match(ns):
        raise UserError(f"namespace {ns!r} is not an identifier")
    ops = [_build(o) for o in plan["ops"]]
    if not ops:
        raise UserError("ops: a torch library needs at least one op")
    py = render_py(ns, plan["label"], plan["so_name"], ops)
    check_python(py, plan["so_name"])
    return render_cc(ns, plan["label"], ops), py


def check_python(source: str, so_name: str) -> None:
    """Refuses to write a module Python cannot compile: the build fails, not the user's import.

    Every accepted declaration must render valid Python; a module that does not compile is a
    bug of this generator, reported as one line naming the module and the problem.
    """
    module = so_name.removeprefix("lib").removesuffix(".so") + ".py"
    try:
        compile(source, module, "exec")
    except SyntaxError as e:
        line = source.splitlines()[e.lineno - 1].strip() if e.lineno else ""
        raise RuntimeError(f"the generated {module} does not compile (a bug of the generator): "
                           f"line {e.lineno}: {e.msg}: {line}") from None


def define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("plan", None, "JSON: namespace, label, so_name and the ops (spec, library "
                        "description and include path).", flag_values=fv)
    flags.DEFINE_string("out_cc", None, "The C++ source to write.", flag_values=fv)
    flags.DEFINE_string("out_py", None, "The Python module to write.", flag_values=fv)


def _run(fv: flags.FlagValues, _: list[str]) -> None:
    cli.require(fv, "plan", "out_cc", "out_py")
    plan = json.loads(Path(fv.plan).read_text())
    try:
        cc, py = generate(plan)
    except UserError as e:
        raise UserError(f"{plan.get('label', '')}: {e.message}") from None
    Path(fv.out_cc).write_text(cc)
    Path(fv.out_py).write_text(py)


TOOL = cli.Tool(module="triton_aot.torch.torch_ops",
                usage="python -m triton_aot.torch.torch_ops --plan=P.json --out_cc=F.cc --out_py=F.py",
                define_flags=define_flags, run=_run)

if __name__ == "__main__":
    sys.exit(cli.main(TOOL))

