"""rules_triton ahead-of-time compiler for Triton kernels, in stages (docs/design.md, "Stages"):

    core      errors, the tools' command-line convention, C names, the concept tables, the
              typed target and argument type, the signature and grid grammars; no triton
    contract  what one stage hands the next: the variant record (compile -> link) and the
              library description (link -> torch ops, tuner), with the tuning table format
    compile   one kernel variant from its BUILD attributes (imports triton)
    capture   a declaration taken from a launcher and example calls (imports triton)
    emit_c    the C of a variant and of a library (the link tool)
    tuning    the tuner and the tools around tuning tables
    torch     torch ops over kernel libraries

Each stage is its own py_library and imports only the stages before it, so a Bazel action takes
only the packages its tool imports (an edit to tuning/ or torch/ re-runs no compile).
Importing any of them must stay cheap: triton is imported lazily by the compile modules that
need it, so that flag/signature/grid errors are reported fast.
"""

import sys

# The tools run from Bazel runfiles and sandboxes: never write .pyc files next to sources
# (this package's modules, kernel files, their helpers). Set here because the package is
# imported before any of its modules when run as `python -m triton_aot.<stage>.<tool>`.
sys.dont_write_bytecode = True
