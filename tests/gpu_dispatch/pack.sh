#!/usr/bin/env bash
# tests/gpu_dispatch/pack.sh: builds the GPU variant-choice check with tools/bazel and copies it
# into .gpu/dispatch/ (ignored by git) for tests/gpu_dispatch/run.sh on the GPU machine:
#
#   .gpu/dispatch/libcuda.so.1    the recording driver shim (//tests/gpu_dispatch:libcuda.so.1)
#   .gpu/dispatch/variant_choice  the check (//tests/gpu_dispatch:variant_choice)
#   .gpu/dispatch/cubins/*.cubin  the `cubin` output group of @rules_triton_examples//kernels:matmul
#   .gpu/dispatch/MANIFEST.txt    commit, sizes and sha256 of the above
#
# Only .gpu/dispatch is replaced. tools/pack_gpu deletes all of .gpu/: run it first, then this.
# Usage: tests/gpu_dispatch/pack.sh [extra Bazel build flags...]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest="$repo/.gpu/dispatch"
bazel="$repo/tools/bazel"
targets=(//tests/gpu_dispatch:libcuda.so.1 //tests/gpu_dispatch:variant_choice //tests/gpu_dispatch:matmul_cubins)

die() {
  printf 'tests/gpu_dispatch/pack.sh: error: %s\n' "$*" >&2
  exit 1
}

cd "$repo"
echo "tests/gpu_dispatch/pack.sh: building ${targets[*]}" >&2
"$bazel" build "$@" "${targets[@]}"
execroot=$("$bazel" info "$@" execution_root 2>/dev/null)
[[ -d "$execroot" ]] || die "Bazel's execution root $execroot is not visible from here"
files=()
while IFS= read -r f; do files+=("$f"); done < <(IFS=+; "$bazel" cquery "$@" --output=files "${targets[*]}" 2>/dev/null)
shim="" prog="" cubins=()
for f in "${files[@]}"; do
  case "$f" in
    */tests/gpu_dispatch/libcuda.so.1) shim="$execroot/$f" ;;
    */tests/gpu_dispatch/variant_choice) prog="$execroot/$f" ;;
    *.cubin) cubins+=("$execroot/$f") ;;
  esac
done
[[ -f "$shim" ]] || die "no built shim among: ${files[*]}"
[[ -f "$prog" ]] || die "no built variant_choice among: ${files[*]}"
(( ${#cubins[@]} > 0 )) || die "no matmul cubins among: ${files[*]}"

rm -rf "$dest"
mkdir -p "$dest/cubins"
install -m 755 "$shim" "$prog" "$dest/"
install -m 644 "${cubins[@]}" "$dest/cubins/"

commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain 2>/dev/null | grep -c . || true)
{
  echo "rules_triton gpu_dispatch pack: commit $commit, $dirty uncommitted change(s), packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  (cd "$dest" && find . -type f ! -name MANIFEST.txt | sort | while read -r f; do
    printf '%s  %8d  %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "${f#./}"
  done)
} >"$dest/MANIFEST.txt"

size=$(du -sk "$dest" | cut -f1)
(( size < 10 * 1024 )) || die ".gpu/dispatch is ${size} KiB, over its 10 MiB budget"
echo "tests/gpu_dispatch/pack.sh: packed ${#cubins[@]} cubins, the shim and variant_choice, ${size} KiB, into $dest" >&2
echo "tests/gpu_dispatch/pack.sh: on the GPU machine, from the repository root: tests/gpu_dispatch/run.sh" >&2
