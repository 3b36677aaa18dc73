#!/usr/bin/env bash
# Runs fake_driver_test_bin with rules_triton's fake libcuda.so.1 first on LD_LIBRARY_PATH, the
# way a real driver is found. $1: the fake driver, $2: the test binary, $3...: cubins.
set -euo pipefail
fake=$1 bin=$2
shift 2
LD_LIBRARY_PATH="$(cd "$(dirname "$fake")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$bin" "$@"
