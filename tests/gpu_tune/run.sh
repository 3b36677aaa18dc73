#!/usr/bin/env bash
# tests/gpu_tune/run.sh: on the GPU machine, from the repository root, after the build machine ran
#   tools/gpu pack tuned_choice    (the recording libcuda shim into .gpu/dispatch, the tuned
#                                   libraries' bundles into .gpu/tune); `tools/gpu run tuned_choice`
# checks that matmul_tuned_auto / matmul_tuned_bf16_auto launch the cubins of the algos their
# committed tuning tables chose (tests/gpu_tune/tuned_choice.py). Writes $OUT/tuned_choice.txt
# when OUT is set. Exit code: tuned_choice.py's (0 pass, 1 fail, 2 setup, 77 no GPU).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shim_dir=${RULES_TRITON_DISPATCH_DIR:-$repo/.gpu/dispatch}
packs=("$@")
(( ${#packs[@]} > 0 )) || packs=("$repo/.gpu/tune/matmul_tuned" "$repo/.gpu/tune/matmul_tuned_bf16")
log=${OUT:+$OUT/tuned_choice.txt}
[[ -z "$log" ]] || mkdir -p "$OUT"
if [[ ! -f "$shim_dir/libcuda.so.1" ]]; then
  echo "run.sh: $shim_dir/libcuda.so.1 is missing: run tools/gpu pack tuned_choice on the build machine first"
  exit 2
fi
real=${RULES_TRITON_REAL_LIBCUDA:-}
if [[ -z "$real" ]]; then
  shim=$(readlink -f "$shim_dir/libcuda.so.1")
  for c in $(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" && /x86-64|x86_64/ {print $NF}') \
      /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib64/libcuda.so.1; do
    if [[ -f "$c" && "$(readlink -f "$c")" != "$shim" ]]; then real=$c; break; fi
  done
fi
if [[ -z "$real" ]]; then
  echo "run.sh: SKIP: no CUDA driver (libcuda.so.1) on this machine; skipped"
  exit 77
fi
real=$(readlink -f "$real")
cmd=(env RULES_TRITON_REAL_LIBCUDA="$real" LD_LIBRARY_PATH="$shim_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
     python3 "$repo/tests/gpu_tune/tuned_choice.py" "${packs[@]}")
if [[ -n "$log" ]]; then
  "${cmd[@]}" 2>&1 | tee "$log"
  exit "${PIPESTATUS[0]}"
fi
exec "${cmd[@]}"
