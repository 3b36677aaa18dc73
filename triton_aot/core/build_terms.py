"""A tool error in the terms of the BUILD target whose action ran the tool.

The tools speak of their flags (`--signature entry 2 ...`), which is right for someone who runs
`python -m triton_aot.compile.compile` by hand. In a build, the user wrote attributes, not flags: with
--bazel_target, every error line names the target and the attribute that the flag came from
(`//pkg:lib: attribute 'signature': entry 2 ...`), and no flag.
"""

from __future__ import annotations

import re
from typing import Mapping

# The compile tool's flags that a triton_kernel_library attribute sets (rules/private/actions/compile.bzl).
FLAG_ATTRIBUTES = {
    "kernel_path": "srcs",
    "kernel_module": "kernel_module",
    "kernel_name": "kernel",
    "import_path": "deps",
    "signature": "signature",
    "hints": "specializations",
    "constexprs": "algos",
    "grid": "grid",
    "launch_args": "launch_args",
    "reset_to_zero": "algos",
    "algo_targets": "algos",
    "maxnreg": "algos",
    "num_warps": "algos",
    "num_stages": "algos",
    "num_ctas": "algos",
    "launch_cooperative_grid": "algos",
    "launch_pdl": "algos",
    "enable_fp_fusion": "algos",
    "target": "targets",
    "library_targets": "targets",
    "embed_ptx": "embed_ptx",
}



def in_build_terms(message: str, bazel_target: str,
                   attributes: Mapping[str, str] = FLAG_ATTRIBUTES,
                   default: str = "kernel") -> str:
    """`message` as `TARGET: attribute 'ATTR': ...`, ATTR the attribute of the flag the message
    starts with (`attributes`: flag -> attribute), else `default` (the kernel's: what failed to
    compile); flags named further on become the attributes they come from. A message that
    already names the target is returned as it is."""
    if message.startswith(bazel_target + ":"):
        return message
    flag = "|".join(sorted(attributes, key=len, reverse=True))
    head = f"attribute '{default}': "
    # `--num_warps/--num_stages/--num_ctas: ...`: flags of one attribute, joined by `/`
    m = re.match(rf"--({flag})((?:/--(?:{flag}))*)(?::\s*|\s+|$)", message)
    if m:
        head = f"attribute '{attributes[m.group(1)]}': "
        message = message[m.end():]
    # `--constexprs=BLOCK=VALUE` inside a sentence: the value, then where it goes
    message = re.sub(rf"--({flag})=(\S+?)(?=[;,)]|\s|$)",
                     lambda v: f"{v.group(2)} in attribute '{attributes[v.group(1)]}'", message)
    message = re.sub(rf"--({flag})\b", lambda v: f"attribute '{attributes[v.group(1)]}'", message)
    return f"{bazel_target}: {head}{message}"
