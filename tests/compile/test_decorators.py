"""Issue 13's values: omitted trailing parameters (defaults, --constexprs, heuristics), None
arguments, string constexprs, @triton.heuristics per variant, @triton.autotune configs."""

import json
from pathlib import Path

import pytest

from triton_aot.compile.compile import run_command_line
from triton_aot.core.binding import ParamInfo, bind, with_values
from triton_aot.core.errors import UserError
from triton_aot.core.signature import ConstValue, parse_constexprs, parse_hints, parse_signature

KERNELS = Path(__file__).resolve().parent / "kernels"
PARAMS = (ParamInfo("x_ptr", False), ParamInfo("n", False), ParamInfo("bias_ptr", False),
          ParamInfo("BLOCK", True, "constexpr"), ParamInfo("ACT", True, "constexpr"),
          ParamInfo("EVEN", True, "constexpr"))
NONE = ConstValue("none", None, "None")


def _bind(sig, constexprs="", defaults=None, deferred=(), hints=""):
    return bind(parse_signature(sig), PARAMS, parse_hints(hints), parse_constexprs(constexprs),
                "k", defaults=defaults, deferred=deferred)


def test_omitted_parameters_take_constexprs_defaults_and_heuristics():
    defaults = {"bias_ptr": NONE, "ACT": ConstValue("str", "relu", "'relu'")}
    sig = _bind("*fp32, i32", "BLOCK=64", defaults, deferred=["EVEN"])
    by = sig.by_name()
    assert by["bias_ptr"].is_constexpr and by["bias_ptr"].value == NONE
    assert by["BLOCK"].value.repr == "64" and by["ACT"].value.repr == "'relu'"
    assert by["EVEN"].value is None  # deferred to the heuristic
    done = with_values(sig, {"EVEN": ConstValue("bool", True, "True")})
    assert done.by_name()["EVEN"].value.repr == "True"


def test_constexprs_beat_defaults():
    sig = _bind("*fp32, i32", "BLOCK=64,ACT='gelu',EVEN=False",
                {"bias_ptr": NONE, "ACT": ConstValue("str", "relu", "'relu'")})
    assert sig.by_name()["ACT"].value.repr == "'gelu'"


def test_none_for_a_runtime_argument():
    sig = _bind("*fp32, i32, None, 64, 'relu', True")
    bias = sig.by_name()["bias_ptr"]
    assert bias.is_constexpr and bias.value.kind == "none"


@pytest.mark.parametrize("sig,constexprs,defaults,culprit", [
    ("*fp32, i32", "BLOCK=64,EVEN=True", {}, "the omitted 'bias_ptr' is not tl.constexpr"),
    ("*fp32, i32, None", "EVEN=True", {}, "the omitted 'BLOCK' is a tl.constexpr without a "
     "default"),
    ("*fp32, i32, None, 64", "EVEN=True", {"ACT": "{} (dict), which rules_triton cannot"},
     "the omitted 'ACT' has the default {} (dict)"),
    ("*fp32, i32, None", "bias_ptr=None", {}, "--constexprs: 'bias_ptr' is not tl.constexpr"),
    ("*fp32, i32, None, 64, 'a', True", "", {}, None),
])
def test_omitted_errors(sig, constexprs, defaults, culprit):
    if culprit is None:
        _bind(sig, constexprs, defaults)
        return
    with pytest.raises(UserError) as info:
        _bind(sig, constexprs, defaults)
    assert culprit in str(info.value)


# ----------------------------------------------------------------------------- build-time values


def test_runtime_value_keeps_what_the_hints_say():
    from triton_aot.compile.decorators import RuntimeValue, Undecided
    n = RuntimeValue("n", 16)
    assert n % 16 == 0 and n % 8 == 0 and (n * 2) % 32 == 0 and (n + 16) % 16 == 0
    for expr in (lambda: bool(n % 64 == 0), lambda: bool(n > 0), lambda: int(n),
                 lambda: bool(RuntimeValue("m", 1) % 2 == 0), lambda: RuntimeValue("p", None).dtype):
        with pytest.raises(Undecided):
            expr()


def test_next_power_of_2_of_a_runtime_value_is_undecided():
    import triton
    from triton_aot.compile.decorators import RuntimeValue, Undecided
    with pytest.raises(Undecided):
        int(triton.next_power_of_2(RuntimeValue("n", 16)))


def test_python_const():
    import triton.language as tl
    from triton_aot.compile.decorators import python_const
    assert python_const(tl.float16, "x").repr == "tl.float16"
    assert python_const("leaky_relu", "x").repr == "'leaky_relu'"
    assert python_const(None, "x").kind == "none"
    assert python_const(tl.constexpr(8), "x").repr == "8"
    assert python_const(0.5, "x").repr == "0.5"
    for bad in ([1], "a,b", float("nan")):
        with pytest.raises(UserError):
            python_const(bad, "the default of 'X'")


# ----------------------------------------------------------------------------- the compile tool


def _compile(tmp_path, *extra, kernel="bias_kernel"):
    out = tmp_path / "v.json"
    argv = [f"--kernel_path={KERNELS / 'decorated.py'}", f"--kernel_name={kernel}",
            "--grid=cdiv(n, 64)", "--target=cuda:80", "--symbol=v", f"--out_json={out}",
            *extra]
    import io
    err = io.StringIO()
    rc = run_command_line(argv, err)
    return rc, err.getvalue(), (json.loads(out.read_text()) if rc == 0 else None)


def test_compile_defaults_none_heuristics_and_autotune(tmp_path):
    rc, err, rec = _compile(tmp_path, "--signature=*fp32, *fp32, i32", "--hints=n:16",
                            "--constexprs=BLOCK=128,ACTIVATION='relu'", "--num_warps=2",
                            "--num_stages=3")
    assert rc == 0, err
    assert rec["constexprs"] == {"bias_ptr": "None", "ACTIVATION": "'relu'", "BLOCK": "128",
                                 "ALIGNED": "True"}
    assert [a["name"] for a in rec["args"]
            if a["type"]["kind"] != "constexpr"] == ["x_ptr", "out_ptr", "n"]
    # the num_warps heuristic overrides the algo's 2, as in the JIT; config (128, 2) is index 3
    assert rec["num_warps"] == 4
    assert rec["autotune"] == {"key": ["n"], "config": 3}
    # what the heuristics set is the variant's; the algo is what the config asked for
    assert rec["heuristics"] == ["ALIGNED", "num_warps"]
    assert rec["algo_launch"] == {"num_warps": 2, "num_stages": 3, "num_ctas": 1,
                                  "maxnreg": None}


def test_compile_heuristic_undecided_without_hint(tmp_path):
    rc, err, _ = _compile(tmp_path, "--signature=*fp32, *fp32, i32", "--constexprs=BLOCK=64")
    assert rc == 1 and err.count("\n") == 1
    assert "@triton.heuristics value 'ALIGNED' of kernel 'bias_kernel' needs the run-time " \
           "value ((n % 16) == 0)" in err


def test_compile_heuristic_overridden_by_the_algo(tmp_path):
    rc, err, rec = _compile(tmp_path, "--signature=*fp32, *fp32, i32",
                            "--constexprs=BLOCK=64,ALIGNED=False", "--num_warps=8")
    assert rc == 0, err
    # no config has num_warps=8: the algo is not one of the autotuner's
    assert rec["constexprs"]["ALIGNED"] == "False" and rec["autotune"]["config"] is None


def test_autotune_configs_tool(tmp_path):
    from triton_aot.compile import autotune_configs
    out = tmp_path / "a.bzl"
    import io, contextlib
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = autotune_configs.main([f"--kernel_path={KERNELS / 'decorated.py'}",
                                    "--kernels=bias_kernel", f"--out={out}"])
    assert rc == 0, err.getvalue()
    text = out.read_text()
    assert text.count("triton_algo(") == 4 and '"BLOCK": 128,' in text
    assert 'AUTOTUNE_KEYS = {\n    "bias_kernel": ["n"],\n}' in text
    assert 'load(":a.bzl", "ALGOS")' in text
    with contextlib.redirect_stderr(err):
        assert autotune_configs.main([f"--kernel_path={KERNELS / 'decorated.py'}",
                                      "--kernels=nope", f"--out={out}"]) == 1


def test_pointer_arguments_know_their_element_type_and_alignment():
    import triton.language as tl
    from triton_aot.compile.decorators import PointerValue, RuntimeValue, Undecided

    class TorchLike:  # compares as torch dtypes do: by their str, from a module named torch
        __module__ = "torch"

        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    x = PointerValue("x", "fp16", 16)
    assert x.dtype == tl.float16 and x.dtype != tl.float32
    assert x.dtype == TorchLike("float16") and not x.dtype == TorchLike("bfloat16")
    assert x.element_size() == 2 and x.dtype.is_floating_point
    assert x.data_ptr() % 16 == 0
    assert x is not None and x != None and not (x == None)  # noqa: E711
    with pytest.raises(Undecided):
        bool(PointerValue("y", "fp32", None).data_ptr() % 16 == 0)
    with pytest.raises(Undecided):
        x.shape
    assert RuntimeValue("n", 1) != None  # noqa: E711
