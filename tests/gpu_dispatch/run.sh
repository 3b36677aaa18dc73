#!/usr/bin/env bash
# tests/gpu_dispatch/run.sh: on the GPU machine, from the repository root, after
# `tools/gpu pack dispatch` filled .gpu/dispatch/ on the build machine:
#
#   tools/gpu run dispatch       (or tests/gpu_dispatch/run.sh)
#
# Finds the real libcuda.so.1 (ldconfig -p, then the usual install paths), puts the recording
# shim of .gpu/dispatch first on LD_LIBRARY_PATH, points the shim at the real driver through
# RULES_TRITON_REAL_LIBCUDA and runs variant_choice on the matmul cubins. Prints its output and,
# when OUT is set, writes it to $OUT/variant_choice.txt.
#
# Environment (optional): RULES_TRITON_REAL_LIBCUDA (use this driver, skip the search),
# RULES_TRITON_DISPATCH_DIR (instead of .gpu/dispatch).
# Exit code: variant_choice's (0 pass, 1 a check failed, 2 setup error, 77 no driver / no GPU);
# 2 when .gpu/dispatch is missing.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${RULES_TRITON_DISPATCH_DIR:-$repo/.gpu/dispatch}
log=${OUT:+$OUT/variant_choice.txt}

say() {
  printf '%s\n' "$*"
  [[ -z "$log" ]] || printf '%s\n' "$*" >>"$log"
}

[[ -z "$log" ]] || { mkdir -p "$OUT" && : >"$log"; }
if [[ ! -f "$dir/variant_choice" || ! -f "$dir/libcuda.so.1" ]] || ! compgen -G "$dir/cubins/*.cubin" >/dev/null; then
  say "run.sh: $dir is missing or incomplete: run tools/gpu pack dispatch on the build machine first"
  exit 2
fi
dir=$(cd "$dir" && pwd)
chmod +x "$dir/variant_choice" 2>/dev/null || true  # in case a copy lost the mode bits
shim=$(readlink -f "$dir/libcuda.so.1")

# The real driver: never the shim itself.
find_real_libcuda() {
  local ldconfig candidates=() c
  for ldconfig in "$(command -v ldconfig 2>/dev/null)" /sbin/ldconfig /usr/sbin/ldconfig; do
    [[ -n "$ldconfig" && -x "$ldconfig" ]] || continue
    while read -r c; do candidates+=("$c"); done < <("$ldconfig" -p 2>/dev/null | awk '$1 == "libcuda.so.1" && /x86-64|x86_64|AArch64|aarch64/ {print $NF}')
    break
  done
  candidates+=(/usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib64/libcuda.so.1
               /usr/local/nvidia/lib/libcuda.so.1 /usr/lib/wsl/lib/libcuda.so.1)
  for c in "${candidates[@]}"; do
    [[ -f "$c" && "$(readlink -f "$c")" != "$shim" ]] || continue
    printf '%s\n' "$c"
    return 0
  done
  return 1
}

real=${RULES_TRITON_REAL_LIBCUDA:-}
if [[ -z "$real" ]] && ! real=$(find_real_libcuda); then
  say "run.sh: SKIP: no CUDA driver (libcuda.so.1) on this machine; skipped"
  exit 77
fi
case "$real" in
  /*) ;;
  *) real="$(cd "$(dirname "$real")" && pwd)/$(basename "$real")" ;;
esac
say "run.sh: real driver $real -> $(readlink -f "$real"); shim $dir/libcuda.so.1"

cubins=("$dir"/cubins/*.cubin)
if [[ -n "$log" ]]; then
  RULES_TRITON_REAL_LIBCUDA=$real LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$dir/variant_choice" "${cubins[@]}" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
else
  RULES_TRITON_REAL_LIBCUDA=$real LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$dir/variant_choice" "${cubins[@]}" 2>&1
  rc=$?
fi
say "run.sh: variant_choice exited with $rc"
exit "$rc"
