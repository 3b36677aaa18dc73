"""Each stage's py_library holds exactly the stages its modules import, and only compile/ (and
capture/, which runs a launcher under Triton's JIT to record its launches) imports triton.

A Bazel action takes only its tool's stage library (and, through deps, the stages below it), so a
module that imports a stage its library lacks would fail only in a sandboxed action, and one
that lists a stage it never imports puts that stage's edits into the action's key (an edit to
tuning/ or torch/ must re-run no compile). The imports are read statically: every
`from triton_aot.S import ...`, `import triton_aot.S...` and `"triton_aot.S..."` string (a module
run by name), anywhere in a module, including the imports inside functions.

The stage table of docs/design.md (its "Stages" section) is held to the same facts: one row per
package, each row's imports and triton columns what the package's modules import.

Args: the stage_inputs file (`STAGE SHORT_PATH` per line: what each stage's library brings into
an action, as the triton_toolchain takes it), and docs/design.md.
"""
import ast
import os
import re
import sys
import unittest
from pathlib import Path

# compile/ compiles; capture/ runs launchers under Triton's JIT (its launches are recorded).
TRITON_STAGES = ("compile", "capture")


def stage_of(short_path: Path) -> str | None:
    """The stage a file belongs to ("" for triton_aot/__init__.py), by its path in the build."""
    parts = short_path.parts
    if parts[:1] != ("triton_aot",):
        return None
    return parts[1] if len(parts) > 2 else ""


def imports(path: Path) -> tuple[set[str], bool]:
    """(the stages a module imports, whether it imports triton)."""
    stages, triton = set(), False
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
            if node.module == "triton_aot":
                names = [f"triton_aot.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("triton_aot."):
            names = [node.value]
        for name in names:
            top, _, rest = name.partition(".")
            triton |= top == "triton"
            if top == "triton_aot" and rest:
                stages.add(rest.split(".")[0])
    return stages, triton


def doc_stage_table(text: str) -> dict[str, tuple[set[str], bool]]:
    """The rows of the first table after the `## Stages` heading: stage -> (imports, triton)."""
    section = text.split("\n## Stages\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`(\w+)`", cells[0]) if line.startswith("|") else None
        if m and len(cells) >= 4:
            imports = {s.strip() for s in cells[1].split(",")} - {"-", ""}
            rows[m.group(1)] = (imports, cells[2] == "yes")
    return rows


def read_stage_inputs(path: str) -> dict[str, list[Path]]:
    """Per stage, the short paths of the files its library brings."""
    libraries: dict[str, list[Path]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        stage, short_path = line.split(" ", 1)
        libraries.setdefault(stage, []).append(Path(short_path))
    return libraries


class StagesTest(unittest.TestCase):

    def setUp(self):
        self.libraries = read_stage_inputs(ARGS[0])
        root = Path(os.environ.get("RUNFILES_DIR", ".")) / "_main"
        self.modules = {name: [root / p for p in files if p.suffix == ".py" and stage_of(p) == name]
                        for name, files in self.libraries.items()}

    def test_every_stage_is_checked(self):
        # The checkout's folder (runfiles hold only the listed stages): a new stage is listed.
        package = (Path(os.environ.get("RUNFILES_DIR", ".")) / "_main" / "triton_aot" /
                   "__init__.py").resolve().parent
        on_disk = {d.name for d in package.iterdir() if (d / "__init__.py").exists()}
        self.assertEqual(sorted(on_disk), sorted(self.libraries))

    def test_library_is_the_import_closure(self):
        direct = {name: set().union(*(imports(p)[0] for p in modules)) - {name}
                  for name, modules in self.modules.items()}
        for name, files in self.libraries.items():
            want, todo = {name}, [name]
            while todo:
                for dep in direct[todo.pop()] - want:
                    want.add(dep)
                    todo.append(dep)
            listed = {stage_of(p) for p in files} - {None, ""}
            self.assertEqual(sorted(want - listed), [],
                             f"triton_aot/{name} imports these stages, but //triton_aot/{name} "
                             "lacks them: add them to its deps in its BUILD.bazel")
            self.assertEqual(sorted(listed - want), [],
                             f"triton_aot/{name} never imports these stages: take them out of "
                             f"//triton_aot/{name}'s deps, so that their edits do not re-run its "
                             "actions")
        self.assertNotIn("tuning", {stage_of(p) for p in self.libraries["compile"]})
        self.assertNotIn("torch", {stage_of(p) for p in self.libraries["compile"]})
        self.assertNotIn("capture", {stage_of(p) for p in self.libraries["compile"]})

    def test_the_design_index_lists_the_stages(self):
        table = doc_stage_table(Path(ARGS[1]).read_text(encoding="utf-8"))
        self.assertEqual(sorted(table), sorted(self.libraries),
                         "docs/design.md's stage table must list every package of triton_aot")
        for name, modules in self.modules.items():
            found = [imports(p) for p in modules]
            direct = set().union(*(f[0] for f in found)) - {name}
            self.assertEqual(table[name], (direct, any(f[1] for f in found)),
                             f"docs/design.md's row of {name}: its imports and triton columns "
                             "must be what its modules import")

    def test_the_doc_table_reader(self):
        text = ("# X\n\n## Stages\n\n| stage | imports | triton | job |\n|---|---|---|---|\n"
                "| `core` | - | no | a |\n| `torch` | core, contract | yes | b |\n\n## Next\n"
                "| `other` | - | no | c |\n")
        self.assertEqual(doc_stage_table(text), {"core": (set(), False),
                                                 "torch": ({"core", "contract"}, True)})

    def test_only_compile_imports_triton(self):
        importers = sorted(f"{name}/{p.name}" for name, modules in self.modules.items()
                           for p in modules if name not in TRITON_STAGES and imports(p)[1])
        self.assertEqual(importers, [], "only triton_aot/compile and triton_aot/capture import "
                                        "triton: move the code that needs it there")
        for stage in TRITON_STAGES:
            self.assertTrue(any(imports(p)[1] for p in self.modules[stage]))


if __name__ == "__main__":
    ARGS = sys.argv[1:]
    sys.argv[1:] = []
    unittest.main()
