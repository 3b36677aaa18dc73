#!/bin/sh
# The tools run on their own (what `bazel run //triton_aot:compile -- --help` runs): each
# launcher starts its tool in the Triton toolchain's interpreter and prints its flags; a bad flag
# is one error: line and exit code 1.
set -eu

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

for tool in "$@"; do
  out=$("$tool" --help) || fail "$tool --help exited $?"
  case "$out" in
    *"usage: "*"verbose"*) ;;
    *) fail "$tool --help printed no usage and flags: $out" ;;
  esac
done

# compile: its own flags, and a bad flag is one error: line
out=$("$1" --help)
case "$out" in
  *--kernel_path*) ;;
  *) fail "compile --help lacks --kernel_path: $out" ;;
esac
if err=$("$1" --no_such_flag 2>&1); then
  fail "compile accepted --no_such_flag"
fi
case "$err" in
  "error: "*) ;;
  *) fail "compile --no_such_flag did not print one error: line: $err" ;;
esac
echo "PASS"
