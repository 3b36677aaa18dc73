#!/usr/bin/env bash
# tests/torch_ops/pack.sh: builds the test op library with tools/bazel and copies what the GPU
# check needs into .gpu/torch/ (ignored by git) for tests/torch_ops/run_gpu.py on the GPU machine
# (python3, torch, no Bazel, no network):
#
#   .gpu/torch/example_ops.py          the generated module (loads the library next to it)
#   .gpu/torch/libexample_ops.so       the ops (stable ABI, TORCH_TARGET_VERSION 2.11) and kernels
#   .gpu/torch/scale_ops.py, libscale_ops.so   the same for the argument-type ops (scale_ops)
#   .gpu/torch/run_gpu.py              the check
#   .gpu/torch/MANIFEST.txt            commit, torch headers' version, sha256, the symbols the
#                                      library needs from torch and from libstdc++/glibc
#
# Usage: tests/torch_ops/pack.sh [extra Bazel build flags...]; then on the GPU machine
#   cd .gpu/torch && python3 run_gpu.py
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest="$repo/.gpu/torch"
bazel="$repo/tools/bazel"
names=(example_ops scale_ops)
targets=(//tests/torch_ops:example_ops //tests/torch_ops:scale_ops)

die() {
  printf 'tests/torch_ops/pack.sh: error: %s\n' "$*" >&2
  exit 1
}

cd "$repo"
"$bazel" build "$@" "${targets[@]}"
execroot=$("$bazel" info "$@" execution_root 2>/dev/null)
[[ -d "$execroot" ]] || die "Bazel's execution root $execroot is not visible from here"
query="${targets[0]}"
for t in "${targets[@]:1}"; do query+=" + $t"; done
files=()
while IFS= read -r f; do
  files+=("$execroot/$f")
done < <("$bazel" cquery "$@" --output=files "$query" 2>/dev/null)
built=()
for name in "${names[@]}"; do
  for want in "$name.py" "lib$name.so"; do
    found=""
    for f in "${files[@]}"; do [[ "$(basename "$f")" == "$want" ]] && found="$f"; done
    [[ -f "$found" ]] || die "no $want was built"
    built+=("$found")
  done
done

rm -rf "$dest"
mkdir -p "$dest"
cp -L "${built[@]}" "$repo/tests/torch_ops/run_gpu.py" "$dest/"
chmod u+w "$dest"/*
{
  echo "commit $(git -C "$repo" rev-parse HEAD)$(git -C "$repo" diff --quiet || echo ' (dirty)')"
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  (cd "$dest" && sha256sum ./*.py ./*.so)
  echo "undefined symbols from torch (stable ABI / AOTI shim):"
  nm -D --undefined-only "$dest"/lib*.so | awk '{print $2}' | grep -E '^(aoti_torch_|torch_)' | sort -u | sed 's/^/  /'
  echo "highest symbol versions needed:"
  for v in GLIBC_ GLIBCXX_ CXXABI_; do
    printf '  %s\n' "$(objdump -T "$dest"/lib*.so | grep -o "${v}[0-9.]*" | sort -Vu | tail -1)"
  done
} > "$dest/MANIFEST.txt"
echo "packed into $dest:"
cat "$dest/MANIFEST.txt"
echo "on the GPU machine: cd .gpu/torch && python3 run_gpu.py"
