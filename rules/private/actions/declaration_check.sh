#!/bin/sh
# The TritonDeclarationCheck action: usage: declaration_check.sh CAPTURED COMMITTED STAMP MESSAGE
# Writes the empty STAMP when the committed NAME.launcher.bzl is byte for byte what the capture
# wrote; else prints MESSAGE (one line: which file is stale, and the command that updates it)
# and fails, which fails the build of every target that carries the check's validation.
if cmp -s "$1" "$2"; then
  : >"$3"
else
  printf '%s\n' "$4" >&2
  exit 1
fi
