#!/usr/bin/env python3
"""Regenerates tools/requirements.lock: exact pins with every wheel hash PyPI lists for them.

Why hashes: tools/setup installs with --require-hashes, so the build environment is exactly
what was reviewed. triton is restricted to the CPython 3.10-3.14 manylinux wheels we support.
"""
import re
import ssl
import sys
import urllib.request
from pathlib import Path

PINS = {
    "triton": "3.6.0",
    "absl-py": "2.5.1",
    "pytest": "9.2.0",
    "pluggy": "1.7.0",
    "iniconfig": "2.3.1",
    "packaging": "26.3",
    "pygments": "2.21.0",
    "hypothesis": "6.170.15",
    "sortedcontainers": "2.4.0",
}
TRITON_WHEEL = re.compile(r"cp31[0-4]-cp31[0-4]-manylinux_2_2[78]_(x86_64|aarch64)")
HEADER = """\
# Exact pins for the build-time Python environment (tools/setup installs it with
# --require-hashes). Regenerate with tools/lock_requirements.py after changing a pin.
# triton has wheels for CPython 3.10-3.14 on manylinux x86_64 (and aarch64); the hashes
# below cover exactly those, so pip refuses anything else.
"""


def wheel_hashes(name: str, version: str, context: ssl.SSLContext) -> list[str]:
    html = urllib.request.urlopen(f"https://pypi.org/simple/{name}/", context=context).read().decode()
    prefix = f"{name.replace('-', '_').lower()}-{version}-"
    hashes = []
    for filename, digest in re.findall(r'/([^/#"]+)#sha256=([0-9a-f]{64})', html):
        if not filename.lower().startswith(prefix) or not filename.endswith(".whl"):
            continue
        if name == "triton" and not TRITON_WHEEL.search(filename):
            continue
        hashes.append(digest)
    if not hashes:
        sys.exit(f"error: no wheels found for {name}=={version}")
    return sorted(hashes)


def main() -> None:
    context = ssl.create_default_context()
    lines = [HEADER]
    for name, version in PINS.items():
        hashes = wheel_hashes(name, version, context)
        lines.append(f"{name}=={version} \\")
        lines.extend(f"    --hash=sha256:{h} \\" for h in hashes[:-1])
        lines.append(f"    --hash=sha256:{hashes[-1]}")
    Path(__file__).with_name("requirements.lock").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
