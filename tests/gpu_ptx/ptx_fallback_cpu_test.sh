#!/usr/bin/env bash
# ptx_fallback_cpu_test: the GPU check of the PTX fallback, against the fake driver.
#   sm_90 and sm_120: the PTX libraries load their PTX (the fake records a PTX image; the
#     cuda:80 + cuda:100 one's is sm_80 too), the one without PTX reports
#     CUDA_ERROR_NO_BINARY_FOR_GPU: exit 0;
#   sm_100: the cuda:80 + cuda:100 library loads its sm_100a cubin: exit 0;
#   sm_86: all load the sm_80 cubin: exit 0;
#   sm_75: nothing fits, so the PTX library's expectation fails: exit 1 (the check can fail);
#   no driver on the library path: exit 77 (SKIP);
#   run.sh with the fake as the driver: exit 0, output in $OUT/ptx_fallback.txt.
# $1: ptx_fallback, $2: the fake libcuda.so.1 (with the real driver's soname), $3: run.sh.
set -uo pipefail
prog=$1 fake=$2 run_sh=$3
fake_dir=$(cd "$(dirname "$fake")" && pwd)
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

check() {  # check WANT_RC SM GREP...
  local want=$1 sm=$2 out rc
  shift 2
  out=$(PTX_FALLBACK_FAKE_SM=$sm LD_LIBRARY_PATH="$fake_dir" "$prog" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL: sm_$sm: exit code $rc, want $want"; echo "$out"; failures=$((failures + 1)); return
  fi
  for g in "$@"; do
    grep -qF -- "$g" <<<"$out" || { echo "FAIL: sm_$sm: no '$g' in:"; echo "$out"; failures=$((failures + 1)); }
  done
}

check 0 90 "device 0 is sm_90" "load_add_sm80_ptx() = CUDA_SUCCESS" "the fake driver loaded a PTX image" \
  "load_add_sm80_sm100_ptx() = CUDA_SUCCESS" "ok  : the PTX is the portable sm_80 one" \
  "load_add_sm80() = CUDA_ERROR_NO_BINARY_FOR_GPU" "add_sm80_default() = CUDA_ERROR_NO_BINARY_FOR_GPU" "PASS (sm_90)"
check 0 100 "device 0 is sm_100" "load_add_sm80_sm100_ptx() = CUDA_SUCCESS" "ok  : the cubin was loaded" "PASS (sm_100)"
check 0 120 "device 0 is sm_120" "the fake driver loaded a PTX image" "load_add_sm80() = CUDA_ERROR_NO_BINARY_FOR_GPU"
check 0 86 "device 0 is sm_86" "the fake driver loaded a cubin image" "load_add_sm80() = CUDA_SUCCESS" "PASS (sm_86)"
check 1 75 "load_add_sm80_ptx() = CUDA_ERROR_NO_BINARY_FOR_GPU" "FAILED (sm_75)"

out=$(LD_LIBRARY_PATH=/nonexistent "$prog" 2>&1); rc=$?
[[ $rc -eq 77 && "$out" == *SKIP* ]] || { echo "FAIL: no driver: exit $rc: $out"; failures=$((failures + 1)); }

# run.sh on the packed layout, the fake standing in for the real driver.
mkdir -p "$tmp/repo/tests/gpu_ptx" "$tmp/repo/.gpu/ptx" "$tmp/out"
cp "$run_sh" "$tmp/repo/tests/gpu_ptx/run.sh"
cp "$prog" "$tmp/repo/.gpu/ptx/ptx_fallback"
out=$(OUT="$tmp/out" RULES_TRITON_REAL_LIBCUDA="$(cd "$fake_dir" && pwd)/libcuda.so.1" PTX_FALLBACK_FAKE_SM=90 \
  bash "$tmp/repo/tests/gpu_ptx/run.sh" 2>&1); rc=$?
[[ $rc -eq 0 ]] || { echo "FAIL: run.sh: exit $rc: $out"; failures=$((failures + 1)); }
grep -q "PASS (sm_90)" "$tmp/out/ptx_fallback.txt" 2>/dev/null || { echo "FAIL: run.sh wrote no passing \$OUT/ptx_fallback.txt"; failures=$((failures + 1)); }

[[ $failures -eq 0 ]] && echo "ptx_fallback_cpu_test: all checks passed"
exit $((failures > 0))
