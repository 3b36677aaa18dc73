"""The one exception type that the compile tool reports to the user.

Every problem the user can fix (bad flag, bad signature, kernel that does not compile...)
is raised as a `UserError`; `triton_aot.compile` prints it as a single `error: ...`
message and exits with code 1, without a traceback (unless --verbose).
"""

from __future__ import annotations


class UserError(Exception):
    """A problem with the tool's input; `message` names the culprit and the fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def flag_error(flag: str, problem: str, fix: str | None = None) -> UserError:
    """Builds the usual "--flag: problem; fix" message."""
    text = f"--{flag}: {problem}"
    if fix:
        text += f"; {fix}"
    return UserError(text)
