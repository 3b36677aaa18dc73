"""The battery (battery_launchers.py): each launcher captured in-process as the build does
(capture.tool.capture_launcher inside the build-time driver's answers), and what a correct rule
set must do with it: build an op whose record says what the launcher computes, or refuse in
one line naming the launcher's line. Never a wrong op.

The cases the capture still gets wrong are xfail(strict=True): they flip when it is fixed.
"""

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

import pytest

pytest.importorskip("triton")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from triton_aot.compile import build_driver, build_torch_cuda  # noqa: E402
from triton_aot.capture import tool  # noqa: E402
from triton_aot.core.errors import UserError  # noqa: E402

WHAT = "//t:battery"
HERE = os.path.dirname(os.path.abspath(__file__))


def line_of(text):
    """The number of the one line of battery_launchers.py that holds `text`."""
    pattern = re.compile(re.escape(text) + r"(?!\w)")  # RETURN_INPUT is not RETURN_INPUT_VIEW
    lines = [n for n, line in enumerate(open(os.path.join(HERE, "battery_launchers.py")), 1)
             if pattern.search(line)]
    assert len(lines) == 1, (text, lines)
    return lines[0]


# the launch lines of the helpers, where a launch's own refusals point
COPY = "copy_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)"
COPY2D = "copy2d_kernel[grid](x, y, rows, cols"


@dataclass
class Builds:
    """The op's record: `returns` the shapes of the tensors it returns, in order; `args` its
    schema's arguments; `mutates` the inputs it writes; `facts` more asserts on to_dict();
    `accepts` input shapes ({name: shape}) its checks and algo choice must let through."""
    returns: Optional[list] = None
    args: Optional[list] = None
    mutates: list = field(default_factory=list)
    facts: Optional[Callable] = None
    accepts: list = field(default_factory=list)


@dataclass
class Refused:
    """One line, `//t:battery: battery_launchers.py:LINE: ...`, LINE one of the lines holding
    one of `lines`, and matching `fragment`."""
    lines: tuple
    fragment: str = ""


def returned_shapes(d):
    """The shapes of the tensors the op returns (launch and steps forms)."""
    if "steps" in d:
        return [d["steps"][i]["outputs"][p] for i, p in d.get("returns", [])]
    assert "composite" not in d, "a composite: its result is not a list of output shapes"
    return list(d.get("outputs", {}).values())


class _Input:
    def __init__(self, shape):
        self.shape = shape

    def size(self, i):
        return self.shape[i]

    def dim(self):
        return len(self.shape)


def admits(d, shapes):
    """Whether the op's checks hold and some algo is chosen for inputs of these shapes."""
    env = {name: _Input(shape) for name, shape in shapes.items()}
    env.update(cdiv=lambda a, b: -(-a // b), min=min, max=max)

    def holds(text):
        return bool(eval(text.replace("&&", " and ").replace("||", " or "), {}, env))

    launch = d["steps"][0] if "steps" in d else d
    choice = launch.get("algo_choice") or []
    return (all(holds(c) for c in launch.get("checks", []))
            and (not choice or any(holds(c) for c, _ in choice)))


def both(*expectations):
    return expectations


# name -> (launcher, example calls, sizes, expected, reason it fails today or None)
CASES = {
    # --- aliasing -----------------------------------------------------------------------------
    # the op allocates one Y of n and launches both copies at its start: y overwrites x
    "two_slices": ("two_slices", ["fp32(n), fp32(n)"], {"n": 1000},
                   Refused(("SLICE_FIRST", "SLICE_SECOND", COPY)),
                   None),
    "offset_slice": ("offset_slice", ["fp32(n)"], {"n": 1000},
                     Refused(("OFFSET_LAUNCH", COPY)),
                     None),
    "returned_flat_view": ("returned_flat_view", ["fp32(rows, 64)"], {"rows": 100},
                           Builds(returns=["64 * x.size(0)"], args=["x"]), None),
    "returned_transpose": ("returned_transpose", ["fp32(rows, 64)"], {"rows": 100},
                           both(Refused(("RETURN_T",)), Builds(returns=["64, x.size(0)"])),
                           None),
    "transposed_input": ("transposed_input", ["fp32(rows, 64)"], {"rows": 100},
                         Builds(returns=["64, x.size(0)"], args=["x"], facts=lambda d: (
                             d["bind"]["sxr"] == "1" and d["bind"]["sxc"] == "x.size(1)"
                             and d["bind"]["rows"] == "x.size(1)")), None),
    "flattened_input": ("flattened_input", ["fp32(rows, 64)"], {"rows": 100},
                        Builds(returns=["64 * x.size(0)"], args=["x"],
                               facts=lambda d: d["bind"]["n"] == "64 * x.size(0)"), None),
    "input_column_slice": ("input_column_slice", ["fp32(rows, 64)"], {"rows": 100},
                           Refused((COPY2D, "INPUT_SLICE"), "points into a tensor at an offset"),
                           None),
    # an op cannot return an alias of its input; returning nothing would drop what it returns
    "in_place_return_input": ("in_place_return_input", ["fp32(n)"], {"n": 1000},
                              Refused(("RETURN_INPUT",)),
                              None),
    "in_place_return_input_view": ("in_place_return_input_view", ["fp32(n)"], {"n": 1000},
                                   Refused(("RETURN_INPUT_VIEW",)),
                                   None),
    "in_place_return_none": ("in_place_return_none", ["fp32(n)"], {"n": 1000},
                             Builds(returns=[], args=["x"], mutates=["x"]), None),
    "same_tensor_twice": ("same_tensor_twice", ["fp32(n)"], {"n": 1000},
                          Builds(returns=[], args=["x"], mutates=["x"], facts=lambda d: (
                              d["bind"]["X"] == d["bind"]["Y"] == "x")), None),
    "out_and_none": ("out_and_none", ["fp32(n)"], {"n": 1000},
                     Refused(("OUT_NONE",)),
                     "builds an op returning one Tensor where the launcher returns (out, None)"),
    "same_output_twice": ("same_output_twice", ["fp32(n)"], {"n": 1000},
                          both(Refused(("OUT_TWICE",)), Builds(returns=["x.size(0)"] * 2)),
                          None),
    "dummy_buffer": ("dummy_buffer", ["fp32(n)"], {"n": 1000},
                     both(Builds(returns=["x.size(0)"], args=["x"]),
                          Refused(("with_scratch_kernel[",))),
                     None),
    # x into out[:n] of a caller's out of 2 * n: right, if the op checks out is that large
    "out_argument_slice": ("out_argument_slice", ["fp32(n), fp32(2 * n)"], {"n": 1000},
                           both(Builds(returns=[], args=["x", "out_arg"], mutates=["out_arg"],
                                       accepts=[{"x": (10,), "out_arg": (20,)}],
                                       facts=lambda d: not admits(
                                           d, {"x": (10,), "out_arg": (5,)})),
                                Refused(("OUT_ARG_SLICE", COPY))),
                           "no check ties out_arg's size to x's: a smaller out is written "
                           "past its end"),
    "out_argument_offset": ("out_argument_offset", ["fp32(n), fp32(2 * n)"], {"n": 1000},
                            Refused((COPY, "OUT_ARG_OFFSET"),
                                    "points into a tensor at an offset"), None),
    # --- outputs ------------------------------------------------------------------------------
    "two_outputs": ("two_outputs", ["fp32(n)"], {"n": 1000},
                    Builds(returns=["x.size(0)", "x.size(0)"], args=["x"],
                           facts=lambda d: list(d["outputs"]) == ["LO", "HI"]), None),
    "zeros_then_kernel": ("zeros_then_kernel", ["fp16(n)"], {"n": 1000},
                          Builds(returns=["x.size(0)"], facts=lambda d: d["fills"] == {
                              "ACC": "0.0"}), None),
    "full_then_kernel": ("full_then_kernel", ["fp16(n)"], {"n": 1000},
                         Builds(returns=["x.size(0)"], facts=lambda d: d["fills"] == {
                             "ACC": "3.0"}), None),
    "size_one": ("copy", ["fp32(1)"], {},
                 Builds(returns=["1"], facts=lambda d: "x.size(0) == 1" in d["checks"]), None),
    "size_zero": ("copy", ["fp32(0)"], {},
                  Builds(returns=["0"], facts=lambda d: "x.size(0) == 0" in d["checks"]), None),
    # one op over a dynamic size and its value 1 (0): cdiv(size, 256) is 1 (0) there
    "dynamic_and_one": ("copy", ["fp32(size)", "fp32(1)"], {"size": 1000},
                        Builds(returns=["x.size(0)"], accepts=[{"x": (1,)}, {"x": (1000,)}]),
                        None),
    "dynamic_and_zero": ("copy", ["fp32(size)", "fp32(0)"], {"size": 1000},
                         Builds(returns=["x.size(0)"], accepts=[{"x": (0,)}, {"x": (1000,)}]),
                         None),
    "one_column": ("row_sums", ["fp32(rows, 1)"], {"rows": 100},
                   Builds(returns=["x.size(0)"], accepts=[{"x": (7, 1)}]), None),
    # --- sizes --------------------------------------------------------------------------------
    "size_only_in_grid": ("size_only_in_grid", ["fp32(rows, 64)"], {"rows": 100},
                          Builds(returns=["x.size(0), 64"],
                                 facts=lambda d: d["bind"]["rows"] == "x.size(0)"), None),
    # the op must keep w, which the launcher takes and reads (or refuse)
    "other_tensors_sizes": ("other_tensors_sizes", ["fp32(n), fp32(n)"], {"n": 1000},
                            both(Builds(args=["x", "w"], returns=["x.size(0)"]),
                                 Refused(("m = w.numel()", "scale_kernel[(triton.cdiv(m"))),
                            None),
    "other_tensors_own_size": ("other_tensors_sizes", ["fp32(n), fp32(m)"],
                               {"n": 1000, "m": 1000},
                               both(Builds(args=["x", "w"], returns=["x.size(0)"]),
                                    Refused(("m = w.numel()", "scale_kernel[(triton.cdiv(m"))),
                               None),
    "rows_from_other": ("rows_from_other", ["fp32(rows, 64), fp32(rows)"], {"rows": 100},
                        both(Builds(args=["x", "y"], returns=["y.size(0)"]),
                             Builds(args=["x", "y"], returns=["x.size(0)"],
                                    facts=lambda d: "y.size(0) == x.size(0)" in d["checks"]),
                             Refused(("row_sum_kernel[(y.shape[0],)]",))),
                        None),
    # --- constexprs from sizes ----------------------------------------------------------------
    "next_pow2_dynamic": ("next_pow2_block", ["fp32(rows, cols)"], {"rows": 100, "cols": 50},
                          Refused(("POW2", "BLOCK = triton.next_power_of_2(cols)"),
                                  r"BLOCK.*cols"),
                          None),
    "next_pow2_static": ("next_pow2_block", ["fp32(rows, 50)"], {"rows": 100},
                         Builds(returns=["x.size(0), 50"],
                                facts=lambda d: "x.size(1) == 50" in d["checks"]), None),
    # x.view(-1, dim): seq == 1 and batch == 1 are inputs like any other
    "rows_of_3d": ("rows_of_3d", ["fp32(batch, seq, 64)"], {"batch": 4, "seq": 8},
                   Builds(returns=["x.size(0), x.size(1), 64"],
                          accepts=[{"x": (4, 8, 64)}, {"x": (3, 1, 64)}, {"x": (1, 5, 64)}]),
                   None),
    "rows_of_3d_ones": ("rows_of_3d", ["fp32(batch, seq, 64)", "fp32(batch, 1, 64)",
                                       "fp32(1, seq, 64)"], {"batch": 4, "seq": 8},
                        Builds(returns=["x.size(0), x.size(1), 64"],
                               accepts=[{"x": (4, 8, 64)}, {"x": (3, 1, 64)},
                                        {"x": (1, 5, 64)}]),
                        None),
    # --- dtypes -------------------------------------------------------------------------------
    "fp16_and_bf16": ("copy", ["fp16(size)", "bf16(size)"], {"size": 1000},
                      both(Builds(returns=["x.size(0)"], args=["x"]), Refused((COPY,))),
                      None),
    # --- structure ----------------------------------------------------------------------------
    "chained": ("chained", ["fp32(n)"], {"n": 1000},
                Builds(returns=["Y.size(0)"], args=["x"], facts=lambda d: (
                    len(d["steps"]) == 2 and d["returns"] == [[1, "Y"]]
                    and d["steps"][1]["bind"]["X"] == "Y" and d["steps"][1]["args"] == ["Y"])),
                None),
    "by_threshold": ("by_threshold", ["[n=1024] fp32(n)", "[n=8192] fp32(n)"], {},
                     Builds(returns=["x.size(0)"], accepts=[{"x": (1,)}, {"x": (1 << 20,)}],
                            facts=lambda d: d["algo_choice"] == [
                                ["x.size(0) <= 4096", "0"], ["x.size(0) > 4096", "1"]]), None),
    "by_threshold_one_side": ("by_threshold", ["fp32(n)"], {"n": 1024},
                              Builds(returns=["x.size(0)"], accepts=[{"x": (4096,)}],
                                     facts=lambda d: not admits(d, {"x": (4097,)})), None),
    # the int is the launcher's argument: the op takes it, or the capture refuses
    "float_and_int": ("float_and_int", ["fp32(n), 0.5, 3"], {"n": 1000},
                      both(Builds(args=["x", "factor: float", "shift: int"]),
                           Refused(("INT_ARG",), "shift")),
                      None),
    "keyword_only": ("keyword_only", ["fp32(n), factor=0.5"], {"n": 1000},
                     Builds(returns=["x.size(0)"], args=["x", "factor: float"],
                            facts=lambda d: d["bind"]["factor"] == "factor"), None),
    "keyword_only_tensor": ("keyword_only_tensor", ["fp32(n), out=fp32(n)"], {"n": 1000},
                            Builds(returns=[], args=["x", "out_arg"], mutates=["out_arg"]), None),
    "lambda_grid": ("lambda_grid", ["fp32(n)"], {"n": 1000},
                    Builds(returns=["x.size(0)"], args=["x"]), None),
    "early_return_empty": ("early_return_empty", ["fp32(n)"], {"n": 1000},
                           Builds(returns=["x.size(0)"], accepts=[{"x": (3,)}]), None),
}


def capture(launcher, calls, size_values, name):
    import battery_launchers

    with build_driver.answering_for("cuda", 90, 32), \
            build_torch_cuda.answering_for("cuda", 90, 32):
        return tool.capture_launcher(getattr(battery_launchers, launcher), calls, size_values,
                                     name, WHAT)


def check_builds(expected, record):
    d = record.to_dict()
    if expected.returns is not None:
        assert returned_shapes(d) == expected.returns, d
    if expected.args is not None:
        assert [a.name if a.kind == "Tensor" else f"{a.name}: {a.kind}"
                for a in record.args] == expected.args, d
    assert sorted(record.mutates) == sorted(expected.mutates), d
    for shapes in expected.accepts:
        assert admits(d, shapes), (shapes, d)
    if expected.facts is not None:
        assert expected.facts(d), d


def check_refused(expected, message):
    assert "\n" not in message, message
    lines = "|".join(str(line_of(t)) for t in expected.lines)
    assert re.match(rf"{re.escape(WHAT)}: battery_launchers\.py:({lines}): ", message), message
    assert re.search(expected.fragment, message), message


def outcome(case):
    launcher, calls, size_values, expected, _ = CASES[case]
    options = expected if isinstance(expected, tuple) else (expected,)
    try:
        _, _, record = capture(launcher, calls, size_values, case)
    except UserError as e:
        refusals = [o for o in options if isinstance(o, Refused)]
        assert refusals, f"refused, expected to build: {e.message}"
        return _any([lambda o=o: check_refused(o, e.message) for o in refusals])
    builds = [o for o in options if isinstance(o, Builds)]
    assert builds, f"builds, expected a refusal: {record.to_dict()}"
    return _any([lambda o=o: check_builds(o, record) for o in builds])


def _any(checks):
    """Passes when one of the checks passes; else raises the first one's failure."""
    failures = []
    for check in checks:
        try:
            check()
            return
        except AssertionError as e:
            failures.append(e)
    raise failures[0]


@pytest.mark.parametrize("case", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=entry[4]) if entry[4] else ())
    for name, entry in CASES.items()])
def test_battery(case):
    outcome(case)


def test_refusals_name_lines_that_exist():
    # each refusal's lines are found once, also where the capture builds today
    for _, _, _, expected, _ in CASES.values():
        for option in expected if isinstance(expected, tuple) else (expected,):
            if isinstance(option, Refused):
                [line_of(text) for text in option.lines]


def test_battery_covers_every_launcher():
    import inspect

    import battery_launchers
    launchers = {n for n, f in vars(battery_launchers).items()
                 if inspect.isfunction(f) and not n.startswith("_")
                 and f.__module__ == battery_launchers.__name__}
    assert launchers == {entry[0] for entry in CASES.values()}
    assert len(launchers) >= 30


def _interpret():
    """Runs every launcher in Triton's interpreter on CPU against torch (a child process: the
    interpreter is chosen when triton is imported): what the battery's ops must compute."""
    import torch

    import battery_launchers as b

    def same(a, e):
        assert a.shape == e.shape and torch.equal(a, e), (a, e)

    torch.manual_seed(0)
    x, y = torch.randn(300), torch.randn(300)
    m = torch.randn(20, 64)
    same(b.two_slices(x, y), torch.cat([x, y]))
    same(b.offset_slice(x), torch.cat([torch.zeros(1), x]))
    same(b.returned_flat_view(m), (2 * m).view(-1))
    same(b.returned_transpose(m), m.t())
    same(b.transposed_input(m), m.t().contiguous())
    same(b.flattened_input(m), 2 * m.view(-1))
    same(b.input_column_slice(m), m[:, 32:])
    for launcher, view in ((b.in_place_return_input, lambda t: t),
                           (b.in_place_return_input_view, lambda t: t.view(-1))):
        t = x.clone()
        r = launcher(t)
        same(t, x + 1)
        assert r.data_ptr() == t.data_ptr()
        same(r, view(x + 1))
    t = x.clone()
    assert b.in_place_return_none(t) is None
    same(t, x + 1)
    t = x.clone()
    b.same_tensor_twice(t)
    same(t, 2 * x)
    r, none = b.out_and_none(x)
    same(r, x)
    assert none is None
    r1, r2 = b.same_output_twice(x)
    assert r1 is r2
    same(r1, x)
    same(b.dummy_buffer(x), x + 1)
    for launcher, part in ((b.out_argument_slice, slice(0, 300)),
                           (b.out_argument_offset, slice(300, 600))):
        out = torch.zeros(600)
        launcher(x, out)
        same(out[part], x)
        assert out.count_nonzero() == x.count_nonzero()
    lo, hi = b.two_outputs(x)
    same(lo, x.clamp(max=0))
    same(hi, x.clamp(min=0))
    h = x.half()
    same(b.zeros_then_kernel(h), h.float())
    same(b.full_then_kernel(h), h.float() + 3)
    for t in (x, x[:1].clone(), x[:0].clone(), x.half(), x.bfloat16()):
        same(b.copy(t), t)
    same(b.row_sums(m[:, :1].contiguous()), m[:, 0])
    same(b.size_only_in_grid(m), m)
    same(b.other_tensors_sizes(x, y), 2 * x)
    torch.testing.assert_close(b.rows_from_other(m, m[:, 0]), m.sum(1))
    same(b.next_pow2_block(m[:, :50].contiguous()), 2 * m[:, :50])
    for shape in ((2, 3, 64), (3, 1, 64), (1, 5, 64)):
        t = torch.randn(shape)
        same(b.rows_of_3d(t), 2 * t)
    same(b.chained(x), 2 * x)
    for n in (100, 5000):
        t = torch.randn(n)
        same(b.by_threshold(t), 2 * t)
    same(b.float_and_int(x, 0.5, 3), x * 0.5 + 3)
    same(b.keyword_only(x, factor=0.5), x * 0.5)
    out = torch.empty(300)
    assert b.keyword_only_tensor(x, out=out) is None
    same(out, x)
    same(b.lambda_grid(x), x * 0.5)
    same(b.early_return_empty(x), x)
    same(b.early_return_empty(x[:0]), x[:0])


def test_launchers_compute_in_the_interpreter():
    import subprocess
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--interpret"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


if __name__ == "__main__" and sys.argv[1:] == ["--interpret"]:
    _interpret()
