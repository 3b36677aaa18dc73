#!/bin/sh
# The archive-mode interpreter of the Triton toolchain (generated from
# rules/private/repositories/python_launcher.sh by @rules_triton_python_archive; see docs/design.md).
#
# Every Triton action runs this script instead of a python3 the executor would have to own. Its
# only other input is the archive next to it: the interpreter, its standard library, triton and
# absl-py. It unpacks the archive once per executor into a folder named by the archive's sha256,
# then execs the interpreter there with the action's arguments. So an executor that shares no
# files with the client (remote execution) needs only /bin/sh, tar, gzip and a glibc at least as
# new as the client's.
#
# Why a cache folder outside the action: unpacking costs ~4 s and 550 MB; once per executor
# (and archive) is cheap, once per action is not. The folder's name is the archive's content
# hash, so a new environment never sees an old one's files, and every action of one environment
# shares one copy. Concurrent actions: one unpacks under a lock (flock, when the executor has
# it), into a private temporary folder renamed into place, so no action ever sees a half-unpacked
# environment, even without the lock or after a killed action.
set -eu

sha256=@SHA256@
archive="$(dirname "$0")/@ARCHIVE@"
# A fixed path: the action's environment is fixed (it is part of the cache key), so the folder
# does not come from it. /tmp is where an executor keeps scratch that may vanish between actions.
# RULES_TRITON_PYTHON_CACHE is for executors that wrap actions with their own environment (and
# for tests); Bazel's actions never set it.
cache=${RULES_TRITON_PYTHON_CACHE:-/tmp/rules_triton_python}
env="$cache/$sha256"

fail() {
  echo "error: rules_triton archive-mode launcher: $*" >&2
  exit 1
}

unpack() {  # $1: the folder to unpack into, made here.
  mkdir "$1" || fail "cannot create $1"
  if ! tar -xzf "$archive" -C "$1"; then
    rm -rf "$1"
    fail "cannot unpack $archive into $1 (a broken archive, or the disk is full)"
  fi
}

scratch=""
if [ ! -x "$env/bin/python3" ]; then
  if mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
    if command -v flock >/dev/null 2>&1; then
      exec 9>"$cache/.$sha256.lock"
      flock 9
    fi
    if [ ! -x "$env/bin/python3" ]; then
      tmp="$cache/.$sha256.$$.partial"
      rm -rf "$tmp"
      unpack "$tmp"
      # Atomic: another action that got here first (without flock) wins, this copy goes.
      mv -T "$tmp" "$env" 2>/dev/null || rm -rf "$tmp"
    fi
    # The interpreter must not inherit the lock: it would hold it for as long as it runs.
    exec 9>&-
  else
    # No shared cache here (a read-only /tmp): a private copy for this action only.
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/rules_triton_python.XXXXXX") || fail "no writable temporary folder"
    env="$scratch/env"
    unpack "$env"
  fi
fi

# PYTHONHOME: sys.prefix is the unpacked folder, so the standard library is found there and not
# at the path the interpreter was built for. The libraries beyond glibc come with it.
PYTHONHOME="$env"
LD_LIBRARY_PATH="$env/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$env/site-packages"
export PYTHONHOME LD_LIBRARY_PATH PYTHONPATH
if [ -z "$scratch" ]; then
  exec "$env/bin/python3" "$@"
fi
status=0
"$env/bin/python3" "$@" || status=$?
rm -rf "$scratch"
exit "$status"
