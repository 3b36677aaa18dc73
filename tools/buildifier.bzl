"""`@rules_triton_buildifier`: the buildifier binary that tools/setup installed (dev only).

tools/setup installs a pinned buildifier (from the `@bazel/buildifier` npm package) and
tools/bazel names it in RULES_TRITON_BUILDIFIER; this repository exposes it as
`@rules_triton_buildifier//:buildifier` for //tools:buildifier_test. Without it the target is a
script that fails and says to run tools/setup, so a missing binary fails the test instead of
skipping the check.
"""

_ENV_VAR = "RULES_TRITON_BUILDIFIER"

_MISSING = """#!/bin/sh
echo "buildifier is not installed ({var} is not set or names no file): run tools/setup, then tools/bazel" >&2
exit 1
"""

def _buildifier_repository_impl(rctx):
    path = rctx.os.environ.get(_ENV_VAR, "")
    if path and rctx.path(path).exists:
        rctx.symlink(path, "buildifier")
    else:
        rctx.file("buildifier", _MISSING.format(var = _ENV_VAR), executable = True)
    rctx.file("BUILD.bazel", 'exports_files(["buildifier"])\n')

_buildifier_repository = repository_rule(
    implementation = _buildifier_repository_impl,
    environ = [_ENV_VAR],
    # The binary lives outside Bazel's view; its path carries its version (tools/setup).
    local = True,
    doc = "Exposes the buildifier binary named by RULES_TRITON_BUILDIFIER.",
)

def _buildifier_impl(_mctx):
    _buildifier_repository(name = "rules_triton_buildifier")

buildifier = module_extension(
    implementation = _buildifier_impl,
    environ = [_ENV_VAR],
    doc = "Creates @rules_triton_buildifier (rules_triton's own lint test; dev dependency).",
)
