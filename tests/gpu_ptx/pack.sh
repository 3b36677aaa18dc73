#!/usr/bin/env bash
# tests/gpu_ptx/pack.sh: builds //tests/gpu_ptx:ptx_fallback with tools/bazel and copies it into
# .gpu/ptx/ (ignored by git) for tests/gpu_ptx/run.sh on the GPU machine. tools/pack_gpu runs
# it; it replaces only .gpu/ptx. Usage: tests/gpu_ptx/pack.sh [extra Bazel build flags...]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest="$repo/.gpu/ptx"
cd "$repo"
"$repo/tools/bazel" build "$@" //tests/gpu_ptx:ptx_fallback
bin=$("$repo/tools/bazel" info "$@" bazel-bin 2>/dev/null)
[[ -f "$bin/tests/gpu_ptx/ptx_fallback" ]] || { echo "tests/gpu_ptx/pack.sh: error: no $bin/tests/gpu_ptx/ptx_fallback" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest"
install -m 755 "$bin/tests/gpu_ptx/ptx_fallback" "$dest/"
{
  echo "rules_triton gpu_ptx pack: commit $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown), packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf '%s  %8d  ptx_fallback\n' "$(sha256sum "$dest/ptx_fallback" | cut -d' ' -f1)" "$(stat -c %s "$dest/ptx_fallback")"
} >"$dest/MANIFEST.txt"
echo "tests/gpu_ptx/pack.sh: packed $dest/ptx_fallback; on the GPU machine, from the repository root: tests/gpu_ptx/run.sh" >&2
