#!/usr/bin/env bash
# bench/torch/run_gpu.sh: the PyTorch-caller benchmarks on the GPU machine (python3 with torch and
# triton, a CUDA GPU; no Bazel, no network), from the repository root, after
# `tools/gpu pack torchbench` packed .gpu/torchbench and .gpu/corpus on the build machine
# (`tools/gpu run torchbench` runs this):
#
#   bench/torch/overhead_bench.py    per-call overhead of a tiny kernel  -> torch_overhead.*
#   bench/torch/cold_start_bench.py  first call in a fresh process, corpus -> torch_cold_start.*
#
# Writes into $OUT when set, else bench/results/. The torch op columns run when the pack holds
# the generated modules (.gpu/torchbench/ops/NAME/*.py). About 4-5 minutes on an H100; --quick for a
# smoke run (fewer rounds, 3 kernels, no server rows). COLD_BUDGET_S (default 240) bounds the
# cold-start benchmark.
# Usage: bench/torch/run_gpu.sh [--quick]
# Exit code: 0 both ran cleanly; 1 one of them recorded an error; 2 the pack is missing.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pack="$repo/.gpu/torchbench"
corpus="$repo/.gpu/corpus"
out=${OUT:-$repo/bench/results}
python=${PYTHON:-python3}
if [[ ! -f "$pack/overhead/libtiny1.so" || ! -f "$corpus/libcorpus_kernels.so" ]]; then
  echo "bench/torch/run_gpu.sh: error: $pack or $corpus is missing: run tools/gpu pack torchbench on the build machine and carry both folders" >&2
  exit 2
fi
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

op_module() {  # the generated module of one torch op library, if packed
  local m=("$pack/ops/$1"/*.py)
  [[ -f "${m[0]}" ]] && echo "${m[0]}"
}
tiny_op=$(op_module tiny1)
corpus_op=$(op_module corpus)

overhead=(--pack-dir "$pack/overhead" --out "$out")
# the cold-start runs that would start after this many seconds are skipped (and recorded)
cold=(--corpus-dir "$corpus" --out "$out" --budget-s "${COLD_BUDGET_S:-240}")
[[ -n "$tiny_op" ]] && overhead+=(--torch-op-module "$tiny_op")
[[ -n "$corpus_op" ]] && cold+=(--torch-op-module "$corpus_op")
if (( quick )); then
  overhead+=(--calls 2000 --rounds 3)
  cold+=(-k rms_norm --budget-s 60 --no-server)
fi

rc=0
"$python" "$repo/bench/torch/overhead_bench.py" "${overhead[@]}" || rc=1
"$python" "$repo/bench/torch/cold_start_bench.py" "${cold[@]}" || rc=1
echo "bench/torch/run_gpu.sh: results in $out (torch_overhead.*, torch_cold_start.*)" >&2
exit $rc
