"""The persistent worker's key of a compile request: which requests may share a process.

A worker child keeps every module its requests import (worker.py), so two requests may share a
child only when a fresh process would import the same modules for both and they would come out
the same. That is decided by:

- what is imported: --kernel_path or --kernel_module, and the --import_path roots in order (the
  deps' `imports`), relative to the working directory (the sandbox's, when there is one);
- the answers the import sees: --target (Triton's driver and torch.cuda answer for the action's
  target while the kernel file and its deps are imported, build_env.py);
- the files' contents: the digests Bazel sends with each request's inputs, except the rule's own
  intermediate files under `_triton/` (an ordering input that nothing imports), so that an edited
  dep gets a fresh child. Without digests (the tool driven by hand) the child itself notices a
  changed module file and hands the request to a fresh child (worker.py).

Everything else a request carries (signature, hints, grid, symbol, outputs) is read anew by each
request and may differ between requests of one child.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Optional, Sequence

from triton_aot.core.cli import expand_param_files

# The flags whose values decide what a request imports and how.
KEY_FLAGS = ("kernel_path", "kernel_module", "import_path", "target")

# Where the rules put their own intermediate files, which no import reads (kernel_params.json).
_INTERMEDIATE = "/_triton/"


def _flag_lines(path: str, depth: int = 0) -> list[str]:
    """The arguments of an absl --flagfile (one per line, `#` comments, nested flagfiles)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except OSError:
        return []  # the request itself will report the unreadable file
    out = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        if line.startswith("--flagfile=") and depth < 8:
            out += _flag_lines(line[len("--flagfile="):], depth + 1)
        else:
            out.append(line)
    return out


def key_flags(arguments: Sequence[str], names: Sequence[str] = KEY_FLAGS) -> dict:
    """flag -> its values in order, for `names`, from `arguments` with their param files (paths
    relative to the working directory)."""
    try:
        expanded = expand_param_files(arguments)
    except Exception:  # an unreadable @file: the request reports it; key it alone
        expanded = list(arguments)
    flat = []
    for arg in expanded:
        if arg.startswith("--flagfile="):
            flat += _flag_lines(arg[len("--flagfile="):])
        else:
            flat.append(arg)
    found: dict = {name: [] for name in names}
    for i, arg in enumerate(flat):
        name, eq, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name not in found:
            continue
        if not eq:  # `--flag value`
            value = flat[i + 1] if i + 1 < len(flat) else ""
        found[name].append(value)
    return found


def request_key(startup: Sequence[str], arguments: Sequence[str], inputs: Sequence[dict],
                sandbox_dir: Optional[str]) -> Optional[str]:
    """The key of a request (`startup`: the worker's own arguments, before each request's), or
    None when it imports no kernel (it then runs in a process of its own)."""
    cwd = os.path.abspath(sandbox_dir) if sandbox_dir else os.getcwd()
    here = os.getcwd()
    if sandbox_dir:
        os.chdir(cwd)  # param files are relative to the request's working directory
    try:
        found = key_flags(list(startup) + list(arguments))
    finally:
        os.chdir(here)
    if not found["kernel_path"] and not found["kernel_module"]:
        return None
    digests = sorted(
        (str(i.get("path", "")), str(i.get("digest", ""))) for i in inputs
        if isinstance(i, dict) and _INTERMEDIATE not in "/" + str(i.get("path", "")))
    text = json.dumps([cwd, found, os.environ.get("PYTHONPATH", ""), digests])
    return hashlib.sha256(text.encode()).hexdigest()
