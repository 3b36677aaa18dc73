"""Signature / --hints / --constexprs parsing and binding (pure Python, no triton)."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triton_aot.core.binding import ParamInfo, bind
from triton_aot.core.errors import UserError
from triton_aot.core.signature import (ConstValue, NameEntry, TypedEntry, ValueEntry, canonical_type,
                                       parse_constexprs, parse_hints, parse_signature, parse_value)

ADD_PARAMS = (ParamInfo("x_ptr", False), ParamInfo("y_ptr", False), ParamInfo("out_ptr", False),
              ParamInfo("n", False), ParamInfo("BLOCK", True, "constexpr"))


def _bind(sig, hints="", constexprs="", params=ADD_PARAMS):
    return bind(parse_signature(sig), params, parse_hints(hints), parse_constexprs(constexprs),
                "add_kernel")


# ----------------------------------------------------------------------------- entries


@pytest.mark.parametrize("text,expected", [
    ("*fp16", TypedEntry("*fp16", None)),
    ("*fp16:16", TypedEntry("*fp16", 16)),
    (" *fp32 : 16 ", TypedEntry("*fp32", 16)),
    ("*float16", TypedEntry("*fp16", None)),
    ("*bfloat16", TypedEntry("*bf16", None)),
    ("*fp8e4nv", TypedEntry("*fp8e4nv", None)),
    ("*float8_e5m2", TypedEntry("*fp8e5", None)),
    ("*kfp16", TypedEntry("*kfp16", None)),
    ("*i1", TypedEntry("*i1", None)),
    ("i32", TypedEntry("i32", None)),
    ("i32:16", TypedEntry("i32", 16)),
    ("i64:1", TypedEntry("i64", 1)),
    ("u32:16", TypedEntry("u32", 16)),
    ("int32", TypedEntry("i32", None)),
    ("int", TypedEntry("i32", None)),
    ("uint64", TypedEntry("u64", None)),
    ("bool", TypedEntry("i1", None)),
    ("int1", TypedEntry("i1", None)),
    ("i1", TypedEntry("i1", None)),
    ("u1", TypedEntry("u1", None)),
    ("float", TypedEntry("fp32", None)),
    ("float32", TypedEntry("fp32", None)),
    ("double", TypedEntry("fp64", None)),
    ("half", TypedEntry("fp16", None)),
    ("bf16", TypedEntry("bf16", None)),
    ("1024", ValueEntry(ConstValue("int", 1024, "1024"))),
    ("-3", ValueEntry(ConstValue("int", -3, "-3"))),
    ("0.5", ValueEntry(ConstValue("float", 0.5, "0.5"))),
    ("1e-5", ValueEntry(ConstValue("float", 1e-5, "1e-05"))),
    ("True", ValueEntry(ConstValue("bool", True, "True"))),
    ("False", ValueEntry(ConstValue("bool", False, "False"))),
    ("None", ValueEntry(ConstValue("none", None, "None"))),
    ("tl.float16", ValueEntry(ConstValue("dtype", "tl.float16", "tl.float16"))),
    ("tl.bfloat16", ValueEntry(ConstValue("dtype", "tl.bfloat16", "tl.bfloat16"))),
    ("'relu'", ValueEntry(ConstValue("str", "relu", "'relu'"))),
    ('"gelu"', ValueEntry(ConstValue("str", "gelu", "'gelu'"))),
    ("BLOCK", NameEntry("BLOCK")),
    ("_x1", NameEntry("_x1")),
])
def test_entries(text, expected):
    assert parse_signature(text) == [expected]


def test_upstream_example():
    assert parse_signature("*fp32:16, i32:16, 1024, i32") == [
        TypedEntry("*fp32", 16), TypedEntry("i32", 16),
        ValueEntry(ConstValue("int", 1024, "1024")), TypedEntry("i32", None)]


@pytest.mark.parametrize("text,culprit", [
    ("", "--signature is empty"),
    ("*fp32,, i32", "entry 2 is empty"),
    ("*fp32, i32,", "entry 3 is empty"),
    ("*fp23", "unknown pointer element type 'fp23'"),
    ("*fp23:16", "unknown type '*fp23'"),
    ("f32:16", "unknown type 'f32'"),
    ("fp32:16", "fp32 cannot take a hint"),
    ("bf16:1", "bf16 cannot take a hint"),
    ("i1:16", "i1 cannot take a hint"),
    ("i32:8", "hint :8 is not supported"),
    ("i32:0", "hint :0 is not supported"),
    ("*fp16:1", "can only take the :16 hint"),
    ("i32:x", "hint 'x' is not a number"),
    ("fp8e4nv", "fp8 scalars have no C ABI"),
    ("tl.float17", "unknown dtype 'tl.float17'"),
    ("1e999", "not finite"),
    ("99999999999999999999999", "does not fit in 64 bits"),
    ("'a,b'", "must be quoted"),
    ("'a;b'", "must be quoted"),
    ("x + 1", "cannot parse 'x + 1'"),
    ("[1, 2]", "cannot parse"),
])
def test_entry_errors(text, culprit):
    with pytest.raises(UserError, match=None) as info:
        parse_signature(text)
    assert culprit in str(info.value)
    assert "--signature" in str(info.value)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=40))
def test_signature_parser_never_crashes(text):
    try:
        entries = parse_signature(text)
    except UserError:
        return
    assert entries and all(isinstance(e, (TypedEntry, ValueEntry, NameEntry)) for e in entries)


@pytest.mark.parametrize("t", ["i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
                               "fp16", "bf16", "fp32", "fp64"])
def test_canonical_scalars_are_fixed_points(t):
    assert canonical_type(t) == t
    assert canonical_type("*" + t) == "*" + t


def test_parse_value_rejects_nothing_silently():
    assert parse_value("abc") is None
    assert parse_value("tl.int32") == ConstValue("dtype", "tl.int32", "tl.int32")


# ----------------------------------------------------------------------------- --hints


def test_hints():
    assert parse_hints("") == {}
    assert parse_hints("x_ptr:16 n:16, stride:1") == {"x_ptr": 16, "n": 16, "stride": 1}
    assert parse_hints("a:16,a:16") == {"a": 16}


@pytest.mark.parametrize("text,culprit", [
    ("x_ptr", "cannot parse 'x_ptr'"),
    ("x_ptr:", "cannot parse"),
    ("x_ptr:8", "only :16 and :1"),
    ("1x:16", "cannot parse"),
    ("a:16 a:1", "given twice"),
])
def test_hint_errors(text, culprit):
    with pytest.raises(UserError) as info:
        parse_hints(text)
    assert culprit in str(info.value) and "--hints" in str(info.value)


# ----------------------------------------------------------------------------- --constexprs


def test_constexprs():
    got = parse_constexprs("BLOCK=128, DTYPE=tl.float16,EPS=1e-6,FLAG=True,ACT='relu',B=None")
    assert list(got) == ["BLOCK", "DTYPE", "EPS", "FLAG", "ACT", "B"]
    assert got["BLOCK"] == ConstValue("int", 128, "128")
    assert got["DTYPE"].kind == "dtype"
    assert got["EPS"].value == 1e-6
    assert got["FLAG"].value is True
    assert got["ACT"].value == "relu"
    assert got["B"].kind == "none"


@pytest.mark.parametrize("text,culprit", [
    ("BLOCK", "write NAME=VALUE"),
    ("=3", "write NAME=VALUE"),
    ("BLOCK=", "is not a value"),
    ("BLOCK=foo", "is not a value"),
    ("BLOCK=1,BLOCK=2", "'BLOCK' is given twice"),
    ("X=tl.nope", "unknown dtype"),
])
def test_constexpr_errors(text, culprit):
    with pytest.raises(UserError) as info:
        parse_constexprs(text)
    assert culprit in str(info.value) and "--constexprs" in str(info.value)


# ----------------------------------------------------------------------------- binding


def test_bind_values_and_names():
    sig = _bind("*fp32:16, *fp32, *fp32, i32:16, 1024")
    a = sig.by_name()
    assert a["x_ptr"].type == "*fp32" and a["x_ptr"].hint == 16
    assert a["y_ptr"].hint is None
    assert a["n"].hint == 16 and not a["n"].is_constexpr
    assert a["BLOCK"].is_constexpr and a["BLOCK"].value.value == 1024
    assert [x.index for x in sig.args] == [0, 1, 2, 3, 4]

    sig2 = _bind("*fp32, *fp32, *fp32, i32, BLOCK", hints="x_ptr:16 n:1",
                 constexprs="BLOCK=256")
    b = sig2.by_name()
    assert b["BLOCK"].value.repr == "256"
    assert b["x_ptr"].hint == 16
    assert b["n"].hint == 1 and b["n"].is_one


def test_bind_same_hint_twice_is_fine():
    assert _bind("*fp32:16, *fp32, *fp32, i32, 8", hints="x_ptr:16").by_name()["x_ptr"].hint == 16


@pytest.mark.parametrize("sig,hints,constexprs,culprit", [
    # one entry short: the entries are checked first (the 8 lands on n)
    ("*fp32, *fp32, i32, 8", "", "", "'n' is not tl.constexpr, so it cannot be given the "
     "constant '8'"),
    ("*fp32, *fp32, *fp32, i32", "", "", "--signature has 4 entries for the 5 parameters of "
     "'add_kernel' (x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr); the omitted 'BLOCK' is a "
     "tl.constexpr without a default, so it has no value"),
    ("*fp32, *fp32, *fp32, i32, 8, 9", "", "", "has 6 entries"),
    ("*fp32, *fp32, *fp32, i32, i32", "", "", "'BLOCK' is tl.constexpr, but the entry is the type"),
    ("*fp32, *fp32, *fp32, 5, 8", "", "", "'n' is not tl.constexpr"),
    ("*fp32, *fp32, *fp32, n, 8", "", "n=5", "'n' is not tl.constexpr"),
    ("*fp32, *fp32, *fp32, i32, BLOCK", "", "", "BLOCK has no value; pass --constexprs=BLOCK="),
    ("*fp32, *fp32, *fp32, i32, BLK", "", "BLK=3", "--constexprs: 'BLK' is not a parameter"),
    ("*fp32, *fp32, *fp32, i32, BLK", "", "", "'BLK' is neither a type nor the parameter's name"),
    ("*fp32, *fp32, *fp32, i32, 8", "", "BLOCK=8", "already has the value 8"),
    ("*fp32, *fp32, *fp32, i32, 8", "", "n=3", "--constexprs: 'n' is not tl.constexpr"),
    ("*fp32, *fp32, *fp32, i32, 8", "zz:16", "", "--hints: 'zz' is not a parameter"),
    ("*fp32, *fp32, *fp32, i32, 8", "BLOCK:16", "", "--hints: 'BLOCK' is tl.constexpr"),
    ("*fp32, *fp32, *fp32, i32:16, 8", "n:1", "", "contradicts the signature's i32:16"),
    ("*fp32, *fp32, *fp32, i32, 8", "x_ptr:1", "", "can only take the :16 hint"),
])
def test_bind_errors(sig, hints, constexprs, culprit):
    with pytest.raises(UserError) as info:
        _bind(sig, hints, constexprs)
    assert culprit in str(info.value)


def test_bind_float_hint_by_name():
    params = (ParamInfo("alpha", False),)
    with pytest.raises(UserError, match="fp32 cannot take a hint"):
        bind(parse_signature("fp32"), params, parse_hints("alpha:16"), {}, "k")


def test_bind_takes_c_keywords():
    # generated C renames them (abi.c_param_name); only names outside C's syntax are refused
    assert bind(parse_signature("i32"), (ParamInfo("int", False),), {}, {}, "k").args[0].name \
        == "int"
    with pytest.raises(UserError, match="'n\u00e4' is not a valid C identifier"):
        bind(parse_signature("i32"), (ParamInfo("n\u00e4", False),), {}, {}, "k")
    # constexprs never reach C, so their names are free
    bind(parse_signature("4"), (ParamInfo("n\u00e4", True, "constexpr"),), {}, {}, "k")


def test_bind_checks_annotations():
    params = (ParamInfo("n", False, "i64"),)
    assert bind(parse_signature("i64"), params, {}, {}, "k").args[0].type == "i64"
    with pytest.raises(UserError, match="annotates 'n' as i64 but the signature says i32"):
        bind(parse_signature("i32"), params, {}, {}, "k")
    # Triton canonicalises bool annotations to u1; i1 is the same kernel type
    bind(parse_signature("i1"), (ParamInfo("f", False, "u1"),), {}, {}, "k")


# ----------------------------------------------------------------------------- tensor descriptors


@pytest.mark.parametrize("text,expected", [
    ("tensordesc<fp16[128, 64]>", "tensordesc<fp16[128, 64]>"),
    ("tensordesc<fp16[128,64]>", "tensordesc<fp16[128, 64]>"),
    (" tensordesc < float16 [ 64 , 32 , 2 ] > ", "tensordesc<fp16[64, 32, 2]>"),
    ("tensordesc<bf16[256]>", "tensordesc<bf16[256]>"),
    ("tensordesc<fp8e4nv[1, 2, 4, 8, 16]>", "tensordesc<fp8e4nv[1, 2, 4, 8, 16]>"),
    ("tensordesc<i64[16, 16]>", "tensordesc<i64[16, 16]>"),
])
def test_tensordesc_spellings(text, expected):
    assert parse_signature(f"*fp32, {text}, i32") == [
        TypedEntry("*fp32", None), TypedEntry(expected, None), TypedEntry("i32", None)]


def test_tensordesc_commas_inside_brackets_do_not_split():
    """The issue's example: this used to fail with "entry 5 ('tensordesc<fp16[128'): cannot
    parse"."""
    entries = parse_signature("*fp16, *fp16, i32, i32, tensordesc<fp16[128, 64]>, BLOCK")
    assert len(entries) == 6 and entries[4] == TypedEntry("tensordesc<fp16[128, 64]>", None)


@pytest.mark.parametrize("text,message", [
    ("tensordesc<fp16[128, 64>", "opens a '<' or '[' that is never closed"),
    ("tensordesc<fp16>", "cannot parse the tensor descriptor"),
    ("tensordesc<fp16[]>", "the block shape must be integers"),
    ("tensordesc<fp16[a, 4]>", "the block shape must be integers"),
    ("tensordesc<fp16[3]>", "block size 3 is not a power of two"),
    ("tensordesc<fp16[0]>", "block size 0 is not a power of two"),
    ("tensordesc<fp16[1, 1, 1, 1, 1, 1]>", "has rank 6"),
    ("tensordesc<i1[16]>", "element type 'i1' cannot be a tensor descriptor's"),
    ("tensordesc<int33[16]>", "element type 'int33'"),
    ("tensordesc<fp16[2048, 1024]>", "more than Triton's 1048576"),
    ("tensordesc<fp16[64]>:16", "a tensor descriptor takes no hint"),
    ("tensordesc<fp16[128, 64],NVMMASharedLayout(...)>", "Gluon-layout descriptors are not"),
    ("tensordesc_im2col<fp16[64, 64]>", "im2col"),
])
def test_tensordesc_errors(text, message):
    with pytest.raises(UserError, match=re.escape(message)):
        parse_signature(f"*fp32, {text}")


def test_tensordesc_binds_and_names_its_c_parameters():
    params = (ParamInfo("a_desc", False), ParamInfo("n", False))
    sig = bind(parse_signature("tensordesc<fp16[64, 64]>, i32"), params, {}, {}, "k")
    assert sig.args[0].type == "tensordesc<fp16[64, 64]>"
    with pytest.raises(UserError, match="cannot take a hint|takes no hint"):
        bind(parse_signature("tensordesc<fp16[64, 64]>, i32"), params, {"a_desc": 16}, {}, "k")
    clash = (ParamInfo("a", False), ParamInfo("a_shape1", False))
    with pytest.raises(UserError, match="becomes the C parameter 'a_shape1'"):
        bind(parse_signature("tensordesc<fp16[64, 64]>, i32"), clash, {}, {}, "k")
