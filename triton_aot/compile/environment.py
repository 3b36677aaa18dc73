"""What a Bazel action tells a tool that imports kernels about the action itself: the
environment its key was computed from (checked here), and the target it builds (named in errors).
"""

from __future__ import annotations

import sys

from absl import flags

from triton_aot.core.errors import flag_error


def define_action_flags(fv: flags.FlagValues) -> None:
    """--env_fingerprint and --bazel_target, for every tool that imports kernel files."""
    flags.DEFINE_string(
        "env_fingerprint", None, "The environment fingerprint the action's key was computed "
        "from (@rules_triton_python//:fingerprint): the tool refuses to run in another "
        "environment.", flag_values=fv)
    flags.DEFINE_string(
        "bazel_target", None, "The Bazel target this action builds: errors then name its "
        "attributes (deps, kernel_module) instead of this tool's flags.", flag_values=fv)


def check(fingerprint_path: str) -> None:
    """The environment this process runs in is the one the action's key was computed from.

    Why: the fingerprint file is the only input that puts an interpreter outside the build into
    the action keys. An executor whose interpreter at the same path has another triton would
    otherwise compile with it and store its cubins under this environment's key, in a cache
    that every other machine then trusts."""
    from triton_aot.compile import env_fingerprint
    try:
        with open(fingerprint_path, encoding="utf-8") as f:
            expected = f.read()
    except OSError as e:
        raise flag_error("env_fingerprint", f"cannot read {fingerprint_path!r}: {e.strerror}",
                         "pass the toolchain's fingerprint file") from None
    differs = env_fingerprint.differences(expected, env_fingerprint.current())
    if differs:
        raise flag_error(
            "env_fingerprint", f"this executor's Python environment ({sys.executable}) is not "
            f"the one the action's cache key was computed from: {differs}",
            "run the actions where the toolchain's environment is (local mode), ship it with "
            "--@rules_triton//:python_mode=archive, or re-fetch the toolchain's environment "
            "(bazel fetch --force @rules_triton_python) after changing it")
