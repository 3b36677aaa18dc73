#!/usr/bin/env bash
# tests/gpu_reliability/pack.sh: builds the GPU reliability program with tools/bazel and copies it,
# with run.sh, into .gpu/reliability/ (next to what tools/pack_gpu packs; run this after it, since
# tools/pack_gpu empties .gpu/). On the GPU machine: .gpu/reliability/run.sh
# Usage: tests/gpu_reliability/pack.sh [extra Bazel build flags...]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest="$repo/.gpu/reliability"
cd "$repo"
tools/bazel build "$@" //tests/gpu_reliability:two_contexts //tests/gpu_reliability:rel_add \
  --output_groups=+metadata
bin=$(tools/bazel info "$@" bazel-bin 2>/dev/null)
[[ -x "$bin/tests/gpu_reliability/two_contexts" ]] || {
  echo "tests/gpu_reliability/pack.sh: error: $bin/tests/gpu_reliability/two_contexts was not built" >&2
  exit 1
}
rm -rf "$dest"
mkdir -p "$dest/metadata"
install -m 755 "$bin/tests/gpu_reliability/two_contexts" "$dest/"
install -m 755 tests/gpu_reliability/run.sh "$dest/"
install -m 644 "$bin/tests/gpu_reliability/_triton/rel_add/"*.json "$dest/metadata/"
echo "tests/gpu_reliability/pack.sh: packed $(find "$dest" -type f | wc -l) files into $dest" >&2
echo "tests/gpu_reliability/pack.sh: on the GPU machine, from the repository root: .gpu/reliability/run.sh" >&2
