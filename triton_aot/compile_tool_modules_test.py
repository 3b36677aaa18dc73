"""//triton_aot:compile_tool holds exactly the modules the compile tool imports.

TritonCompile actions take only that library as their tool sources (so that editing the link,
tuning or torch-op code re-runs no compile); a module the compile tool imports but the library
lacks would fail only in a sandboxed one-shot action. So the imports are read here, statically:
every `from triton_aot import X`, `from triton_aot.X import ...` and `"triton_aot.X"` string
(a module run by name) in the modules reachable from compile, worker and the package itself.

Args: the library's files ($(rootpaths //triton_aot:compile_tool)).
"""
import ast
import os
import sys
import unittest
from pathlib import Path

ROOTS = ("__init__", "compile", "worker")


def imported(path: Path, modules: set[str]) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module == "triton_aot":
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("triton_aot."):
            names = [node.module.split(".")[1]]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith("triton_aot.")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("triton_aot."):
            names = [node.value.split(".")[1]]
        out |= {n for n in names if n in modules}
    return out


def closure(package: Path) -> set[str]:
    modules = {p.stem for p in package.glob("*.py")}
    seen, todo = set(), list(ROOTS)
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += imported(package / f"{m}.py", modules)
    return seen


class CompileToolModulesTest(unittest.TestCase):

    def test_library_is_the_import_closure(self):
        listed = {Path(p).stem for p in ARGS if p.endswith(".py")}
        package = Path(next(p for p in ARGS if p.endswith("/compile.py"))).parent
        want = closure(package)
        self.assertEqual(sorted(want - listed), [],
                         "the compile tool imports these, but //triton_aot:compile_tool lacks "
                         "them: take them out of COMPILE_TOOL_EXCLUDES in triton_aot/BUILD.bazel")
        self.assertEqual(sorted(listed - want - {"compile_tool_modules_test"}), [],
                         "the compile tool never imports these: add them to "
                         "COMPILE_TOOL_EXCLUDES in triton_aot/BUILD.bazel")
        self.assertNotIn("torch_ops", listed)
        self.assertNotIn("tuning", listed)


if __name__ == "__main__":
    ARGS = [os.path.join(os.environ.get("RUNFILES_DIR", "."), "_main", a) if not os.path.exists(a)
            else a for a in sys.argv[1:]]
    sys.argv[1:] = []
    unittest.main()
