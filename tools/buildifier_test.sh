#!/usr/bin/env bash
# Fails on any buildifier finding (formatting or lint warning) in the Starlark files git tracks,
# the examples module included. Args: BUILDIFIER MODULE.bazel TRACKED_STARLARK_PY
#
# Like buildtools' own buildifier_test(no_sandbox = True): the test reads the source tree, found
# through the runfile MODULE.bazel, rather than a declared list of every BUILD and .bzl file
# (which no glob can collect across packages); it is tagged `external` so it never comes from
# the cache. Only tracked files are linted (tools/tracked_starlark.py): a scratch workspace or
# other untracked files inside the checkout are the user's, not the project's.
set -euo pipefail
buildifier=$(readlink -f "$1")
root=$(dirname "$(readlink -f "$2")")
lister=$(readlink -f "$3")
files=()
while IFS= read -r file; do files+=("$file"); done < <(python3 "$lister" "$root")
[[ ${#files[@]} -gt 0 ]] || { echo "FAIL: tools/tracked_starlark.py found no Starlark files in $root"; exit 1; }
cd "$root"
rc=0
out=$("$buildifier" -mode=check -lint=warn "${files[@]}" 2>&1) || rc=$?
if [[ $rc -ne 0 || -n "$out" ]]; then
  printf '%s\n' "$out"
  echo "FAIL: buildifier findings in $root (exit code $rc). Fix them, for example with:"
  echo "  $buildifier -lint=fix FILE..."
  exit 1
fi
echo "PASS: buildifier -mode=check -lint=warn finds nothing in the ${#files[@]} tracked Starlark files of $root"
