"""The exception hierarchy of the triton_aot tools.

Every tool (compile, link, disasm) reports a `ToolError` as one `error: ...` line on stderr and
exits with code 1 (triton_aot.core.cli). Anything else that escapes is a bug in the tools (or in
Triton): it is reported as one `error: internal error in ...` line, also with exit code 1; the
traceback is printed only with --verbose.

- `UserError`: the input is wrong and the user can fix it (a flag, a signature, a kernel that does
  not compile, a variant record that the link tool cannot use). The message names the culprit
  (flag, attribute, file) and the fix.
"""

from __future__ import annotations


class ToolError(Exception):
    """Base of every error a tool reports as a single `error:` line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UserError(ToolError):
    """A problem with the tool's input; `message` names the culprit and the fix."""


def flag_error(flag: str, problem: str, fix: str | None = None) -> UserError:
    """Builds the usual "--flag: problem; fix" message."""
    text = f"--{flag}: {problem}"
    if fix:
        text += f"; {fix}"
    return UserError(text)
