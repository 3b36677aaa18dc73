#!/usr/bin/env bash
# docs/developing.md's second set-up path, run for real: a Bazel >= 7 already on PATH. tools/setup must
# take the host path (prepare only the Python environment) and `tools/bazel test //...` in the
# e2e smoke module must run that Bazel with the environment tools/setup made, the way the Bazel
# Central Registry's presubmit tests that module (.bcr/presubmit.yml).
#
# CI runs the whole build in tools/setup's rootfs, where Debian's Bazel 7.7.1 is /usr/bin/bazel:
# that is the Bazel on PATH here. There the nested Bazel gets --config=rules_triton_offline, as
# any Bazel without access to the registry needs (these machines' network reaches PyPI only).
#
# Cost: the host venv and the nested Bazel's output root live in a persistent folder (below), so
# only the first run on a machine installs the pinned wheels (pip, about a minute) and builds
# cold; later runs repeat every step, incrementally. The test is tagged `external` so Bazel never
# takes its result from the cache: what it checks lies outside its declared inputs.
# $1: the repository's MODULE.bazel (a runfile; its real path is the source tree).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

src=$(dirname "$(readlink -f "$1")")
[[ -x "$src/tools/setup" && -f "$src/e2e/smoke/MODULE.bazel" ]] || fail "no source tree at $src"
bazel_bin=$(command -v bazel) || fail "no bazel on PATH; this test runs where tools/setup's rootfs (or your own Bazel >= 7) provides one"

# .bcr/presubmit.yml must describe this run: the same module, set-up command and targets.
presubmit="$src/.bcr/presubmit.yml"
grep -q '^  module_path: "e2e/smoke"$' "$presubmit" || fail "presubmit.yml tests another module"
grep -q '^        - "RULES_TRITON_CACHE=/tmp/rules_triton ../../tools/setup"$' "$presubmit" \
  || fail "presubmit.yml prepares Python differently from this test"
[[ "$(sed -n '/^      test_targets:/,$p' "$presubmit" | grep -c '^        - ')" == 1 ]] \
  && grep -q '^        - "//..."$' "$presubmit" || fail "presubmit.yml's test_targets are not exactly //..."

state=/var/tmp/rules_triton_host_bazel_test
mkdir -p "$state"
# One run at a time per machine: two checkouts testing at once share the venv.
exec 8>"$state/lock"
flock 8

export RULES_TRITON_CACHE="$state/cache"
export PIP_CACHE_DIR="$state/pip-cache"
unset RULES_TRITON_PYTHON BAZEL_REAL

echo "== tools/setup with $bazel_bin on PATH"
"$src/tools/setup" 2>&1 | tee "$TEST_TMPDIR/setup.log"
version=$("$bazel_bin" --version | awk '{print $2}')
grep -q "using the Bazel on PATH ($version); preparing the Python environment only" "$TEST_TMPDIR/setup.log" \
  || fail "tools/setup did not take the host-Bazel path"
python=$(cat "$RULES_TRITON_CACHE/host-python.path")
[[ "$python" == "$RULES_TRITON_CACHE/host-venv/bin/python3" ]] || fail "host-python.path names $python"
"$python" -c "import triton; assert triton.__version__ == '3.6.0'" || fail "$python has no triton 3.6.0"
[[ ! -e "$RULES_TRITON_CACHE/rootfs" ]] || fail "tools/setup built a rootfs although a Bazel is on PATH"

# In the rootfs there is no registry: the offline config (stub modules, local registry) stands in,
# as it does for tools/bazel's rootfs path. A Bazel of your own with network needs none.
offline=()
[[ -d /opt/rules_triton/stub_modules ]] && offline=(--config=rules_triton_offline)

echo "== tools/bazel test //... in e2e/smoke"
out="$state/output_user_root"
cleanup() { (cd "$src/e2e/smoke" && "$src/tools/bazel" --output_user_root="$out" shutdown) >/dev/null 2>&1 || true; }
trap cleanup EXIT
cd "$src/e2e/smoke"
# --symlink_prefix=/: no bazel-* links in the source tree; --max_idle_secs: the nested server
# goes away even if this test is killed before its trap runs.
"$src/tools/bazel" --output_user_root="$out" --max_idle_secs=60 test //... \
  ${offline[@]+"${offline[@]}"} --symlink_prefix=/ --test_output=errors 2>&1 | tee "$TEST_TMPDIR/test.log"
grep -qE "^//tests:smoke_test +(\(cached\) )?PASSED" "$TEST_TMPDIR/test.log" || fail "//tests:smoke_test did not pass"
# The kernels were compiled with the host venv's interpreter, not the rootfs one that tools/bazel
# passes on the other path.
output_base=$("$src/tools/bazel" --output_user_root="$out" --max_idle_secs=60 info output_base \
  ${offline[@]+"${offline[@]}"} 2>/dev/null)
grep -qs "interpreter_path = \"$python\"" "$output_base"/external/*rules_triton_python/BUILD.bazel \
  || fail "@rules_triton_python does not use $python (in $output_base/external)"
echo "PASS: tools/setup took the host path and Bazel $version tested e2e/smoke with its environment"
