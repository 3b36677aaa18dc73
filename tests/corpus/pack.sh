#!/usr/bin/env bash
# tests/corpus/pack.sh: builds the corpus library with tools/bazel and copies what the GPU check
# needs into .gpu/corpus/ (ignored by git) for tests/corpus/run_corpus_gpu.py on the GPU machine:
#
#   .gpu/corpus/libcorpus_kernels.so     every corpus kernel, only the C APIs exported
#   .gpu/corpus/corpus_manifest.json     the entries of tests/corpus/corpus.bzl
#   .gpu/corpus/cubins/*.cubin           the variants' cubins (compared with the JIT's)
#   .gpu/corpus/site/liger_kernel/       the locked liger-kernel wheel, unpacked, so the JIT side
#                                        runs the same source (the GPU machine has no network)
#   .gpu/corpus/MANIFEST.txt             commit, sizes and sha256 of the above
#
# The wheel is downloaded from PyPI and checked against tools/kernel_packages.lock; it is never
# committed. Usage: tests/corpus/pack.sh [extra Bazel build flags...]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest="$repo/.gpu/corpus"
bazel="$repo/tools/bazel"
targets=(//tests/corpus:corpus_kernels //tests/corpus:corpus_manifest)

die() {
  printf 'tests/corpus/pack.sh: error: %s\n' "$*" >&2
  exit 1
}

cd "$repo"
"$bazel" build "$@" --output_groups=+cubin "${targets[@]}" //tests/corpus:all
execroot=$("$bazel" info "$@" execution_root 2>/dev/null)
[[ -d "$execroot" ]] || die "Bazel's execution root $execroot is not visible from here"
lib="" manifest="" cubins=()
while IFS= read -r f; do
  case "$f" in
    */libcorpus_kernels.so) lib="$execroot/$f" ;;
    */corpus_manifest.json) manifest="$execroot/$f" ;;
  esac
done < <(IFS=+; "$bazel" cquery "$@" --output=files "${targets[*]}" 2>/dev/null)
while IFS= read -r f; do
  [[ "$f" == *.cubin ]] && cubins+=("$execroot/$f")
done < <("$bazel" cquery "$@" --output=files --output_groups=cubin 'kind(triton_kernel_library, //tests/corpus:all)' 2>/dev/null)
[[ -f "$lib" ]] || die "no libcorpus_kernels.so was built"
[[ -f "$manifest" ]] || die "no corpus_manifest.json was built"
(( ${#cubins[@]} > 0 )) || die "no corpus cubins were built"

pin=$(sed -n 's/^liger-kernel==\([^ ]*\).*/\1/p' tools/kernel_packages.lock)
sha=$(grep -A1 '^liger-kernel==' tools/kernel_packages.lock | sed -n 's/.*--hash=sha256:\([0-9a-f]*\).*/\1/p')
[[ -n "$pin" && -n "$sha" ]] || die "tools/kernel_packages.lock pins no liger-kernel"
rm -rf "$dest"
mkdir -p "$dest/cubins" "$dest/site"
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$dest/wheel" "liger-kernel==$pin" \
  || die "could not download liger-kernel==$pin from PyPI"
wheel=$(ls "$dest"/wheel/*.whl)
[[ "$(sha256sum "$wheel" | cut -d' ' -f1)" == "$sha" ]] || die "$wheel does not have the locked sha256 $sha"
python3 -m zipfile -e "$wheel" "$dest/site"
rm -rf "$dest/wheel"
install -m 755 "$lib" "$dest/"
install -m 644 "$manifest" "$dest/"
install -m 644 "${cubins[@]}" "$dest/cubins/"

commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain 2>/dev/null | grep -c . || true)
{
  echo "rules_triton corpus pack: commit $commit, $dirty uncommitted change(s), liger-kernel $pin, packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  (cd "$dest" && find . -maxdepth 2 -type f ! -name MANIFEST.txt | sort | while read -r f; do
    printf '%s  %8d  %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "${f#./}"
  done)
} >"$dest/MANIFEST.txt"
echo "tests/corpus/pack.sh: packed ${#cubins[@]} cubins, the library and liger-kernel $pin into $dest" >&2
echo "tests/corpus/pack.sh: on the GPU machine: python3 tests/corpus/run_corpus_gpu.py --out DIR" >&2
