#!/usr/bin/env bash
# exports_test: the dynamic symbol table of a shared library holds exactly the C API of the
# given kernels -- NAME, NAME_default, load_NAME, unload_NAME, NAME_get_num_algos and
# NAME_get_algo_info for each -- and nothing else (no variant launchers, no runtime helpers).
#
# Usage: exports_test.sh LIB.so NAME...
set -euo pipefail
lib=$1
shift
command -v nm >/dev/null || { echo "exports_test: nm (binutils) is not installed" >&2; exit 2; }
expected=$(for name in "$@"; do
  printf '%s\n' "$name" "${name}_default" "load_$name" "unload_$name" \
    "${name}_get_num_algos" "${name}_get_algo_info"
done | LC_ALL=C sort)
actual=$(nm -D --defined-only "$lib" | awk '{print $NF}' | LC_ALL=C sort)
if [[ "$actual" != "$expected" ]]; then
  echo "exports_test: FAIL: exported symbols of $lib differ from the public API"
  echo "--- expected (public API)  +++ actual (nm -D --defined-only)"
  diff <(echo "$expected") <(echo "$actual") || true
  exit 1
fi
echo "exports_test: ok: $lib exports exactly the $(echo "$expected" | wc -l) API symbols of: $*"
