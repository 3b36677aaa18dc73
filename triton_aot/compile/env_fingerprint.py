"""Prints the fingerprint of the Python environment that compiles Triton kernels, as JSON.

Run by the repository rule that defines @rules_triton_python, with the chosen interpreter
(`python3 -I env_fingerprint.py`). Its output has two keys:

- "fingerprint": the text of `fingerprint.json`, which every Triton action takes as an input,
  so that the action keys (local, disk and remote caches) change exactly when the compiler
  changes: a different Python, triton build, absl-py or ptxas gives a different text, the same
  environment (on any machine, at any path) gives the same text byte for byte.
- "watch": absolute paths the repository rule watches, so it re-runs when the environment
  changes under it (a `pip install` of another triton rewrites the dist-info RECORD).

The compile tool imports it too (`differences`): an action checks that the environment it runs
in is the one its fingerprint input describes, so no executor can store one environment's
cubins under another's action key.

Why the RECORD file: pip writes it on install with the sha256 of every installed file
(libtriton.so, the bundled ptxas, the Python sources), so its hash identifies the installed
files exactly without reading ~500 MB. Environments without a RECORD (editable or conda
installs) fall back to hashing the package's files themselves.

Standard library only: it runs before anything else is known about the interpreter.
"""

import hashlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata

# Bumped when the fingerprint's content changes meaning, so old cache entries never match.
FORMAT = "rules_triton.env_fingerprint.v2"


def _sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def _record_path(dist):
    for f in dist.files or ():
        if f.name == "RECORD" and f.parent.name.endswith(".dist-info"):
            path = f.locate()
            if os.path.isfile(path):
                return os.path.realpath(path)
    return None


def _hash_tree(root):
    """sha256 over (relative path, content) of every file under `root`, in a fixed order."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".pyc"):
                continue
            path = os.path.join(dirpath, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
            digest.update(b"\0")
    return digest.hexdigest()


def dist_fingerprint(name, package_dir=None):
    """{"version", "files_sha256", "source"} of an installed distribution; watched paths."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return {"version": None}, []
    record = _record_path(dist)
    if record is not None:
        with open(record, "rb") as f:
            data = f.read()
        # RECORD's own line has no hash; its lines are in install order, which pip keeps
        # stable for one wheel, but sort them so that two installers agree.
        lines = sorted(line for line in data.decode("utf-8", "replace").splitlines() if line)
        return ({"version": dist.version, "files_sha256": _sha256_bytes("\n".join(lines).encode()),
                 "source": "RECORD"}, [record])
    if package_dir and os.path.isdir(package_dir):
        return {"version": dist.version, "files_sha256": _hash_tree(package_dir),
                "source": "files"}, []
    return {"version": dist.version, "files_sha256": None, "source": "none"}, []


def _ptxas_paths(triton_dir):
    """The ptxas binaries bundled in triton (3.5 ships a second one for Blackwell)."""
    bin_dir = os.path.join(triton_dir, "backends", "nvidia", "bin")
    if not os.path.isdir(bin_dir):
        return []
    return sorted(os.path.join(bin_dir, n) for n in os.listdir(bin_dir) if n.startswith("ptxas"))


def ptxas_fingerprint(path, run=True):
    """Version line and sha256 of one ptxas: what turns PTX into the cubins we ship.

    `run=False` leaves the version line out (it follows from the binary, which the sha256
    names): what a per-action check needs, without starting ptxas in every action."""
    with open(path, "rb") as f:
        digest = _sha256_bytes(f.read())
    if not run:
        return {"name": os.path.basename(path), "sha256": digest}
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                             check=False).stdout
        # "Cuda compilation tools, release 12.8, V12.8.93" and "Build cuda_12.8.r12.8/compiler.
        # 35583870_0"; the banner and the "Built on" date add nothing.
        version = "; ".join(l.strip() for l in out.splitlines()
                            if "release" in l or l.startswith("Build "))
    except OSError as e:
        version = "cannot run: %s" % e.strerror
    return {"name": os.path.basename(path), "version": version, "sha256": digest}


def installed_packages(skip, watch_records=True):
    """Sorted "name==version" of the distributions on sys.path (first one of each name, as
    imports find them), and the RECORD files of those pip installed (watched: a pip install
    rewrites them; finding them lists every installed file, which a check need not do)."""
    seen, watch = {}, []
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if not name or name in seen or name in skip:
            continue
        seen[name] = dist.version
        record = _record_path(dist) if watch_records else None
        if record is not None:
            watch.append(record)
    return sorted("%s==%s" % item for item in seen.items()), watch


def fingerprint(for_check=False):
    """(fingerprint text, watched paths). `for_check`: for a tool checking its own environment,
    which needs neither the watched paths nor ptxas's version line (see `differences`)."""
    import triton  # the probe in python_env.bzl has already reported a missing triton

    triton_dir = os.path.dirname(os.path.realpath(triton.__file__))
    triton_info, watch = dist_fingerprint("triton", triton_dir)
    if triton_info["version"] is None:  # triton importable without dist metadata
        triton_info = {"version": triton.__version__, "files_sha256": _hash_tree(triton_dir),
                       "source": "files"}
    absl_info, absl_watch = dist_fingerprint("absl-py")
    watch += absl_watch
    ptxas = [ptxas_fingerprint(p, run=not for_check) for p in _ptxas_paths(triton_dir)]
    watch += [os.path.realpath(p) for p in _ptxas_paths(triton_dir)]
    packages, package_watch = installed_packages(("triton", "absl-py"),
                                                 watch_records=not for_check)
    watch += package_watch
    env = {
        "format": FORMAT,
        # Not the interpreter's path: two machines with the same environment at different
        # paths must share cache entries.
        "python": {
            "implementation": sys.implementation.name,
            "version": platform.python_version(),
            "build": list(platform.python_build()),
            "machine": platform.machine(),
        },
        "triton": triton_info,
        "absl_py": absl_info,
        "ptxas": ptxas,
        # Every other installed distribution, by version: kernel files import them (torch,
        # kernel libraries named by kernel_module), so another version is another action key.
        "packages": packages,
    }
    watch.append(os.path.realpath(sys.executable))
    return json.dumps(env, indent=1, sort_keys=True) + "\n", sorted(set(watch))


_CURRENT = None


def current():
    """This process's fingerprint, computed once (a worker's environment cannot change under it:
    the fingerprint is in the worker's key), without ptxas's version line (see `differences`)."""
    global _CURRENT
    if _CURRENT is None:
        _CURRENT = fingerprint(for_check=True)[0]
    return _CURRENT


def _without_ptxas_versions(env):
    return dict(env, ptxas=[{k: v for k, v in p.items() if k != "version"}
                            for p in env.get("ptxas", [])])


def _summary(env):
    """One line naming what tells environments apart: Python, triton, ptxas."""
    python = env.get("python", {})
    triton = env.get("triton", {})
    ptxas = ", ".join("%s %s" % (p.get("name"), (p.get("sha256") or "")[:12])
                      for p in env.get("ptxas", []))
    return "Python %s, triton %s (files %s), ptxas %s" % (
        python.get("version"), triton.get("version"), (triton.get("files_sha256") or "-")[:12],
        ptxas or "none")


def differences(expected_text, actual_text):
    """"" when the two fingerprints agree; else one line saying what differs.

    ptxas's version lines are not compared: a ptxas is named by its sha256 (so `actual` may be
    computed without running it)."""
    if expected_text == actual_text:
        return ""
    try:
        expected = _without_ptxas_versions(json.loads(expected_text))
        actual = _without_ptxas_versions(json.loads(actual_text))
    except ValueError:
        return "the fingerprint file is not JSON"
    if expected == actual:
        return ""
    if expected.get("format") != actual.get("format"):
        return "fingerprint format %s, expected %s" % (actual.get("format"),
                                                         expected.get("format"))
    parts = []
    if _summary(expected) != _summary(actual):
        parts.append("expected %s; found %s" % (_summary(expected), _summary(actual)))
    for key in ("absl_py",):
        if expected.get(key) != actual.get(key):
            parts.append("%s %s, expected %s" % (key.replace("_", "-"),
                                                   (actual.get(key) or {}).get("version"),
                                                   (expected.get(key) or {}).get("version")))
    want, have = set(expected.get("packages", [])), set(actual.get("packages", []))
    if want != have:
        missing, extra = sorted(want - have), sorted(have - want)
        text = []
        if missing:
            text.append("missing " + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
        if extra:
            text.append("not expected " + ", ".join(extra[:5]) + (" ..." if len(extra) > 5 else ""))
        parts.append("installed packages differ (%s)" % "; ".join(text))
    if expected.get("python") != actual.get("python") and not parts:
        parts.append("Python build %s, expected %s" % (actual.get("python"),
                                                       expected.get("python")))
    return "; ".join(parts) or "the fingerprints differ"


def main():
    text, watch = fingerprint()
    print(json.dumps({"fingerprint": text, "watch": watch}))


if __name__ == "__main__":
    main()
