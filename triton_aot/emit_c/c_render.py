"""Renders the C templates (real files under templates/) with the standard library's
`string.Template`: `${name}` inserts a value, `$$` is a literal `$`, and a missing value is an
error (substitute(), never safe_substitute()). Templates hold no loops: repeated parts (one
launcher per variant, one selector per algo and target) are fragment templates of their own,
rendered once per item and joined by the renderer modules.

Values must be `c_syntax.CCode` (checked or escaped text) or ints: plain strings are refused,
so nothing from a record reaches the C without passing through triton_aot.core.c_syntax.

The template directory can be overridden with the RULES_TRITON_TEMPLATE_DIR environment variable
or the `template_dir` argument.
"""

from __future__ import annotations

import os
import string
from pathlib import Path

from triton_aot.core.c_syntax import CCode
from triton_aot.core.errors import UserError

TEMPLATE_DIR_ENV = "RULES_TRITON_TEMPLATE_DIR"


def template_dir(override: str | os.PathLike | None = None) -> Path:
    if override:
        return Path(override)
    env = os.environ.get(TEMPLATE_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "templates"


class Templates:
    """The templates of one directory, each read once."""

    def __init__(self, override: str | os.PathLike | None = None) -> None:
        self.dir = template_dir(override)
        self._cache: dict[str, string.Template] = {}

    def _load(self, name: str) -> string.Template:
        if name not in self._cache:
            path = self.dir / name
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as e:
                raise UserError(f"--template_dir: cannot read template {path}: {e.strerror}; "
                                "point it at rules_triton's templates/") from None
            template = string.Template(text)
            if not template.is_valid():
                raise UserError(f"template {path}: malformed placeholder")
            self._cache[name] = template
        return self._cache[name]

    def render(self, template: str, /, **values: CCode | int) -> CCode:
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (CCode, int)):
                raise TypeError(f"template {template}: ${{{key}}} is an unchecked "
                                f"{type(value).__name__}; build it with triton_aot.core.c_syntax")
        try:
            return CCode(self._load(template).substitute(values))
        except KeyError as e:
            raise UserError(f"template {self.dir / template}: no value for ${{{e.args[0]}}}; the "
                            "template does not match this triton_aot") from None
