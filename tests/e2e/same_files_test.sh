#!/usr/bin/env bash
# Args: FILE... -- FILE...: the two lists hold files of the same base names with the same bytes.
set -euo pipefail
declare -A first=()
while [[ $1 != -- ]]; do first[$(basename "$1")]=$1; shift; done
shift
(( $# == ${#first[@]} && $# > 0 )) || { echo "FAIL: ${#first[@]} files against $#"; exit 1; }
for f in "$@"; do
  other=${first[$(basename "$f")]:-}
  [[ -n "$other" ]] || { echo "FAIL: no $(basename "$f") in the first list"; exit 1; }
  cmp "$other" "$f" || { echo "FAIL: $(basename "$f") differs"; exit 1; }
  echo "same: $(basename "$f") ($(sha256sum < "$f" | cut -c1-16))"
done
echo "PASS: $# files identical"
