#!/usr/bin/env bash
# bench/torch/pack.sh: builds what the PyTorch-caller benchmarks need (with tools/bazel; no GPU)
# and copies it into ignored folders, for bench/torch/run_gpu.sh on the GPU machine:
#
#   .gpu/torchbench/overhead/libtiny1.so, tiny.py   the tiny kernel's library (//bench/gpu:tiny1_so)
#                                                   and its source for the Triton JIT
#   .gpu/corpus/                                    the Liger-Kernel corpus (tests/corpus/pack.sh:
#                                                   libcorpus_kernels.so, its manifest, the
#                                                   locked liger-kernel source)
#   .gpu/torchbench/ops/NAME/                       the torch op libraries, when the repository
#                                                   has them (below); ops.json names each one's
#                                                   generated Python module
#   .gpu/torchbench/MANIFEST.json                   commit, sizes and sha256 of the packed files
#
# Torch ops: when rules/defs.bzl defines triton_torch_library and the targets
# //bench/torch:tiny1_torch (over //bench/gpu:tiny1) and //tests/corpus:corpus_torch (over the
# corpus libraries) exist, their output files are copied into ops/tiny1/ and ops/corpus/, and the
# Python module among them is what the benchmarks import (--torch-op-module). Without them the
# torch op columns say "not available".
#
# Carry both folders to the GPU machine: .gpu/torchbench and .gpu/corpus.
# Usage: bench/torch/pack.sh [extra Bazel build flags...]   (e.g. --jobs=2)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest="$repo/.gpu/torchbench"
bazel="$repo/tools/bazel"

die() {
  printf 'bench/torch/pack.sh: error: %s\n' "$*" >&2
  exit 1
}
note() {
  printf 'bench/torch/pack.sh: %s\n' "$*" >&2
}

cd "$repo"
note "building //bench/gpu:tiny1_so"
"$bazel" build "$@" //bench/gpu:tiny1_so
bin=$("$bazel" info "$@" bazel-bin 2>/dev/null)
[[ -f "$bin/bench/gpu/libtiny1.so" ]] || die "no libtiny1.so under $bin/bench/gpu"

note "packing the corpus (tests/corpus/pack.sh)"
bash tests/corpus/pack.sh "$@"

rm -rf "$dest"
mkdir -p "$dest/overhead"
install -m 755 "$bin/bench/gpu/libtiny1.so" "$dest/overhead/"
install -m 644 bench/gpu/tiny.py "$dest/overhead/"

# The torch op libraries, when the rule and the targets exist (see the header).
ops_json="{}"
if grep -q 'triton_torch_library' rules/defs.bzl; then
  execroot=$("$bazel" info "$@" execution_root 2>/dev/null)
  for pair in tiny1=//bench/torch:tiny1_torch corpus=//tests/corpus:corpus_torch; do
    name=${pair%%=*} label=${pair#*=}
    if ! "$bazel" query "$label" >/dev/null 2>&1; then
      note "no $label: the $name torch op column stays 'not available'"
      continue
    fi
    "$bazel" build "$@" "$label"
    mkdir -p "$dest/ops/$name"
    module=""
    while IFS= read -r f; do
      [[ -f "$execroot/$f" ]] || continue
      install -m 755 "$execroot/$f" "$dest/ops/$name/"
      [[ "$f" == *.py ]] && module="ops/$name/$(basename "$f")"
    done < <("$bazel" cquery "$@" --output=files "$label" 2>/dev/null)
    [[ -n "$module" ]] || die "$label has no Python module among its outputs"
    ops_json=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d[sys.argv[2]]=sys.argv[3]; print(json.dumps(d))' \
      "$ops_json" "$name" "$module")
  done
else
  note "rules/defs.bzl has no triton_torch_library: the torch op columns will say 'not available'"
fi
printf '%s\n' "$ops_json" >"$dest/ops.json"

commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain 2>/dev/null | grep -c . || true)
python3 - "$dest" "$commit" "$dirty" <<'PY'
import hashlib, json, sys, time
from pathlib import Path
dest, commit, dirty = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
files = {str(p.relative_to(dest)): {"bytes": p.stat().st_size,
                                    "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
         for p in sorted(dest.rglob("*")) if p.is_file()}
manifest = {"format": "rules_triton.torch_bench_pack.v1", "commit": commit,
            "uncommitted_changes": dirty,
            "packed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": files}
(dest / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
PY

size=$(du -sk "$dest" "$repo/.gpu/corpus" | awk '{s += $1} END {print s}')
# the device run tool carries at most 64 MiB of ignored folders
(( size < 48 * 1024 )) || die ".gpu/torchbench + .gpu/corpus are ${size} KiB, over the 48 MiB budget"
note "packed $(find "$dest" -type f | wc -l) files into $dest; .gpu/torchbench + .gpu/corpus: ${size} KiB"
note "on the GPU machine, from the repository root: bench/torch/run_gpu.sh (carry .gpu/torchbench and .gpu/corpus)"
