"""One cell row of the version matrix under Bazel: tools/version_matrix with an existing
triton environment (tools/setup's venv-triton-X.Y), on the test files and example kernels in
this test's runfiles. Fails when the environment is missing, has another triton, or any test
or compile fails."""

import os
import subprocess
import sys
from pathlib import Path


def main() -> int:
    # --name=value flags: Bazel drops an empty argument ("") when it tokenizes `args`.
    flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    version, python, kernel = flags["version"], flags.get("python", ""), flags["kernel"]
    problem = flags.get("problem", "")
    passed_on = [f"--{k}={flags[k]}" for k in ("deselect", "example_targets", "skip")
                 if k in flags]
    tests = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not python:
        print(f"no triton {version} environment ({problem or 'not in RULES_TRITON_VERSION_PYTHONS'}): "
              f"run tools/setup (it makes venv-triton-{version}; --test-tritons picks the versions), "
              "then tools/bazel", file=sys.stderr)
        return 1
    work = Path(os.environ["TEST_TMPDIR"]) / "matrix"
    cmd = [sys.executable, "tools/version_matrix", f"--versions={version}",
           f"--use-python={version}={python}", f"--work={work}",
           f"--kernels={Path(kernel).parent.resolve()}", f"--tests={','.join(tests)}", *passed_on]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
