#!/usr/bin/env bash
# Checks the IR output groups of //tests/rules:add: 8 PTX files targeting their SM, 8 SASS
# listings of the kernel, and non-empty TTIR/TTGIR/LLIR. Args: ptx... -- sass... -- other...
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
ptx=() sass=() other=() section=ptx
for arg in "$@"; do
  if [[ "$arg" == "--" ]]; then
    [[ $section == ptx ]] && section=sass || section=other
    continue
  fi
  case $section in
    ptx) ptx+=("$arg") ;;
    sass) sass+=("$arg") ;;
    other) other+=("$arg") ;;
  esac
done
(( ${#ptx[@]} == 8 )) || fail "expected 8 ptx files, got ${#ptx[@]}"
(( ${#sass[@]} == 8 )) || fail "expected 8 sass files, got ${#sass[@]}"
(( ${#other[@]} == 24 )) || fail "expected 24 ttir/ttgir/llir files, got ${#other[@]}"
for f in "${ptx[@]}"; do
  sm=${f##*_sm}; sm=${sm%.ptx}
  grep -q "^\.target sm_${sm}" "$f" || fail "$f does not target sm_${sm}"
  grep -q "\.entry add_kernel" "$f" || fail "$f has no add_kernel entry"
done
for f in "${sass[@]}"; do
  grep -q "^Function:add_kernel" "$f" || fail "$f is not a SASS listing of add_kernel"
  grep -q "EXIT" "$f" || fail "$f has no instructions"
done
for f in "${other[@]}"; do
  [[ -s "$f" ]] || fail "$f is empty"
done
grep -q "tt.func" "$(printf '%s\n' "${other[@]}" | grep '\.ttir$' | head -1)" || fail "ttir has no tt.func"
echo "PASS: 8 ptx, 8 sass, 24 ttir/ttgir/llir files"
