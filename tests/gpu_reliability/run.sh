#!/usr/bin/env bash
# tests/gpu_reliability/run.sh: the GPU-side reliability checks, on a machine with a CUDA GPU, the
# CUDA toolkit's compute-sanitizer and python3 with torch (no Bazel), over the folders that
# `tools/gpu pack reliability` fills (it packs the examples suite with it):
#
#   .gpu/reliability/two_contexts            two CUcontexts on one GPU
#   .gpu/examples/bin/app, api_test, so_test the example programs
#   .gpu/examples/lib/libexample_kernels.so  every example kernel
#   .gpu/examples/tests/run_all.py           their ctypes + torch tests
#
# Steps (each PASS, FAIL or SKIP, with its log):
#   two_contexts                     plain run: launches in two contexts, unload in one, the
#                                    other keeps working, a destroyed context's successor works
#   memcheck:two_contexts            compute-sanitizer --tool memcheck over it
#   racecheck:two_contexts           compute-sanitizer --tool racecheck over it
#   memcheck:app                     the example app (matmul, every algo)
#   memcheck:api_test, so_test       the C/C++ API programs
#   memcheck:kernels                 every example kernel through run_all.py (torch without its
#                                    caching allocator, so each tensor is its own allocation and
#                                    an out-of-bounds access is caught)
#
# Usage: tests/gpu_reliability/run.sh [RELIABILITY_DIR [EXAMPLES_DIR]]   (`tools/gpu run reliability`;
# default .gpu/reliability and .gpu/examples)
# Writes $OUT/gpu_reliability_summary.json and $OUT/gpu_reliability.log when OUT is set.
# Exit code: 0 all passed; 1 something failed; 2 the packed folder is missing; 77 no GPU.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rel=${1:-$repo/.gpu/reliability}
gpu=${2:-$repo/.gpu/examples}
python=${PYTHON:-python3}
step_timeout=${RULES_TRITON_SANITIZER_TIMEOUT:-480}

if [[ ! -x "$rel/two_contexts" ]]; then
  echo "run.sh: $rel/two_contexts is missing: run tools/gpu pack reliability on the build machine" >&2
  exit 2
fi
sanitizer=$(command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
all_log="$logdir/all.log"
[[ -n "${OUT:-}" ]] && all_log="$OUT/gpu_reliability.log"  # written as the steps go
names=() results=() seconds=() details=()

record() {  # name result seconds detail
  names+=("$1") results+=("$2") seconds+=("$3") details+=("$4")
  printf '%-26s %-5s %5ss  %s\n' "$1" "$2" "$3" "$4"
}

# run_step NAME KIND COMMAND...: KIND plain = exit 0 and a PASS line; sanitizer = exit 0 and
# "ERROR SUMMARY: 0 errors" for every process it followed.
run_step() {
  local name=$1 kind=$2
  shift 2
  local log="$logdir/${name//[:\/]/_}.log" start end rc detail result
  start=$(date +%s)
  timeout "$step_timeout" "$@" >"$log" 2>&1
  rc=$?
  end=$(date +%s)
  {
    echo "===== $name: $*"
    cat "$log"
    echo "===== $name: exit code $rc"
  } >>"$all_log"
  local errors
  # memcheck/initcheck/synccheck end with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
  errors=$( (grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$log" | awk '{print $3}'
             grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" | awk '{print $3}') |
            awk '{s += $1} END {print s + 0}')
  if [[ $rc -eq 124 ]]; then
    result=FAIL detail="timed out after ${step_timeout}s"
  elif [[ $rc -eq 77 || ( $kind == sanitizer && $(grep -c 'SKIP two_contexts' "$log") -gt 0 ) ]]; then
    result=SKIP detail=$(grep -m1 SKIP "$log")
  elif [[ $kind == sanitizer ]] && grep -q 'Target application terminated before first instrumented API call' "$log"; then
    result=SKIP detail="made no CUDA call: nothing for the sanitizer to check (exit $rc)"
  elif [[ $kind == sanitizer ]]; then
    local summaries
    summaries=$(grep -Ec '(ERROR|RACECHECK) SUMMARY:' "$log")
    if [[ $rc -eq 0 && $errors -eq 0 && $summaries -gt 0 ]]; then
      result=PASS detail="0 errors in $summaries process(es)"
    else
      result=FAIL detail="exit $rc, $errors errors; $(grep -m1 -E '=========  (Invalid|Race|Uninitialized|Barrier|Program hit)|FAIL' "$log")"
    fi
  else
    if [[ $rc -eq 0 ]]; then
      result=PASS detail=$(grep -m1 -E 'PASS|passed' "$log")
    else
      result=FAIL detail="exit $rc; $(grep -m1 FAIL "$log")"
    fi
  fi
  record "$name" "$result" "$((end - start))" "$detail"
  tail -n 25 "$log" | sed 's/^/    | /' >&2
}

echo "GPU reliability checks over $gpu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
run_step two_contexts plain "$rel/two_contexts"
if [[ ${results[0]} == SKIP ]]; then
  echo "run.sh: no CUDA driver or GPU here; nothing else to check" >&2
  exit 77
fi

if [[ -z "$sanitizer" ]]; then
  record compute-sanitizer FAIL 0 "compute-sanitizer not found (PATH, /usr/local/cuda*/bin)"
else
  "$sanitizer" --version | tail -n 1
  cs=("$sanitizer" --error-exitcode 99 --target-processes all --print-limit 20)
  run_step memcheck:two_contexts sanitizer "${cs[@]}" --tool memcheck --leak-check full "$rel/two_contexts"
  run_step racecheck:two_contexts sanitizer "${cs[@]}" --tool racecheck "$rel/two_contexts"
  if [[ -x "$gpu/bin/app" ]]; then
    run_step memcheck:app sanitizer "${cs[@]}" --tool memcheck "$gpu/bin/app"
    run_step memcheck:api_test sanitizer "${cs[@]}" --tool memcheck "$gpu/bin/api_test"
    run_step memcheck:so_test sanitizer "${cs[@]}" --tool memcheck "$gpu/bin/so_test" "$gpu/lib/libexample_kernels.so"
  else
    record memcheck:examples FAIL 0 "$gpu/bin/app is missing: run tools/gpu pack reliability"
  fi
  if [[ -f "$gpu/tests/run_all.py" ]]; then
    # every example kernel through ctypes; test_binaries.py is covered by the steps above.
    # Each step's own summary goes to a scratch folder: $OUT/gpu_test_summary.json is the full
    # examples run's (`tools/gpu run examples`) and must not be overwritten by these subsets.
    step_json_dir=$(mktemp -d)
    for k in api add scale softmax matmul scalars big_smem; do
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 run_step "memcheck:kernel:$k" sanitizer "${cs[@]}" --tool memcheck \
        "$python" "$gpu/tests/run_all.py" --gpu-dir "$gpu" --no-pytest -k "test_$k" \
        --json "$step_json_dir/$k.json"
    done
    rm -rf "$step_json_dir"
  fi
fi

failed=0
for r in "${results[@]}"; do [[ $r == FAIL ]] && failed=$((failed + 1)); done
echo "run.sh: ${#results[@]} steps, $failed failed"

if [[ -n "${OUT:-}" ]]; then
  {
    echo '{"format": "rules_triton.gpu_reliability.v1", "steps": ['
    for i in "${!names[@]}"; do
      detail=${details[$i]//\\/\\\\}
      detail=${detail//\"/\\\"}
      printf '  {"name": "%s", "result": "%s", "seconds": %s, "detail": "%s"}%s\n' \
        "${names[$i]}" "${results[$i]}" "${seconds[$i]}" "$detail" \
        "$([[ $i -lt $((${#names[@]} - 1)) ]] && echo ,)"
    done
    echo "], \"failed\": $failed}"
  } >"$OUT/gpu_reliability_summary.json"
fi
((failed == 0))
