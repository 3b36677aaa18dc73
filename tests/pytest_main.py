"""Runs pytest on the test files given in argv inside a Bazel py_test.

Why a shared entry point: each pytest_test target runs exactly its own files, with caches and
temp files kept inside TEST_TMPDIR (nothing under HOME, nothing in the source tree).
"""
import os
import sys

import pytest


def main() -> int:
    tmp = os.environ.get("TEST_TMPDIR")
    args = ["-q", "-p", "no:cacheprovider", "-rs"]
    if tmp:
        os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(tmp, "triton_cache"))
        args += ["--basetemp", os.path.join(tmp, "pytest")]
    # Test modules import their siblings (harness.py, ...): put each test file's folder first.
    for path in sys.argv[1:]:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in sys.path:
            sys.path.insert(0, folder)
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args += ["--junitxml", xml]
    return pytest.main(args + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
