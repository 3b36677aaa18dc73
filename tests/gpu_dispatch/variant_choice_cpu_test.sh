#!/usr/bin/env bash
# variant_choice_cpu_test: what of the GPU dispatch check can run without a GPU.
#   1. no driver (RULES_TRITON_REAL_LIBCUDA unset, or naming a missing file): exit 77, "SKIP";
#   2. the fake driver (tests/fake_cuda, linked with the real driver's soname libcuda.so.1) as
#      the "real" one behind the recording shim: every variant choice passes (sm_90: s0/s1/s2
#      of sm90 and no sm80 cubin loaded; sm_86: those of sm80) and the shim's image hashes
#      equal the fake's own records;
#   3. without the shim first on LD_LIBRARY_PATH: a setup error (exit 2), not a silent pass;
#   4. run.sh on a copy of the .gpu/dispatch layout, with the fake as the real driver: exit 0 and
#      $OUT/variant_choice.txt written; with no driver given it skips (77) or, on a GPU machine,
#      passes (0).
# $1: the shim, $2: variant_choice, $3: the fake libcuda.so.1, $4: run.sh, $5...: matmul cubins.
set -uo pipefail
shim=$1 prog=$2 fake=$3 run_sh=$4
shift 4
cubins=("$@")
abs() { printf '%s/%s\n' "$(cd "$(dirname "$1")" && pwd)" "$(basename "$1")"; }
shim_dir=$(cd "$(dirname "$shim")" && pwd)
fake_abs=$(abs "$fake")
fake_dir=$(dirname "$fake_abs")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

fail() {
  echo "variant_choice_cpu_test: FAIL: $*"
  failures=$((failures + 1))
}

# run NAME WANT_RC GREP... -- ENV... : runs the program with the given environment.
expect() {
  local name=$1 want=$2 out rc pattern
  shift 2
  local patterns=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do patterns+=("$1"); shift; done
  shift
  out=$(env -u RULES_TRITON_REAL_LIBCUDA "$@" 2>&1)
  rc=$?
  echo "---- $name (exit $rc)"
  echo "$out"
  [[ $rc == "$want" ]] || fail "$name: exit $rc, want $want"
  for pattern in "${patterns[@]}"; do
    grep -qE -- "$pattern" <<<"$out" || fail "$name: output lacks /$pattern/"
  done
}

[[ ${#cubins[@]} == 24 ]] || fail "24 matmul cubins expected, got ${#cubins[@]}"

expect "no driver" 77 "SKIP: no CUDA driver" -- \
  LD_LIBRARY_PATH="$shim_dir" "$prog" "${cubins[@]}"
expect "driver path missing" 77 "SKIP: no CUDA driver" -- \
  LD_LIBRARY_PATH="$shim_dir" RULES_TRITON_REAL_LIBCUDA=/nonexistent/libcuda.so.1 "$prog" "${cubins[@]}"

sm90_patterns=("^variant_choice: 22 passed, 0 failed$"
  "^algo 0 aligned -> matmul_a0_s0_sm90 \(expected matmul_a0_s0_sm90\) .* PASS$"
  "^algo 3 misaligned -> matmul_a3_s1_sm90 \(expected matmul_a3_s1_sm90\) .* PASS$"
  "^algo 2 transposed -> matmul_a2_s2_sm90 \(expected matmul_a2_s2_sm90\) .* PASS$"
  "^algo 1 odd_k -> matmul_a1_s1_sm90 \(expected matmul_a1_s1_sm90\) .* PASS$"
  "^loads: 12 images \(sm80: 0, sm90: 12\) -> only sm90 cubins loaded on sm_90: PASS$"
  "^shim: 12 loads hashed like the fake driver's own records: PASS$")
expect "fake driver sm_90" 0 "${sm90_patterns[@]}" -- \
  LD_LIBRARY_PATH="$shim_dir" RULES_TRITON_REAL_LIBCUDA="$fake_abs" "$prog" "${cubins[@]}"
expect "fake driver sm_86" 0 "^variant_choice: 22 passed, 0 failed$" \
  "^algo 0 misaligned -> matmul_a0_s1_sm80 \(expected matmul_a0_s1_sm80\)" \
  "only sm80 cubins loaded on sm_86: PASS" -- \
  LD_LIBRARY_PATH="$shim_dir" RULES_TRITON_REAL_LIBCUDA="$fake_abs" VARIANT_CHOICE_FAKE_SM=86 "$prog" "${cubins[@]}"
expect "shim not first" 2 "is not the recording shim" -- \
  LD_LIBRARY_PATH="$fake_dir" RULES_TRITON_REAL_LIBCUDA="$fake_abs" "$prog" "${cubins[@]}"
expect "shim pointed at itself" 2 "is the recording shim itself" -- \
  LD_LIBRARY_PATH="$shim_dir" RULES_TRITON_REAL_LIBCUDA="$(abs "$shim")" "$prog" "${cubins[@]}"

# run.sh on the layout `tools/gpu pack dispatch` writes.
dispatch="$tmp/dispatch"
rm -rf "$dispatch" "$tmp/out"
mkdir -p "$dispatch/cubins" "$tmp/out"
cp "$shim" "$prog" "$dispatch/"
cp "${cubins[@]}" "$dispatch/cubins/"
chmod u+w "$dispatch"/* "$dispatch"/cubins/*
expect "run.sh with the fake driver" 0 "${sm90_patterns[@]}" "^run.sh: variant_choice exited with 0$" -- \
  RULES_TRITON_DISPATCH_DIR="$dispatch" RULES_TRITON_REAL_LIBCUDA="$fake_abs" OUT="$tmp/out" bash "$run_sh"
if [[ -f "$tmp/out/variant_choice.txt" ]]; then
  grep -q "^variant_choice: 22 passed, 0 failed$" "$tmp/out/variant_choice.txt" || fail "\$OUT/variant_choice.txt lacks the summary"
else
  fail "run.sh did not write \$OUT/variant_choice.txt"
fi
out=$(env -u RULES_TRITON_REAL_LIBCUDA RULES_TRITON_DISPATCH_DIR="$dispatch" bash "$run_sh" 2>&1)
rc=$?
echo "---- run.sh, driver searched for (exit $rc)"
echo "$out"
case $rc in
  77) grep -q "SKIP" <<<"$out" || fail "run.sh exit 77 without a SKIP message" ;;
  0) ;;  # a machine with a GPU
  *) fail "run.sh without a driver given: exit $rc, want 77 (no GPU here) or 0" ;;
esac
expect "run.sh without .gpu/dispatch" 2 "tools/gpu pack dispatch" -- RULES_TRITON_DISPATCH_DIR="$tmp/nowhere" bash "$run_sh"

if (( failures )); then
  echo "variant_choice_cpu_test: $failures failure(s)"
  exit 1
fi
echo "variant_choice_cpu_test: ok"
