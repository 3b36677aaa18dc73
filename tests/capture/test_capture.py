"""The capture in-process (triton_aot.capture), on a CPU torch with the installed Triton: the
hint of each argument is the JIT's own, the grid (a `lambda meta`) is an expression of the
dynamic size, and the record is typed and round-trips through its JSON."""

import os
import sys

import pytest

pytest.importorskip("triton")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from triton_aot.compile import build_driver, build_torch_cuda  # noqa: E402
from triton_aot.capture import declaration, record, sizes, tracer  # noqa: E402
from triton_aot.capture.examples import FakeInputs  # noqa: E402


def capture(call, size_values):
    import hint_launchers

    with build_driver.answering_for("cuda", 90, 32), build_torch_cuda.answering_for("cuda", 90, 32):
        inputs = FakeInputs(size_values, "//t:probe")
        return tracer.capture_call(hint_launchers.probe, inputs, inputs.parse(call, "//t:probe"),
                                   "//t:probe")


def test_hints_follow_the_jit():
    launch = capture("fp32(n)", {"n": 4096}).launches[0]
    hints = {a.name: a.hint for a in launch.arguments}
    # a[2:] is 8 bytes into its storage; b is a fresh allocation; n = 4096 is divisible by 16;
    # 1 is the JIT's constant 1; 17 has no hint; `skip` is do_not_specialize
    assert hints == {"A": 0, "B": 16, "n": 16, "one": 1, "odd": 0, "skip": 0, "BLOCK": 0}
    assert [a.type for a in launch.arguments[:6]] == ["*fp32", "*fp32", "i32", "i32", "i32", "i32"]
    assert launch.constexprs() == {"BLOCK": 128}
    assert launch.arguments[0].source == "" and launch.arguments[1].source == "output:0"


def test_grid_is_an_expression_of_the_dynamic_size():
    launch = capture("fp32(n)", {"n": 1000}).launches[0]
    assert launch.grid == ("cdiv(n, 128)",)
    assert {a.name: a.expr for a in launch.arguments}["n"] == "n"
    assert {a.name: a.hint for a in launch.arguments}["n"] == 0  # 1000 % 16 != 0


def test_declaration_and_record():
    calls = [capture("fp32(n)", {"n": 4096}), capture("fp32(n)", {"n": 1000})]
    decl = declaration.declare(calls, "probe", "//t:probe")
    (lib,) = decl.libraries
    assert lib.signature == ["*fp32", "*fp32", "i32", "i32", "i32", "i32", "BLOCK"]
    # the two examples' patterns, and n = 1's (a dynamic size takes every hint the JIT gives)
    assert lib.specializations == ["B:16 n:16 one:1", "B:16 n:1 one:1", "B:16 one:1", ""]
    assert lib.grid() == ("cdiv(n, 128)",) and lib.launch_args == []
    assert record.from_json(record.to_json(calls)) == calls


def test_sizes_render():
    import sympy
    from torch.utils._sympy.functions import FloorDiv

    n, m = sympy.symbols("s0 s1", integer=True, positive=True)
    names = {n: "rows", m: "cols"}.__getitem__
    assert sizes.render(FloorDiv(n + 63, 64), names) == "cdiv(rows, 64)"
    assert sizes.render(3 * n * m, names) == "3 * rows * cols"
    assert sizes.render(sympy.Gt(n, 4096), names) == "rows > 4096"


def test_dynamic_sizes_get_the_patterns_their_other_values_give():
    # decode attention's seq_len = seq and chunk = cdiv(seq, 8) take :16, :1 or no hint as seq
    # changes; its stride 4096 * seq stays a multiple of 16. An example at seq = 4096 alone
    # would leave seq = 77 to the generic variant, with no hint at all.
    from types import SimpleNamespace
    from triton_aot.capture import declaration
    args = [SimpleNamespace(kind="int", name=n, expr=e, hint=16) for n, e in
            (("seq_len", "seq"), ("chunk", "cdiv(seq, 8)"), ("stride_kb", "4096 * seq"))]
    launch = SimpleNamespace(arguments=[SimpleNamespace(kind="pointer", name="Q", expr="", hint=16)] + args)
    order = ["Q", "seq_len", "chunk", "stride_kb"]
    example = (("Q", 16), ("seq_len", 16), ("chunk", 16), ("stride_kb", 16))
    patterns = declaration._size_patterns(example, launch, order)
    assert example in patterns
    assert (("Q", 16), ("stride_kb", 16)) in patterns  # seq = 77: chunk = 10
    assert (("Q", 16), ("seq_len", 16), ("stride_kb", 16)) in patterns  # seq = 80: chunk = 10
    assert all(("stride_kb", 16) in p and ("Q", 16) in p for p in patterns)
    assert (("Q", 16), ("seq_len", 1), ("chunk", 16), ("stride_kb", 16)) not in patterns  # never
