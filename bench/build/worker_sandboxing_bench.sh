#!/usr/bin/env bash
# bench/build/worker_sandboxing_bench.sh: the persistent worker's private tree of declared inputs
# (the default) against Bazel's own worker sandboxing (--worker_sandboxing, a command-line flag:
# an action cannot ask for it), on //tests/worker:scale_once (16 compiles and an import check).
# Each build re-runs every action: a comment is appended to the kernel file first (restored at
# the end). Three builds per mode, twice, alternating; prints each build's wall and critical path.
# About 3 minutes on 2 cores. Usage: bench/build/worker_sandboxing_bench.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
kernel=tests/worker/scale_once.py
saved=$(mktemp)
cp "$kernel" "$saved"
trap 'cp "$saved" "$kernel"; rm -f "$saved"' EXIT
log=$(mktemp)
run() {  # label, flags...
  local label=$1
  shift
  for i in 1 2 3; do
    echo "# $label $i $RANDOM" >>"$kernel"
    start=$(date +%s.%N)
    tools/bazel build //tests/worker:scale_once_default "$@" >"$log" 2>&1
    end=$(date +%s.%N)
    printf '%s build %d: %.1f s; %s\n' "$label" "$i" "$(echo "$end - $start" | bc)" \
      "$(grep -o 'Critical Path: .*' "$log")"
  done
}
for round in 1 2; do
  run "private tree" --noworker_sandboxing
  run "--worker_sandboxing" --worker_sandboxing
done
rm -f "$log"
