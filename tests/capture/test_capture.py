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


def capture_from(module, launcher, call, n, what):
    """One example call of `module.launcher` captured, with the dynamic size n."""
    with build_driver.answering_for("cuda", 90, 32), build_torch_cuda.answering_for("cuda", 90, 32):
        inputs = FakeInputs({"n": n}, what)
        return tracer.capture_call(getattr(module, launcher), inputs, inputs.parse(call, what),
                                   what)


def capture_torch_work(launcher, call="fp32(n)"):
    from tests.capture import torch_work_launchers
    return capture_from(torch_work_launchers, launcher, call, 512, "//t:w")


def line_of(text, file="torch_work_launchers.py"):
    """The line of `file` (in this folder) that holds `text`."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
    for number, line in enumerate(open(path), 1):
        if text in line:
            return f"{file}:{number}"
    raise AssertionError(text)


@pytest.mark.parametrize("launcher,call,line,fragment", [
    ("static_by_arithmetic", "fp32(n)", "float(n) ** -0.5", "fixes the dynamic size n to its example value 512"),
    ("address_passed", "fp32(n)", "x.data_ptr()", "reads a tensor's address (.data_ptr())"),
    ("random_noise", "fp32(n)", "torch.randn_like(x)",
     "torch.randn_like (aten.randn_like.default), which draws random numbers"),
    ("host_copy", "fp32(n)", "return y.cpu()", "a tensor on cpu, the host"),
    ("data_dependent", "fp32(n)", "return y[y > 0]", "depends on tensor values"),
])
def test_torch_work_is_refused_naming_the_line(launcher, call, line, fragment):
    from triton_aot.core.errors import UserError
    with pytest.raises(UserError) as e:
        capture_torch_work(launcher, call)
    message = e.value.message
    assert message.startswith(f"//t:w: {line_of(line)}: "), message
    assert fragment in message and "\n" not in message, message


def test_torch_work_is_recorded_with_references():
    # y.sum() / x.shape[0]: the division keeps n symbolic (no guard fixes it), and every call
    # names its tensors by reference: the launcher's input, or what an earlier call returned
    call = capture_torch_work("reduce_after")
    assert [(g.kind, g.op) for g in call.graph] == [
        ("aten", "aten.empty_like.default"), ("launch", "scale_kernel"),
        ("aten", "aten.sum.default"), ("aten", "aten.div.Tensor")]
    assert call.graph[1].args == ({"input": "x"}, {"node": 0})
    assert call.graph[3].args == ({"node": 2}, {"size": "n"})
    assert call.result == {"node": 3} and call.guards == () and call.mutated == ()
    assert call.torch_work == f"{line_of('return y.sum()')}: torch.sum (aten.sum.default)"
    # a sort's values (item 0 of its result) reach the kernel
    assert capture_torch_work("sort_first").graph[2].args[0] == {"node": 0, "item": 0}
    # torch.tensor(...) on the launcher's device: a constant with its values and dtype
    constant = capture_torch_work("scalar_constant").graph[0]
    assert (constant.kind, constant.args) == ("constant", (1.0, "float32"))


def test_untouched_allocation_is_returned_and_torch_only_input_kept():
    call = capture_torch_work("through_torch_only", "fp32(n), fp32(n)")
    assert call.result == [{"node": 2}, {"node": 3}]
    assert call.graph[3].op == "aten.zeros.default"
    assert call.graph[3].args == ([{"size": "n"}, 2],)


def test_torch_write_to_an_input_marks_it_mutated():
    from triton_aot.capture import composite
    call = capture_torch_work("torch_writes_input")
    assert call.mutated == ("x",)
    decl = declaration.declare([call], "w", "//t:w")
    spec = composite.declare_op(decl, [call], "//t:w")
    assert spec["args"] == ["x"] and spec["mutates"] == ["x"]
    (launch,) = spec["composite"]["launches"]
    assert launch["args"] == ["X", "Y"] and launch["mutates"] == ["Y"]


def test_calls_with_other_torch_work_are_refused():
    from triton_aot.capture import composite
    from triton_aot.core.errors import UserError
    calls = [capture_torch_work("sort_first"), capture_torch_work("clone_first")]
    decl = declaration.declare(calls, "w", "//t:w")
    with pytest.raises(UserError, match="calls aten.clone.default with other arguments than"):
        composite.declare(decl, calls, "//t:w", {})


def test_fake_inputs_are_cuda_to_the_launcher():
    # cuda_checked asserts x.is_cuda, x.device.type == "cuda" and the current device, allocates
    # on "cuda" and passes a constexpr None: it captures, its allocation an output
    call = capture_torch_work("cuda_checked")
    (launch,) = call.launches
    assert {a.name: (a.kind, a.value) for a in launch.arguments}["BIAS"] == ("constexpr", None)
    assert [s.kind for s in call.steps] == ["allocation", "launch"]
    assert launch.arguments[1].source == "output:0" and launch.writes == ("Y",)


def test_in_place_launcher_mutates_what_the_kernel_stores_to():
    from triton_aot.capture import op
    call = capture_torch_work("in_place", "fp32(n), fp32(n)")
    assert call.launches[0].writes == ("Y",)  # torch's analysis of the kernel: X is only read
    decl = declaration.declare([call], "in_place", "//t:w")
    spec = op.declare_op(decl, [call], "//t:w")
    assert spec["args"] == ["x", "out_arg"] and spec["mutates"] == ["out_arg"] and "outputs" not in spec


def test_sizes_no_call_uses_is_an_error():
    from triton_aot.capture import tool
    from triton_aot.core.errors import UserError
    with pytest.raises(UserError, match="attribute 'sizes': 'rows' is used by no example call"):
        tool._check_sizes_used({"n": 4, "rows": 8}, ["fp32(n)", "[n=8] fp32(n, 4)"], "//t:w")
    tool._check_sizes_used({"n": 4}, ["fp32(n)"], "//t:w")


def test_grid_size_named_like_a_kernel_parameter_is_refused():
    # scale_kernel's `n` is x.numel() = 8 * n here, and its grid cdiv(8 * n, 256) needs the
    # size n itself: binding the size n where the kernel's n is would launch on an eighth
    from triton_aot.core.errors import UserError
    call = capture_torch_work("clone_first", "fp32(n, 8)")
    with pytest.raises(UserError, match=r"needs the size n, which is also the name of its "
                                        r"parameter n \(= 8 \* n\)"):
        declaration.declare([call], "w", "//t:w")


def test_float_argument_reaches_the_kernel_and_torch():
    from triton_aot.capture import composite
    call = capture_torch_work("scaled_sum", "fp32(n), 0.25")
    spec = composite.declare_op(declaration.declare([call], "w", "//t:w"), [call], "//t:w")
    assert spec["args"] == ["x", "factor: float"]
    graph = spec["composite"]["graph"]
    assert graph[1] == {"launch": "scale_kernel", "args": [{"input": "x"}, {"node": 0}],
                        "floats": ["factor"]}
    assert graph[3]["args"] == [{"node": 2}, {"float": "factor"}]
    (launch,) = spec["composite"]["launches"]
    assert launch["args"] == ["X", "Y", "factor: float"] and launch["bind"]["factor"] == "factor"


def capture_options(launcher, call="fp32(n), fp32(n), fp32(n)"):
    import option_launchers
    return capture_from(option_launchers, launcher, call, 4096, "//t:o")


def option_line(text):
    return line_of(text, "option_launchers.py")


def test_compile_option_passed_at_launch_is_the_algos():
    # enable_fp_fusion=False compiles another kernel (no fma): the algo says so, in the
    # committed .launcher.bzl and in the BUILD text a user may freeze
    call = capture_options("unfused")
    (launch,) = call.launches
    assert launch.options == (("enable_fp_fusion", False),)
    assert record.from_json(record.to_json([call])) == [call]
    decl = declaration.declare([call], "unfused", "//t:o")
    (algo,) = declaration.library_attrs(decl.libraries[0])["algos"]
    assert algo == {"constexprs": {"BLOCK": 256}, "num_warps": 4, "num_stages": 3,
                    "enable_fp_fusion": False}
    assert '"enable_fp_fusion": False,' in declaration.bzl_text(decl, "//t:o")
    assert ("triton_algo(constexprs = {\n            \"BLOCK\": 256,\n        }, num_warps = 4, "
            "num_stages = 3, enable_fp_fusion = False)") in declaration.build_text(decl, [])


def test_launch_options_at_their_default_are_not_written():
    (launch,) = capture_options("fused_pdl").launches
    assert launch.options == (("launch_pdl", True), ("maxnreg", 128))
    # one algo per distinct options: the same constexprs fused and unfused are two algos
    calls = [capture_options("fused_pdl"), capture_options("unfused")]
    (lib,) = declaration.declare(calls, "m", "//t:o").libraries
    assert [a.options for a in lib.algos] == [{"launch_pdl": True, "maxnreg": 128},
                                              {"enable_fp_fusion": False}]


@pytest.mark.parametrize("launcher,fragment", [
    ("debug_launch", "muladd_kernel[grid](..., debug=True): rules_triton compiles every kernel "
     "with debug=False"),
    ("reflect_ftz", "muladd_kernel[grid](..., enable_reflect_ftz=False): rules_triton cannot "
     "set enable_reflect_ftz"),
    ("fusion_as_int", "muladd_kernel[grid](..., enable_fp_fusion=0): enable_fp_fusion must be "
     "True or False"),
])
def test_launch_option_the_build_cannot_honour_is_refused(launcher, fragment):
    from triton_aot.core.errors import UserError
    with pytest.raises(UserError) as e:
        capture_options(launcher)
    message = e.value.message
    # the launch is _muladd's, called from each launcher: the line of the kernel[grid](...)
    assert message.startswith(f"//t:o: {option_line('muladd_kernel[(')}: "), message
    assert fragment in message and "\n" not in message, message
    if "must be" not in fragment:  # no advice that would build another kernel
        assert "triton_kernel_library, compiles the kernel this launch does" in message


def test_jit_decorated_with_debug_is_refused():
    from triton_aot.core.errors import UserError
    with pytest.raises(UserError) as e:
        capture_options("debug_decorated", "fp32(n)")
    assert e.value.message.startswith(f"//t:o: {option_line('checked_kernel[(')}: "
                                      "@triton.jit(debug=True) checked_kernel: rules_triton "
                                      "compiles every kernel with debug=False")
