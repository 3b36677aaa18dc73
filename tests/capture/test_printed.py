"""`bazel run :NAME_declaration` prints the declaration as explicit BUILD text; evaluated (its
rules stubbed), that text declares exactly the libraries and op of the committed
NAME.launcher.bzl, with the srcs and deps they import their kernel from, so a user who freezes
it gets what the build compiles."""

import ast
import os

import pytest

NAMES = ["liger_rms_norm", "liger_rope", "liger_swiglu", "rms_scale", "decode_attention",
         "in_place", "dep_twice", "cuda_checked", "accumulate", "torch_between", "unfused"]
# what each target's libraries need to import their kernel, printed with them
SRCS = {"rms_scale": ["serving_kernels.py"], "decode_attention": ["serving_kernels.py"],
        "unfused": ["option_launchers.py"],
        "in_place": ["torch_work_launchers.py"], "cuda_checked": ["torch_work_launchers.py"],
        "accumulate": ["torch_work_launchers.py"], "torch_between": ["torch_work_launchers.py"]}
DEPS = {name: ["//tests/capture/dep:kernels"]
        for name in ("in_place", "dep_twice", "cuda_checked", "accumulate", "torch_between")}
HERE = os.path.dirname(os.path.abspath(__file__))


def starlark_values(path):
    """The top-level constants of a generated .bzl (JSON-like Starlark)."""
    out = {}
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.Assign):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def printed(path):
    libraries, ops = {}, []

    def triton_kernel_library(name, targets=None, **attrs):
        libraries[name] = attrs

    def triton_algo(**attrs):
        return attrs

    def triton_torch_op(**attrs):
        ops.append(attrs)
        return attrs

    exec(open(path).read(), {"load": lambda *a: None, "True": True, "False": False,
                             "triton_kernel_library": triton_kernel_library,
                             "triton_algo": triton_algo, "triton_torch_op": triton_torch_op})
    return libraries, ops


@pytest.mark.parametrize("name", NAMES)
def test_printed_form_is_the_declaration(name):
    committed = starlark_values(os.path.join(HERE, f"{name}.launcher.bzl"))
    libraries, ops = printed(os.path.join(HERE, f"{name}_declaration.BUILD.txt"))
    assert set(libraries) == set(committed["LIBRARIES"])
    for lib, attrs in committed["LIBRARIES"].items():
        want = dict(attrs)
        if "kernel_src" in want:  # printed relative to the package, with the srcs it needs
            want["kernel_src"] = os.path.basename(want["kernel_src"])
            want["srcs"] = SRCS[name]
        if name in DEPS:
            want["deps"] = DEPS[name]
        assert libraries[lib] == want, lib
    (op,) = ops
    want = dict(committed["OP"])
    if "composite" in want:  # a composite: each launch's primitive op names its library
        want["composite"] = dict(want["composite"], launches=[
            dict(launch, lib=":" + launch["lib"]) for launch in want["composite"]["launches"]])
    for part in [] if "composite" in want else want.get("steps") or [want]:
        part["lib"] = ":" + part["lib"]
    if "steps" in want:
        want["steps"] = [dict(s, lib=s["lib"]) for s in want["steps"]]
    assert op == want
