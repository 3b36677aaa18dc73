"""`python -m triton_aot.compile.disasm --cubin=F.cubin --out=F.sass`: SASS of a compiled variant.

A separate Bazel action (TritonSass), so the disassembler only runs when the `sass` output group
is asked for. It uses the cuobjdump shipped inside the triton wheel: no CUDA toolkit, no GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

from absl import flags

from triton_aot.core import cli
from triton_aot.core.errors import UserError


def disassemble(cubin: bytes, flag: str = "--cubin") -> str:
    """SASS text of `cubin`; UserError (naming `flag`) when the triton wheel cannot produce it."""
    from triton.tools.disasm import get_sass

    try:
        sass = get_sass(cubin)
    except Exception as e:  # cuobjdump missing or failing: say which, without a traceback
        raise UserError(f"{flag}: disassembling the cubin with the triton wheel's cuobjdump "
                        f"failed: {e}") from e
    if not sass:
        raise UserError(f"{flag}: cuobjdump found no function in the cubin")
    return sass


def define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string("cubin", None, "The cubin to disassemble.", flag_values=fv)
    flags.DEFINE_string("out", None, "Where to write the SASS text.", flag_values=fv)


def _run(fv: flags.FlagValues, _: list[str]) -> None:
    cli.require(fv, "cubin", "out")
    try:
        cubin = Path(fv.cubin).read_bytes()
    except OSError as e:
        raise UserError(f"--cubin: cannot read {fv.cubin}: {e.strerror}") from None
    sass = disassemble(cubin)
    try:
        Path(fv.out).write_text(sass)
    except OSError as e:
        raise UserError(f"--out: cannot write {fv.out}: {e.strerror}") from None


TOOL = cli.Tool(module="triton_aot.compile.disasm",
                usage="python -m triton_aot.compile.disasm --cubin=F.cubin --out=F.sass",
                define_flags=define_flags, run=_run)

if __name__ == "__main__":
    sys.exit(cli.main(TOOL))
