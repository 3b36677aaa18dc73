#!/usr/bin/env bash
# tests/gpu_ptx/run.sh: on the GPU machine (no Bazel), from the repository root, after
# `tools/gpu pack ptx` filled .gpu/ptx/:
#
#   tools/gpu run ptx       (or tests/gpu_ptx/run.sh)
#
# Runs .gpu/ptx/ptx_fallback against the machine's driver: the cuda:80 library with PTX must
# load and compute x + y bit-exactly through the driver's JIT on a non-sm_8x GPU (an H100), the
# one without PTX must report CUDA_ERROR_NO_BINARY_FOR_GPU; prints the SM and driver it saw.
# RULES_TRITON_REAL_LIBCUDA=/path/libcuda.so.1 picks a driver (its folder goes first on
# LD_LIBRARY_PATH). With OUT set, the output is also written to $OUT/ptx_fallback.txt.
# Exit code: ptx_fallback's (0 pass, 1 a check failed, 77 no driver / no GPU); 2 when
# .gpu/ptx is missing.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=${RULES_TRITON_PTX_DIR:-$repo/.gpu/ptx}/ptx_fallback
if [[ ! -f "$prog" ]]; then
  echo "run.sh: $prog is missing: run tools/gpu pack ptx on the build machine first"
  exit 2
fi
chmod +x "$prog" 2>/dev/null || true
libpath=${LD_LIBRARY_PATH:-}
if [[ -n "${RULES_TRITON_REAL_LIBCUDA:-}" ]]; then
  libpath=$(dirname "$RULES_TRITON_REAL_LIBCUDA")${libpath:+:$libpath}
fi
if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  LD_LIBRARY_PATH=$libpath "$prog" 2>&1 | tee "$OUT/ptx_fallback.txt"
  rc=${PIPESTATUS[0]}
else
  LD_LIBRARY_PATH=$libpath "$prog" 2>&1
  rc=$?
fi
echo "run.sh: ptx_fallback exited with $rc"
exit "$rc"
