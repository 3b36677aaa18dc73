#!/usr/bin/env python3
"""Writes tools/locks/triton-X.Y.lock: the pins of tools/requirements.lock with another triton.

One lock per supported triton minor (SUPPORTED below; the range
rules/private/repositories/python_env.bzl accepts). Same format and same hashes policy as tools/requirements.lock (tools/setup installs
either with --require-hashes); only triton changes. Regenerate after a pin changes:
    python3 tools/lock_versions.py
Why a separate file per version: a monorepo pins whichever triton its torch needs, and pip's
--require-hashes wants every hash of exactly one version.
"""
import re
import ssl
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import lock_requirements  # noqa: E402  (the pins of the other packages and the hash fetcher)

# Newest patch release of each supported minor.
SUPPORTED = {"3.5": "3.5.1", "3.6": "3.6.0", "3.7": "3.7.1", "3.8": "3.8.0", "3.9": "3.9.0"}

# CPython 3.10-3.14 manylinux wheels. From 3.9.0 on, triton ships one cp312-abi3 wheel for
# CPython >= 3.12 instead of cp312/cp313/cp314 ones (and no cp310 wheel); free-threaded
# (cp314t) wheels are left out, as in tools/requirements.lock.
TRITON_WHEEL = re.compile(r"(cp31[0-4]-cp31[0-4]|cp312-abi3)-manylinux_2_2[78]_(x86_64|aarch64)")


def main() -> None:
    lock_requirements.TRITON_WHEEL = TRITON_WHEEL
    context = ssl.create_default_context()
    out_dir = Path(__file__).parent / "locks"
    out_dir.mkdir(exist_ok=True)
    for minor, version in SUPPORTED.items():
        pins = dict(lock_requirements.PINS, triton=version)
        lines = [f"# triton {version}: tools/setup --triton={minor} installs this file.\n"
                 + lock_requirements.HEADER.replace("tools/lock_requirements.py",
                                                    "tools/lock_versions.py")]
        for name, pin in pins.items():
            hashes = lock_requirements.wheel_hashes(name, pin, context)
            lines.append(f"{name}=={pin} \\")
            lines.extend(f"    --hash=sha256:{h} \\" for h in hashes[:-1])
            lines.append(f"    --hash=sha256:{hashes[-1]}")
        (out_dir / f"triton-{minor}.lock").write_text("\n".join(lines) + "\n")
        print(f"tools/locks/triton-{minor}.lock: triton=={version}")


if __name__ == "__main__":
    main()
