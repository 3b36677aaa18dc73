"""--grid: whitelist validation, canonical source and the emitted C."""

import importlib.util
import random
from pathlib import Path
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triton_aot.core.binding import ParamInfo, bind
from triton_aot.core.errors import UserError
from triton_aot.core.grid import MAX_DEPTH, parse_grid, parse_launch_args
from triton_aot.core.signature import parse_constexprs, parse_signature

RUNTIME_DIR = Path(__file__).resolve().parent.parent.parent / "runtime"  # trt_runtime.h

PARAMS = [("x_ptr", "*fp16"), ("alpha", "fp32"), ("flag", "i1"), ("M", "i32"), ("N", "i64"),
          ("K", "u32"), ("ONE", "i32:1"), ("BLOCK", "128"), ("ACT", "ACT")]
SIG = bind(parse_signature(", ".join(t for _, t in PARAMS)),
           [ParamInfo(n, n in ("BLOCK", "ACT")) for n, _ in PARAMS], {},
           parse_constexprs("ACT='relu'"), "k")


def grid(text):
    return parse_grid(text, SIG)


# ----------------------------------------------------------------------------- accepted


@pytest.mark.parametrize("text,source", [
    ("cdiv(M, 128), 1, 1", ("cdiv(M, 128)", "1", "1")),
    ("(M + 63) / 64, N, 1", ("(M + 63) / 64", "N", "1")),
    ("cdiv(M,128)", ("cdiv(M, 128)", "1", "1")),
    ("M, N", ("M", "N", "1")),
    ("  M*N%7 , (K) , ((1))", ("M * N % 7", "K", "1")),
    ("M - (N - K)", ("M - (N - K)", "1", "1")),
    ("M - N - K", ("M - N - K", "1", "1")),
    ("M * (N + 1)", ("M * (N + 1)", "1", "1")),
    ("-(-M)", ("-(-M)", "1", "1")),
    ("+M", ("M", "1", "1")),
    ("cdiv(cdiv(M, 2), cdiv(N, 4))", ("cdiv(cdiv(M, 2), cdiv(N, 4))", "1", "1")),
    ("ONE * M", ("ONE * M", "1", "1")),
    ("0", ("0", "1", "1")),
    ("min(NUM_SMS, cdiv(M, 64))", ("min(NUM_SMS, cdiv(M, 64))", "1", "1")),
    ("max( M,N ) , min(1,K)", ("max(M, N)", "min(1, K)", "1")),
    ("NUM_SMS * 2 - max(M, 0)", ("NUM_SMS * 2 - max(M, 0)", "1", "1")),
])
def test_accepted(text, source):
    assert grid(text).source == source


def test_canonical_source_is_a_fixed_point():
    g = grid("((M+63)/64)*2, cdiv( N ,  K ) % 3, -(M - -N)")
    assert grid(", ".join(g.source)).source == g.source


def test_emitted_c():
    g = grid("cdiv(M, 128), (M + 63) / 64, ONE")
    assert g.c == (
        "trt_grid_cdiv((int64_t)M, (int64_t)128)",
        "trt_grid_div(trt_grid_add((int64_t)M, (int64_t)63), (int64_t)64)",
        "(int64_t)1",  # `:1` arguments are the literal 1: they are not launcher parameters
    )


def test_min_max_and_device_attributes_in_c():
    g = grid("min(NUM_SMS, M), max(N, 1)")
    assert g.c[0] == "trt_grid_min(trt_attr_num_sms, (int64_t)M)"
    assert g.c[1] == "trt_grid_max((int64_t)N, (int64_t)1)"
    assert g.device_attrs == ("NUM_SMS",)
    assert grid("M").device_attrs == ()


def test_launch_args():
    la = parse_launch_args("n_rows: i32, tiles:u64", SIG)
    assert [(a.name, a.type) for a in la] == [("n_rows", "i32"), ("tiles", "u64")]
    g = parse_grid("cdiv(n_rows, 4), min(NUM_SMS, tiles)", SIG, la)
    assert g.c[0] == "trt_grid_cdiv((int64_t)n_rows, (int64_t)4)"
    assert g.c[1] == "trt_grid_min(trt_attr_num_sms, (int64_t)tiles)"
    assert parse_launch_args("  ", SIG) == ()
    with pytest.raises(UserError, match=r"launch arguments: n_rows, tiles\)"):
        parse_grid("n_cols", SIG, la)


@pytest.mark.parametrize("text,culprit", [
    ("n_rows", "is not 'name: type'"),
    ("n_rows: fp32", "launch arguments are integers"),
    ("n_rows: *i32", "is not 'name: type'"),
    ("M: i32", "'M' is already a parameter of the kernel"),
    ("BLOCK: i32", "'BLOCK' is already a parameter of the kernel"),
    ("n: i32, n: i64", "'n' is given twice"),
    ("stream: i64", "is a parameter of the C API itself"),
    ("algo_id: i32", "is a parameter of the C API itself"),
    ("NUM_SMS: i32", "is a device attribute"),
    ("n: i32;", "is not 'name: type'"),
])
def test_launch_args_rejected(text, culprit):
    with pytest.raises(UserError) as info:
        parse_launch_args(text, SIG)
    assert culprit in str(info.value)
    assert str(info.value).startswith("--launch_args")


def test_awkward_names_are_their_c_names_in_the_grid():
    """Names C cannot use (a keyword, a cuda.h prefix) are read through their C names."""
    sig = bind(parse_signature("i32, i32"), [ParamInfo("int", False), ParamInfo("CU_N", False)],
               {}, {}, "k")
    la = parse_launch_args("default: i32", sig)
    assert parse_grid("cdiv(int, 64), CU_N, default", sig, la).c == (
        "trt_grid_cdiv((int64_t)trt_int, (int64_t)64)", "(int64_t)trt_CU_N",
        "(int64_t)trt_default")


def test_kernel_parameter_named_like_a_device_attribute():
    sig = bind(parse_signature("i32"), [ParamInfo("NUM_SMS", False)], {}, {}, "k")
    with pytest.raises(UserError, match="names both a kernel parameter and the device attribute"):
        parse_grid("NUM_SMS", sig)


def test_padding_to_three():
    assert grid("M").c == ("(int64_t)M", "(int64_t)1", "(int64_t)1")
    assert len(grid("M, N").c) == 3


# ----------------------------------------------------------------------------- rejected


@pytest.mark.parametrize("text,culprit", [
    ("Q", "unknown name 'Q' (the kernel's integer arguments are M, N, K, ONE)"),
    ("cdiv(M, BLOCK)", "'BLOCK' is a tl.constexpr (= 128); write its value 128 instead"),
    ("ACT", "'ACT' is a tl.constexpr"),
    ("alpha", "'alpha' is a floating-point argument (fp32)"),
    ("x_ptr", "'x_ptr' is a pointer argument (*fp16)"),
    ("flag", "'flag' is a boolean argument (i1)"),
    ("pow(M, 1)", "function 'pow' is not allowed; the functions are cdiv(a, b), min(a, b) "
     "and max(a, b)"),
    ("min(M)", "expected ','"),
    ("max(M, 1, 2)", "expected ')'"),
    ("NUM_SMS(1)", "function 'NUM_SMS' is not allowed"),
    ("num_sms", "unknown name 'num_sms'"),
    ("n_rows", "a grid value the kernel does not take must be declared as a launch argument"),
    ("triton.cdiv(M, 2)", "character '.' is not allowed"),
    ("M; exit(0)", "character ';' is not allowed"),
    ("'M'", "character \"'\" is not allowed"),
    ('"M"', "character '\"' is not allowed"),
    ("{M}", "character '{' is not allowed"),
    ("M[0]", "character '[' is not allowed"),
    ("M // 2", "'//' is not allowed; use /"),
    ("M /* x */", "expected a number"),
    ("M ** 2", "expected a number"),
    ("M << 2", "character '<' is not allowed"),
    ("M ? 1 : 2", "character '?' is not allowed"),
    ("M == 1", "character '=' is not allowed"),
    ("1.5", "character '.' is not allowed"),
    ("0x10", "unexpected token"),
    ("010", "leading zeros"),
    ("9223372036854775808", "does not fit in int64_t"),
    ("cdiv(M)", "expected ','"),
    ("cdiv(M, 1, 2)", "expected ')'"),
    ("(M", "expected ')'"),
    ("M)", "unexpected token"),
    ("M,,1", "expected a number"),
    ("M, 1,", "expected a number"),
    ("1, 1, 1, 1", "has 4 entries"),
    ("", "--grid is empty"),
    ("   ", "--grid is empty"),
    ("M N", "unexpected token"),
    ("#define", "character '#' is not allowed"),
    ("M\\\n", "character '\\\\' is not allowed"),
])
def test_rejected(text, culprit):
    with pytest.raises(UserError) as info:
        grid(text)
    message = str(info.value)
    assert culprit in message, message
    assert message.startswith("--grid")


def test_nesting_limit():
    grid("(" * MAX_DEPTH + "M" + ")" * MAX_DEPTH)
    with pytest.raises(UserError, match="nested deeper"):
        grid("(" * (MAX_DEPTH + 1) + "M" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(UserError, match="nested deeper"):
        grid("-" * 1000 + "M")


def test_no_integer_arguments():
    sig = bind(parse_signature("*fp32"), [ParamInfo("p", False)], {}, {}, "k")
    with pytest.raises(UserError, match="the kernel has no integer arguments"):
        parse_grid("n", sig)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet="MNK0123 +-*/%(),cdiv;x.", max_size=30))
def test_parser_only_raises_user_errors(text):
    try:
        g = grid(text)
    except UserError:
        return
    assert len(g.c) == 3 and len(g.source) == 3


# ----------------------------------------------------------------------------- C semantics


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class _Invalid(Exception):
    """A zero divisor somewhere: the C gives a negative value (the launcher rejects it)."""


def _ref(node, env):
    """Reference semantics: int64 C arithmetic; a zero divisor anywhere makes the result
    invalid (negative)."""
    value = _ref1(node, env)
    if not -2**62 < value < 2**62:
        raise OverflowError  # C would overflow: not a usable test case
    return value


def _ref1(node, env):
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "arg":
        return env[node[1]]
    if kind == "neg":
        return -_ref(node[1], env)
    a, b = _ref(node[1], env), _ref(node[2], env)
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "min":
        return min(a, b)
    if kind == "max":
        return max(a, b)
    if b == 0:
        raise _Invalid
    if kind == "/":
        return _tdiv(a, b)
    if kind == "%":
        return a - b * _tdiv(a, b)
    return _tdiv(a + b - 1, b)  # cdiv


def _text(node):
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "arg":
        return node[1]
    if kind == "neg":
        return f"-({_text(node[1])})"
    if kind in ("cdiv", "min", "max"):
        return f"{kind}({_text(node[1])}, {_text(node[2])})"
    return f"({_text(node[1])} {kind} {_text(node[2])})"


def _random_tree(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        if rng.random() < 0.5:
            return ("num", rng.choice([0, 1, 2, 3, 7, 64, 100]))
        return ("arg", rng.choice(["M", "N", "K", "ONE"]))
    if rng.random() < 0.1:
        return ("neg", _random_tree(rng, depth - 1))
    op = rng.choice(["+", "-", "*", "/", "%", "cdiv", "min", "max"])
    return (op, _random_tree(rng, depth - 1), _random_tree(rng, depth - 1))


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_emitted_c_matches_reference_semantics(tmp_path):
    rng = random.Random(20240611)
    envs = [{"M": m, "N": n, "K": k, "ONE": 1}
            for m, n, k in [(0, 0, 0), (1000, -7, 3), (-1000, 64, 0), (129, 5, 4000000000)]]
    cases = []
    while len(cases) < 400:
        tree = _random_tree(rng, 3)
        values = []
        try:
            for env in envs:
                try:
                    values.append(_ref(tree, env))
                except _Invalid:
                    values.append(None)  # any negative value
            cases.append((tree, values))
        except OverflowError:
            pass
    body = []
    for i, (tree, _) in enumerate(cases):
        c = grid(_text(tree)).c[0]
        body.append(f'  printf("%lld\\n", (long long)({c}));')
    program = ('#include "trt_runtime.h"\n'  # the trt_grid_* helpers the C calls
               + "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
               "int main(int argc, char **argv) {\n"
               "  int32_t M = atoi(argv[1]); int64_t N = atoll(argv[2]);\n"
               "  uint32_t K = (uint32_t)strtoul(argv[3], 0, 10);\n"
               + "\n".join(body) + "\n  return 0;\n}\n")
    (tmp_path / "g.c").write_text(program)
    exe = tmp_path / "g"
    triton_dir = list(importlib.util.find_spec("triton").submodule_search_locations)[0]
    subprocess.run(["cc", "-std=c11", "-O1", "-Wall", "-Werror", "-fsanitize=undefined",
                    "-fno-sanitize-recover=all",
                    f"-I{triton_dir}/backends/nvidia/include", f"-I{RUNTIME_DIR}", "-o", str(exe),
                    str(tmp_path / "g.c"), "-ldl", "-lpthread"], check=True)
    for j, env in enumerate(envs):
        out = subprocess.run([str(exe), str(env["M"]), str(env["N"]), str(env["K"])],
                             check=True, capture_output=True, text=True).stdout.split()
        for got, (tree, values) in zip(out, cases):
            want = values[j]
            assert int(got) == want if want is not None else int(got) < 0, (_text(tree), env)


def test_tensordesc_shape_in_the_grid():
    """A descriptor's shape is int64 C parameters (NAME_shape0, ...): grids may use them; the
    descriptor itself, its base and strides are not integers the grid may read."""
    sig = bind(parse_signature("tensordesc<fp16[128, 64]>, i32, 128"),
               [ParamInfo("a_desc", False), ParamInfo("n", False), ParamInfo("BM", True)],
               {}, {}, "k")
    grid = parse_grid("cdiv(a_desc_shape0, 128), a_desc_shape1", sig)
    assert grid.c[0] == "trt_grid_cdiv((int64_t)a_desc_shape0, (int64_t)128)"
    assert grid.c[1] == "(int64_t)a_desc_shape1"
    with pytest.raises(UserError, match="'a_desc' is a tensor descriptor .*a_desc_shape0"):
        parse_grid("a_desc", sig)
    with pytest.raises(UserError, match="unknown name 'a_desc_stride0'"):
        parse_grid("a_desc_stride0", sig)
    with pytest.raises(UserError, match="C parameter of the tensor descriptor 'a_desc'"):
        parse_launch_args("a_desc_shape0: i64", sig)


# ----------------------------------------------------------------------------- reset_to_zero

from triton_aot.core.grid import parse_reset_to_zero  # noqa: E402

RTZ_PARAMS = [("c_ptr", "*fp32"), ("b_ptr", "*bf16"), ("desc", "tensordesc<fp16[16, 16]>"),
              ("alpha", "fp32"), ("M", "i32"), ("N", "i32"), ("s", "i32:1"), ("bias", "None"),
              ("BLOCK", "128")]
RTZ_SIG = bind(parse_signature(", ".join(t for _, t in RTZ_PARAMS)),
               [ParamInfo(n, n == "BLOCK") for n, _ in RTZ_PARAMS], {}, {}, "k")


def test_reset_to_zero_regions_in_parameter_order():
    regions = parse_reset_to_zero(["b_ptr=cdiv(M, {BLOCK}) * {BLOCK}", "c_ptr=M, N, s"], RTZ_SIG)
    assert [r.name for r in regions] == ["c_ptr", "b_ptr"]
    c, b = regions
    assert c.is_2d and c.source == ("M", "N", "s")
    # a :1 argument is the constant 1 in C, as in grids
    assert c.c == ("(int64_t)M", "(int64_t)N", "(int64_t)1")
    assert not b.is_2d and b.source == ("cdiv(M, 128) * 128",)
    assert b.c == ("trt_grid_mul(trt_grid_cdiv((int64_t)M, (int64_t)128), (int64_t)128)",)


def test_reset_to_zero_strided_matrix():
    """Four extents: a rows x cols matrix with both strides (the runtime picks the unit one)."""
    (c,) = parse_reset_to_zero(["c_ptr=M, N, s, M + 8"], RTZ_SIG)
    assert c.is_2d and c.source == ("M", "N", "s", "M + 8")
    assert c.c == ("(int64_t)M", "(int64_t)N", "(int64_t)1",
                   "trt_grid_add((int64_t)M, (int64_t)8)")


def test_reset_to_zero_launch_args():
    from triton_aot.core.grid import LaunchArg
    (r,) = parse_reset_to_zero(["c_ptr=rows * N"], RTZ_SIG, [LaunchArg("rows", "i64")])
    assert r.c == ("trt_grid_mul((int64_t)rows, (int64_t)N)",)


@pytest.mark.parametrize("entry,message", [
    ("x_ptr=M", "--reset_to_zero (algo 3): x_ptr: 'x_ptr' is not an argument of the kernel"),
    ("alpha=M", "'alpha' is a scalar argument (fp32), not a pointer"),
    ("M=M", "'M' is a scalar argument (i32), not a pointer"),
    ("desc=M", "'desc' is a tensor descriptor (tensordesc<fp16[16, 16]>), not a pointer"),
    ("bias=M", "'bias' is a constexpr (None: not an argument of the compiled kernel)"),
    ("BLOCK=M", "'BLOCK' is a tl.constexpr, not a pointer"),
    ("c_ptr=M, N", "'M, N' has 2 expressions; give 'count' (1-D), 'rows, cols, row_stride'"),
    ("c_ptr=M, N, 1, 1, 1", "has 5 expressions; give 'count' (1-D)"),
    ("c_ptr=", "the extent is empty"),
    ("c_ptr", "is not NAME=EXTENTS"),
    ("c_ptr={BLOCK_M}", "{BLOCK_M} in '{BLOCK_M}' is not an integer constexpr of this algo "
                        "(its integer constexprs: BLOCK)"),
    ("c_ptr=NUM_SMS", "NUM_SMS (the current device's multiprocessor count) cannot size"),
    ("c_ptr=M; exit(1)", "--reset_to_zero (algo 3): c_ptr: character ';' is not allowed"),
    ("c_ptr=alpha", "'alpha' is a floating-point argument (fp32)"),
    ("c_ptr=pow(M, 2)", "function 'pow' is not allowed"),
])
def test_reset_to_zero_refusals(entry, message):
    with pytest.raises(UserError) as e:
        parse_reset_to_zero([entry], RTZ_SIG, algo_index=3)
    assert message in e.value.message
    assert e.value.message.startswith("--reset_to_zero")


def test_reset_to_zero_twice():
    with pytest.raises(UserError, match="'c_ptr' is given twice"):
        parse_reset_to_zero(["c_ptr=M", "c_ptr=N"], RTZ_SIG)
