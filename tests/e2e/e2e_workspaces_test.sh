#!/usr/bin/env bash
# e2e/monorepo and e2e/hub as their own Bazel workspaces (a module of their own each, using
# rules_triton through local_path_override as a user's repository uses the registry's): a nested
# `bazel test //...` in each, one after the other, as host_bazel_test does for e2e/smoke.
#
#   monorepo  kernels whose deps are py_libraries of every kind: //kernels:autotuned_scale_algos_test
#             and //tests:deps_test pass; `bazel run @rules_triton//tools:tune` packs the tuning
#             bundle of //tuning:scale_tuned (a user retuning a table) into a folder, with the
#             tuning command, which imports there with no rules_triton checkout
#   hub       a toolchain entirely from a rules_python pip hub: //tests:library_test and
#             //tests:toolchain_probe_test pass; then the same kernel library built again with
#             rules_triton's default toolchain (the set-up's venv, --extra_toolchains) gives the
#             same cubins byte for byte: the same triton and ptxas reached another way
#
# Cost: the nested Bazels share one output root, disk cache and repository cache in a persistent
# folder (below), so only the first run on a machine fetches the hub's wheels and compiles cold;
# later runs are incremental. Tagged `external`: what it checks lies outside its declared inputs.
# $1: the repository's MODULE.bazel (a runfile; its real path is the source tree).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

src=$(dirname "$(readlink -f "$1")")
[[ -f "$src/e2e/hub/MODULE.bazel" && -f "$src/e2e/monorepo/MODULE.bazel" ]] || fail "no source tree at $src"
command -v bazel >/dev/null || fail "no bazel on PATH; this test runs where tools/setup's rootfs (or your own Bazel >= 7) provides one"

# The default toolchain's interpreter (rules_triton's `triton` extension reads it): the one
# tools/bazel passes, else the rootfs's.
export RULES_TRITON_PYTHON=${RULES_TRITON_PYTHON:-/opt/rules_triton/venv/bin/python3}
[[ -x "$RULES_TRITON_PYTHON" ]] || fail "no interpreter with triton at $RULES_TRITON_PYTHON (set RULES_TRITON_PYTHON)"
unset BAZEL_REAL

state=/var/tmp/rules_triton_e2e_workspaces_test
mkdir -p "$state"
# One run at a time per machine: two checkouts testing at once share the state.
exec 8>"$state/lock"
flock 8

# In the rootfs there is no registry: the offline config (stub modules, local registry) stands in,
# as it does for tools/bazel; each module's .bazelrc imports the repository's.
flags=(--disk_cache="$state/disk_cache" --repository_cache="$state/repository_cache" --symlink_prefix=/)
[[ -d /opt/rules_triton/stub_modules ]] && flags+=(--config=rules_triton_offline)
out="$state/output_user_root"
nested() {  # nested WORKSPACE COMMAND ARGS...
  local ws=$1
  shift
  (cd "$src/e2e/$ws" && bazel --output_user_root="$out" --max_idle_secs=60 "$@")
}
cleanup() {
  for ws in monorepo hub; do nested "$ws" shutdown >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

expect_passed() {  # LOG LABEL...
  local log=$1 label
  shift
  for label in "$@"; do
    grep -qE "^$label +(\(cached\) )?PASSED" "$log" || fail "$label did not pass (see the log above)"
  done
}

echo "== e2e/monorepo: bazel test //..."
nested monorepo test //... "${flags[@]}" --test_output=errors 2>&1 | tee "$TEST_TMPDIR/monorepo.log"
expect_passed "$TEST_TMPDIR/monorepo.log" //kernels:autotuned_scale_algos_test //tests:deps_test

echo "== e2e/monorepo: bazel run @rules_triton//tools:tune (//tuning:scale_tuned)"
bundle="$TEST_TMPDIR/tune_bundle"
nested monorepo run @rules_triton//tools:tune --@rules_triton//tools:tune_library=//tuning:scale_tuned \
  "${flags[@]}" -- "$bundle" --missing_only --reps=3 2>&1 | tee "$TEST_TMPDIR/tune.log"
[[ ${PIPESTATUS[0]} == 0 ]] || fail "bazel run @rules_triton//tools:tune failed"
b="$bundle/scale_tuned"
for f in pack.json library.json inputs.py tune.sh libscale_tuned_tune.so triton_aot/tuning/tune.py \
    triton_aot/contract/library.py; do
  [[ -f "$b/$f" || -f "$bundle/$f" ]] || fail "the bundle has no $f: $(cd "$bundle" && find . -type f | sort | head -20)"
done
compgen -G "$b/records/*.json" >/dev/null || fail "the bundle has no variant records"
compgen -G "$b/cubins/*.cubin" >/dev/null || fail "the bundle has no cubins"
[[ ! -e "$b/STALE" ]] || fail "the committed e2e/monorepo/tuning/scale_tuned.tuning_hints.bzl is stale"
"$RULES_TRITON_PYTHON" - "$b/pack.json" <<'PY' || fail "pack.json is not what the tuning command reads"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["format"] == "rules_triton.tune_pack.v2", p
assert p["label"] == "//tuning:scale_tuned" and p["library"] == "library.json", p
assert p["table"] == "tuning/scale_tuned.tuning.json", p
d = json.load(open(sys.argv[1].replace("pack.json", "library.json")))
assert d["name"] == "scale_tuned" and d["tuning"]["key"] == ["n"], d
PY
# The bundled tuning command runs from the bundle alone (its usage; the tuning itself needs a GPU).
(cd "$TEST_TMPDIR" && PYTHONPATH="$bundle" "$RULES_TRITON_PYTHON" -B -m triton_aot.tuning.tune --help >/dev/null) \
  || fail "PYTHONPATH=DIR python3 -m triton_aot.tuning.tune does not start"
grep -q "python3 -m triton_aot.tuning.tune DIR/scale_tuned" "$TEST_TMPDIR/tune.log" || fail "no GPU-side command printed"
grep -q "sh DIR/scale_tuned/tune.sh" "$TEST_TMPDIR/tune.log" || fail "no tune.sh printed"
grep -q -- '-m triton_aot.tuning.tune "$b" --reps=3 --missing_only "$@"' "$b/tune.sh" \
  || fail "the bundle's tune.sh lacks the flags: $(cat "$b/tune.sh")"
nested monorepo shutdown

echo "== e2e/hub: bazel test //..."
nested hub test //... "${flags[@]}" --test_output=errors 2>&1 | tee "$TEST_TMPDIR/hub.log"
expect_passed "$TEST_TMPDIR/hub.log" //tests:library_test //tests:toolchain_probe_test

# The hub's cubins, then the same library's with rules_triton's default toolchain.
cubins() {  # the cubins of //kernels:axpy_cubins, built with the extra flags given, into $1
  local dest=$1 execroot f n=0
  shift
  nested hub build //kernels:axpy_cubins "${flags[@]}" "$@"
  execroot=$(nested hub info execution_root "${flags[@]}" "$@" 2>/dev/null)
  mkdir -p "$dest"
  while IFS= read -r f; do
    cp "$execroot/$f" "$dest/"
    n=$((n + 1))
  done < <(nested hub cquery //kernels:axpy_cubins --output=files "${flags[@]}" "$@" 2>/dev/null)
  ((n > 0)) || fail "//kernels:axpy_cubins has no cubins"
}
compile_command() {  # the first TritonCompile command line, with the extra flags given
  nested hub aquery 'mnemonic("TritonCompile", //kernels:axpy)' --output=text "${flags[@]}" "$@" 2>/dev/null \
    | sed -n 's/^  Command Line: //p' | head -1
}
echo "== e2e/hub: the same cubins with rules_triton's default toolchain"
cubins "$TEST_TMPDIR/hub_cubins"
hub_cmd=$(compile_command)
default=(--extra_toolchains=@rules_triton//toolchains:default_triton_toolchain)
cubins "$TEST_TMPDIR/default_cubins" "${default[@]}"
default_cmd=$(compile_command "${default[@]}")
[[ -n "$hub_cmd" && -n "$default_cmd" ]] || fail "no TritonCompile action of //kernels:axpy in aquery"
[[ "$hub_cmd" != "$default_cmd" ]] || fail "both builds ran the same compile command: the default toolchain was not selected"
[[ "$default_cmd" == *"$RULES_TRITON_PYTHON"* || "$default_cmd" == *rules_triton_python* ]] \
  || fail "the default toolchain's compile does not run $RULES_TRITON_PYTHON: $default_cmd"
n=0
for f in "$TEST_TMPDIR"/hub_cubins/*; do
  other="$TEST_TMPDIR/default_cubins/$(basename "$f")"
  [[ -f "$other" ]] || fail "no $(basename "$f") with the default toolchain"
  cmp "$f" "$other" || fail "$(basename "$f") differs between the hub's and the default toolchain"
  echo "same: $(basename "$f") ($(sha256sum <"$f" | cut -c1-16))"
  n=$((n + 1))
done
[[ $(find "$TEST_TMPDIR/default_cubins" -type f | wc -l) == "$n" ]] || fail "the two builds made different cubin sets"
echo "PASS: e2e/monorepo and e2e/hub tested as their own workspaces; $n cubins identical across toolchains"
