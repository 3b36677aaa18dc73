#!/usr/bin/env bash
# Fails on any buildifier finding (formatting or lint warning) in the repository's Starlark
# files, the examples module included. Args: BUILDIFIER MODULE.bazel
#
# Like buildtools' own buildifier_test(no_sandbox = True): the test reads the source tree, found
# through the runfile MODULE.bazel, rather than a declared list of every BUILD and .bzl file
# (which no glob can collect across packages); it is tagged `external` so it never comes from
# the cache.
set -euo pipefail
buildifier=$(readlink -f "$1")
root=$(dirname "$(readlink -f "$2")")
cd "$root"
# Every folder but hidden ones (.git, .gpu) and bazel-* convenience links, and the Starlark
# files at the top (buildifier checks every file it is given, whatever its name).
entries=()
for entry in *; do
  case "$entry" in
    bazel-*) ;;
    BUILD | BUILD.bazel | MODULE.bazel | WORKSPACE | WORKSPACE.bazel | *.bzl) entries+=("$entry") ;;
    *) [[ -d "$entry" && ! -L "$entry" ]] && entries+=("$entry") ;;
  esac
done
rc=0
out=$("$buildifier" -mode=check -lint=warn -r "${entries[@]}" 2>&1) || rc=$?
if [[ $rc -ne 0 || -n "$out" ]]; then
  printf '%s\n' "$out"
  echo "FAIL: buildifier findings in $root (exit code $rc). Fix them, for example with:"
  echo "  $buildifier -lint=fix -r ${entries[*]}"
  exit 1
fi
echo "PASS: buildifier -mode=check -lint=warn finds nothing in $root"
