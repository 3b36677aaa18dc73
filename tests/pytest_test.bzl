"""`pytest_test`: a py_test that runs pytest over its `srcs`."""

load("@rules_python//python:defs.bzl", "py_test")

def pytest_test(name, srcs, deps = [], data = [], args = [], **kwargs):
    """Runs pytest on `srcs` under Bazel.

    Args:
      name: target name.
      srcs: the pytest files.
      deps: py_library deps.
      data: runtime data.
      args: extra pytest arguments.
      **kwargs: passed to py_test (size, env, tags, ...).
    """
    py_test(
        name = name,
        srcs = srcs + ["//tests:pytest_main.py"],
        main = "//tests:pytest_main.py",
        args = args + ["$(rootpath {})".format(s) for s in srcs],
        deps = deps,
        data = data,
        legacy_create_init = False,
        **kwargs
    )
