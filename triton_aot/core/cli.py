"""The one command-line convention of every triton_aot tool (compile, link, disasm,
autotune_configs, tune, tuning).

- Flags are absl flags, parsed into a fresh FlagValues per invocation (never the global FLAGS),
  so the persistent worker can run many requests in one process without state leaking.
- Arguments may come from files: `--flagfile=PATH` (absl: one flag per line, `#` comments) or
  `@PATH` (Bazel's param files, "multiline" or "shell" format: one argument per line).
- Every failure is one `error: ...` line on stderr naming the flag, file or input and the fix;
  `--verbose` adds the traceback. `--help` prints the flags.
- Exit codes: 0 success; 1 any error (a `ToolError` the user can fix, or an internal error, which
  says so and asks for --verbose). Nothing else is printed on success.
"""

from __future__ import annotations

import shlex
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO

from absl import flags

from triton_aot.core.errors import ToolError, UserError

EXIT_OK = 0
EXIT_ERROR = 1


@dataclass(frozen=True)
class Tool:
    """One command-line tool: its module name (for messages), its flags and its work."""

    module: str  # "triton_aot.emit_c.link"
    usage: str  # one line
    define_flags: Callable[[flags.FlagValues], None]
    # (parsed flags, positional arguments) -> None; raises ToolError
    run: Callable[[flags.FlagValues, list[str]], None]
    positional: bool = False  # whether positional arguments are accepted


def expand_param_files(argv: Sequence[str]) -> list[str]:
    """Expands `@PATH` arguments; `--flagfile=` is left to absl.

    One argument per line: Bazel's "multiline" param file format, and also its default
    "shell" format, whose lines are single-quoted (shell-escaped) when they need to be.
    """
    out = []
    for arg in argv:
        if not (arg.startswith("@") and len(arg) > 1):
            out.append(arg)
            continue
        try:
            text = Path(arg[1:]).read_text(encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot read param file {arg[1:]!r}: {e.strerror}") from None
        for line in text.splitlines():
            if line.startswith("'"):
                try:
                    words = shlex.split(line)
                except ValueError:
                    words = []
                if len(words) != 1:
                    raise UserError(f"param file {arg[1:]!r}: cannot unquote line {line!r}")
                line = words[0]
            if line:
                out.append(line)
    return out


def new_flag_values(tool: Tool) -> flags.FlagValues:
    fv = flags.FlagValues()
    tool.define_flags(fv)
    flags.DEFINE_bool("verbose", False, "Print the traceback with an error.", flag_values=fv)
    return fv


def parse(tool: Tool, argv: Sequence[str]) -> tuple[flags.FlagValues, list[str]]:
    """argv without the program name -> (flag values, positional arguments)."""
    fv = new_flag_values(tool)
    try:
        rest = fv([tool.module] + expand_param_files(argv))[1:]
    except flags.Error as e:
        raise UserError(f"{e}; see `python -m {tool.module} --help`") from None
    if rest and not tool.positional:
        raise UserError(f"unexpected positional argument {rest[0]!r}; all inputs are flags "
                        f"(see `python -m {tool.module} --help`)")
    return fv, rest


def help_text(tool: Tool) -> str:
    return f"usage: {tool.usage}\n\n{new_flag_values(tool).get_help()}\n"


def run_command_line(tool: Tool, argv: Sequence[str], err: TextIO) -> int:
    """Parses `argv` (without the program name), runs, reports to `err`; the exit code."""
    verbose = "--verbose" in argv
    try:
        fv, rest = parse(tool, argv)
        verbose = fv.verbose
        tool.run(fv, rest)
        return EXIT_OK
    except ToolError as e:
        if verbose:
            traceback.print_exc(file=err)
        err.write(f"error: {e.message}\n")
    except Exception as e:  # a bug in the tool or in triton: still one message
        if verbose:
            traceback.print_exc(file=err)
        err.write(f"error: internal error in {tool.module}: {type(e).__name__}: {e}"
                  + ("" if verbose else " (rerun with --verbose for the traceback)") + "\n")
    err.flush()
    return EXIT_ERROR


def main(tool: Tool, argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    sys.dont_write_bytecode = True
    if "--help" in argv or "-h" in argv or "--helpfull" in argv:
        sys.stdout.write(help_text(tool))
        return EXIT_OK
    return run_command_line(tool, argv, sys.stderr)


def require(fv: flags.FlagValues, *names: str) -> None:
    """Required flags, checked after parsing so the message is ours."""
    missing = [f"--{n}" for n in names if getattr(fv, n) in (None, "")]
    if len(missing) == 1:
        raise UserError(f"{missing[0]} is required")
    if missing:
        raise UserError(f"missing required flag(s): {', '.join(missing)}")
