"""No py_test or py_binary of this repository gets a made-up __init__.py in its runfiles.

This test's runfiles hold triton_aot/compile/env_fingerprint.py and no triton_aot/__init__.py, the
pattern that makes Bazel's legacy runfiles logic create an empty triton_aot/__init__.py, a file
Bazel can then write through a runfiles symlink into the checkout (emptying the real one). It is
a plain py_test, without legacy_create_init, so it checks the repository-wide setting
(--incompatible_default_to_explicit_init_py in .bazelrc), which users' own targets inherit when
they build here.
"""
import os
import sys
import unittest


def made_up_inits(root):
    """The __init__.py files under `root` that are Bazel's: empty regular files (source files in
    runfiles are symlinks)."""
    found = []
    for folder, _, files in os.walk(root):
        path = os.path.join(folder, "__init__.py")
        if "__init__.py" in files and not os.path.islink(path) and os.path.getsize(path) == 0:
            found.append(os.path.relpath(path, root))
    return sorted(found)


class RunfilesInitTest(unittest.TestCase):

    def test_fingerprint_module_is_present(self):
        root = os.environ["RUNFILES_DIR"]
        self.assertTrue(os.path.isfile(os.path.join(root, "_main", "triton_aot",
                                                    "compile", "env_fingerprint.py")))

    def test_no_made_up_init_files(self):
        self.assertEqual(made_up_inits(os.environ["RUNFILES_DIR"]), [])


if __name__ == "__main__":
    sys.exit(unittest.main())
