#!/usr/bin/env bash
# examples/transformer_block/pack.sh: builds the block's op library (in the examples workspace,
# as a user's repository would) and copies what the GPU run needs into .gpu/block/ at the
# repository root (ignored by git; about 3 MB) for a GPU machine with python3 and torch (CUDA),
# no Bazel, no network:
#
#   .gpu/block/run_gpu.py                          eager, torch.compile, AOTInductor vs torch
#   .gpu/block/transformer_block/block.py          the block over the ops, and its reference
#   .gpu/block/transformer_block/block_ops.py      generated: loads the library, registers fakes
#   .gpu/block/transformer_block/libblock_ops.so   the ops (stable ABI) and their kernels
#   .gpu/block/MANIFEST.txt                        commit, sha256, the symbols needed from torch
#
# Usage: examples/transformer_block/pack.sh [extra Bazel build flags...]; then on the GPU machine
#   python3 .gpu/block/run_gpu.py        (results.json and results.md to $OUT, else next to it)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
examples="$repo/examples"
dest="$repo/.gpu/block"
bazel="$repo/tools/bazel"
target=//transformer_block:block_ops

die() {
  printf 'examples/transformer_block/pack.sh: error: %s\n' "$*" >&2
  exit 1
}

cd "$examples"
"$bazel" build "$@" "$target"
execroot=$("$bazel" info "$@" execution_root 2>/dev/null)
[[ -d "$execroot" ]] || die "Bazel's execution root $execroot is not visible from here"
module="" lib=""
while IFS= read -r f; do
  case "$f" in
    */block_ops.py) module="$execroot/$f" ;;
    */libblock_ops.so) lib="$execroot/$f" ;;
  esac
done < <("$bazel" cquery "$@" --output=files "$target" 2>/dev/null)
[[ -f "$module" ]] || die "no block_ops.py was built"
[[ -f "$lib" ]] || die "no libblock_ops.so was built"

rm -rf "$dest"
mkdir -p "$dest/transformer_block"
cp "$examples/transformer_block/run_gpu.py" "$dest/"
cp -L "$module" "$lib" "$examples/transformer_block/block.py" "$dest/transformer_block/"
chmod -R u+w "$dest"
{
  echo "commit $(git -C "$repo" rev-parse HEAD)$(git -C "$repo" diff --quiet HEAD -- examples || echo ' (examples/ dirty)')"
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  (cd "$dest" && sha256sum run_gpu.py transformer_block/*)
  echo "undefined symbols from torch (stable ABI / AOTI shim):"
  nm -D --undefined-only "$dest/transformer_block/libblock_ops.so" | awk '{print $2}' \
    | grep -E '^(aoti_torch_|torch_)' | sed 's/^/  /'
  echo "size: $(du -sh "$dest" | cut -f1)"
} > "$dest/MANIFEST.txt"
echo "packed into $dest:"
cat "$dest/MANIFEST.txt"
echo "on the GPU machine: python3 .gpu/block/run_gpu.py"
