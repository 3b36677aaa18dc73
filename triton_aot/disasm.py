"""`python -m triton_aot.disasm --cubin=F.cubin --out=F.sass`: SASS of a compiled variant.

A separate Bazel action (TritonSass), so the disassembler only runs when the `sass` output group
is asked for. It uses the cuobjdump shipped inside the triton wheel: no CUDA toolkit, no GPU.
"""
import sys
from pathlib import Path

from absl import app, flags

from triton_aot.errors import UserError



def disassemble(cubin: bytes, flag: str = "--cubin") -> str:
    """SASS text of `cubin`; UserError (naming `flag`) when the triton wheel cannot produce it."""
    from triton.tools.disasm import get_sass

    try:
        sass = get_sass(cubin)
    except Exception as e:  # cuobjdump missing or failing: say which, without a traceback
        raise UserError(f"{flag}: disassembling the cubin with the triton wheel's cuobjdump failed: {e}") from e
    if not sass:
        raise UserError(f"{flag}: cuobjdump found no function in the cubin")
    return sass


def main(argv: list[str]) -> int:
    cubin, out = flags.FLAGS.cubin, flags.FLAGS.out
    if len(argv) > 1:
        print(f"error: unexpected arguments {argv[1:]}; use --cubin and --out", file=sys.stderr)
        return 1
    if not cubin or not out:
        print("error: --cubin and --out are required", file=sys.stderr)
        return 1
    try:
        sass = disassemble(Path(cubin).read_bytes())
    except (UserError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    Path(out).write_text(sass)
    return 0


if __name__ == "__main__":
    # Flags are defined only when run as a program: triton_aot.compiler imports disassemble().
    flags.DEFINE_string("cubin", None, "The cubin to disassemble.")
    flags.DEFINE_string("out", None, "Where to write the SASS text.")
    app.run(main)
