#!/usr/bin/env bash
# two_contexts on a machine without a CUDA driver (the CPU-only build machines): it must say SKIP
# and exit 77, not crash or fail. Where a driver and GPU exist it must PASS instead.
set -uo pipefail
bin=$1
out=$("$bin" 2>&1)
rc=$?
echo "$out"
if [[ $rc -eq 77 && "$out" == *"SKIP two_contexts"* ]]; then
  echo "ok: skipped without a driver (exit 77)"
  exit 0
fi
if [[ $rc -eq 0 && "$out" == *"PASS two_contexts"* ]]; then
  echo "ok: a driver and GPU are present here, and it passed"
  exit 0
fi
echo "unexpected: exit code $rc" >&2
exit 1
