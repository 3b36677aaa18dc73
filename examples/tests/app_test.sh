#!/usr/bin/env bash
# app_test: runs the example app. Without a CUDA driver or GPU it must say so and exit with 77
# ("skipped") instead of crashing; with a GPU it must pass (exit 0).
set -uo pipefail
app=$1
out=$("$app" --quiet 2>&1)
rc=$?
echo "$out"
case $rc in
  0) echo "app_test: ok: the app ran on a GPU and every result matched" ;;
  77)
    if ! grep -q "skipped" <<<"$out"; then
      echo "app_test: FAIL: exit code 77 without a 'skipped' message"
      exit 1
    fi
    echo "app_test: ok: no GPU here, the app skipped cleanly (exit 77)" ;;
  *) echo "app_test: FAIL: the app exited with $rc"; exit 1 ;;
esac
