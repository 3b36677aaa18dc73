"""The C entry generator (triton_aot.c_entry) on records: what it refuses as a whole, in one
line, and that what it renders is deterministic and carries every rule of the record.

The generated C itself runs in c_entry_fake_driver_test (against the fake driver)."""

import json

import pytest

from triton_aot.c_entry import entry, record
from triton_aot.contract import library
from triton_aot.core.errors import UserError

# The description's JSON form of the parameter types (core/arg_type.py's to_json).
BF16_PTR = {"kind": "pointer", "elem": "bf16", "const": False}
I32 = {"kind": "scalar", "name": "i32"}
FP32 = {"kind": "scalar", "name": "fp32"}

LIB = {
    "format": library.FORMAT, "name": "scale", "header": "scale.h", "backend": "cuda",
    "functions": [
        {"name": "scale", "entry": "algo", "params": [
            {"name": "stream", "c_type": "CUstream", "kernel_param": None, "type": None},
            {"name": "X", "c_type": "CUdeviceptr", "kernel_param": "X", "type": BF16_PTR},
            {"name": "Y", "c_type": "CUdeviceptr", "kernel_param": "Y", "type": BF16_PTR},
            {"name": "n", "c_type": "int32_t", "kernel_param": "n", "type": I32},
            {"name": "eps", "c_type": "float", "kernel_param": "eps", "type": FP32},
            {"name": "algo_id", "c_type": "int", "kernel_param": None, "type": None}]},
        {"name": "scale_default", "entry": "default", "params": [
            {"name": "stream", "c_type": "CUstream", "kernel_param": None, "type": None},
            {"name": "X", "c_type": "CUdeviceptr", "kernel_param": "X", "type": BF16_PTR},
            {"name": "Y", "c_type": "CUdeviceptr", "kernel_param": "Y", "type": BF16_PTR},
            {"name": "n", "c_type": "int32_t", "kernel_param": "n", "type": I32},
            {"name": "eps", "c_type": "float", "kernel_param": "eps", "type": FP32}]}],
    "algos": [{"index": 0, "info": "BLOCK=1024", "fingerprint": "a"},
              {"index": 1, "info": "BLOCK=4096", "fingerprint": "b"}],
    "specializations": [[["X", 16], ["Y", 16], ["n", 16]]],
    "variants": [{"symbol": "scale_a0_s0_sm90", "algo": 0, "specialization": 0,
                  "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}],
    "tuning": None,
}

OP = {
    "lib": "scale",
    "args": ["x", "eps: float"],
    "bind": {"X": "x", "n": "x.numel()", "eps": "eps"},
    "checks": ["x.dim() == 2"],
    "contiguous": ["x"],
    "outputs": {"Y": "x.size(0), x.size(1)"},
    "algo_choice": [["x.size(1) <= 1024", "0"], ["x.size(1) > 1024", "1"]],
}


@pytest.fixture
def libs(tmp_path):
    path = tmp_path / "scale.library.json"
    path.write_text(json.dumps(LIB))
    return {"scale": library.read_library(path)}


def render(op, libs, name="scale_dl"):
    return entry.render(name, "//pkg:scale_dl", entry.build(name, op, libs, {"scale": "pkg/scale.h"}))


def test_renders_every_rule_of_the_record(libs):
    source, header = render(OP, libs)
    assert "CUresult scale_dl(CUstream stream, const DLTensor *x, float eps, const DLTensor *Y, " \
           "void *workspace, size_t workspace_bytes);" in header
    assert "CUresult scale_dl_workspace_size(const DLTensor *x, size_t *bytes);" in header
    assert "Y: bf16[x.size(0), x.size(1)]" in header
    assert '#include "pkg/scale.h"' in source
    assert "trt_entry_input(x, kDLBfloat, 16, 2, 1," in source  # dtype, rank 2, contiguous
    assert "/* x.dim() == 2 */" in source
    assert "trt_entry_numel(&" in source  # n = x.numel()
    assert "INT64_C(2147483647)) return CUDA_ERROR_INVALID_VALUE;" in source  # n fits int32_t
    # the algo by the sizes, and no variant without hints: the pointers' and n's alignment
    assert "trt_algo0 = 0;  /* x.size(1) <= 1024 */" in source
    assert "else if (" in source and "trt_algo0 = 1;  /* x.size(1) > 1024 */" in source
    assert "% 16 == 0)" in source and "no variant of scale takes these values" in source
    assert "scale(stream, " in source and ", trt_algo0);" in source
    for forbidden in ("printf", "exit(", "abort(", "malloc", "cuMemAlloc"):
        assert forbidden not in source


def test_fills_are_memsets_before_the_first_launch(libs):
    # torch.zeros / torch.full outputs: memset on the caller's stream after every check (the
    # output's address among them) and before the launch; bf16 1.5 is 0x3fc0, twice over 32 bits
    source, header = render(dict(OP, fills={"Y": "1.5"}), libs)
    assert '#include "trt_runtime.h"' in source and "#define TRT_ENTRY_FILLS 1" in source
    fill = "trt_r = trt_entry_fill(&trt_drv, stream, trt_v_1_Y.ptr, trt_v_1_Y.bytes, 0x3fc03fc0u);"
    assert fill in source
    assert "if (trt_v_1_Y.ptr % 2 != 0) return CUDA_ERROR_INVALID_VALUE;" in source
    checks_end = source.index("no variant of scale takes these values")
    assert checks_end < source.index("if (trt_v_1_Y.ptr % 2") < source.index(fill) < \
        source.index("trt_r = scale(stream, ")
    assert "memsets on `stream` (the launcher's torch.zeros / torch.full), empty tensors " \
           "skipped:\n *   Y = 1.5\n" in header
    # without fills: no driver table, no memset
    plain, _ = render(OP, libs)
    assert "trt_runtime.h" not in plain and "trt_entry_fill(&" not in plain


@pytest.mark.parametrize("element, text, pattern", [
    ("fp32", "0.0", 0), ("fp32", "-0.0", 0x80000000), ("fp32", "1.0", 0x3F800000),
    ("fp16", "1.0", 0x3C003C00), ("fp16", "-2.0", 0xC000C000), ("fp16", "65504.0", 0x7BFF7BFF),
    ("bf16", "1.0", 0x3F803F80), ("bf16", "1.00390625", 0x3F803F80),  # halfway: to even
    ("bf16", "1.01171875", 0x3F823F82),
    ("fp64", "0.0", 0), ("i64", "-1.0", 0xFFFFFFFF), ("i64", "0.0", 0),
    ("i32", "7.0", 7), ("i32", "-2.5", 0xFFFFFFFE), ("i8", "-1.0", 0xFFFFFFFF),
    ("u8", "3.0", 0x03030303), ("u8", "-1.0", 0xFFFFFFFF), ("i16", "258.0", 0x01020102),
])
def test_fill_pattern(element, text, pattern):
    assert entry.fill_pattern(element, text, "fills['Y']") == pattern


@pytest.mark.parametrize("element, text, fragment", [
    ("fp64", "1.0", "its fp64 bits 0x3ff0000000000000 are no 32-bit pattern repeated"),
    ("fp64", "-0.0", "which a memset cannot write"),
    ("i64", "5.0", "its i64 bits 0x0000000000000005 are no 32-bit pattern repeated"),
    ("fp16", "65520.0", "beyond the largest fp16"),
    ("i8", "128.0", "out of the range of i8"),
    ("u8", "-256.0", "out of the range of u8"),
    ("fp32", "inf", "not a finite number"),
    ("fp32", "zero", "not a number"),
])
def test_fill_pattern_refusals(element, text, fragment):
    with pytest.raises(record.NoCEntry) as e:
        entry.fill_pattern(element, text, "fills['Y']")
    assert fragment in str(e.value) and "this launcher has no C entry" in str(e.value)
    assert "\n" not in str(e.value)


def test_deterministic(libs):
    assert render(OP, libs) == render(json.loads(json.dumps(OP)), libs)


@pytest.mark.parametrize("op, fragment", [
    (dict(OP, sort="x"), "unknown key 'sort'"),
    ({"args": ["x"], "steps": [OP, {"torch": "topk", "args": ["Y"]}], "returns": []},
     "step 1: unknown key 'torch'"),
    (dict(OP, args=["x", "flag: bool"]), "an argument of kind 'bool'"),
    (dict(OP, entry="algo"), "entry 'algo'"),
    (dict(OP, algo_choice=[["x.size(1) > 0", "first"]]), "algo_choice: ['x.size(1) > 0', 'first'] is not [condition, algo index]"),
    (dict(OP, fills={"Y": "1e39"}), "the op: fills['Y'] = '1e39' (beyond the largest bf16)"),
    (dict(OP, fills={"Y": "nan"}), "fills['Y'] = 'nan' (not a finite number)"),
])
def test_refuses_what_it_does_not_understand(op, fragment, libs):
    with pytest.raises(record.NoCEntry) as e:
        render(op, libs)
    message = str(e.value)
    assert fragment in message and "this launcher has no C entry" in message
    assert "\n" not in message


@pytest.mark.parametrize("op, fragment", [
    (dict(OP, bind=dict(OP["bind"], n="x.size(0) ** 2")), "the operator Pow is not part of the expression"),
    (dict(OP, bind=dict(OP["bind"], n="y.size(0)")), "'y' is not a tensor of the launcher"),
    (dict(OP, outputs={"Y": "x.size(0), x.size(1)"}, bind={"X": "x", "eps": "eps"}),
     "'n' (int32_t) of scale() is bound to nothing"),
])
def test_bad_records_are_one_line(op, fragment, libs):
    with pytest.raises(UserError) as e:
        render(op, libs)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_name_clash(libs):
    with pytest.raises(UserError, match="attribute 'function'"):
        render(OP, libs, name="scale_default")


def _read(tmp_path, desc):
    path = tmp_path / "other.library.json"
    path.write_text(json.dumps(desc))
    return {"scale": library.read_library(path)}


def _with_x_type(type_json):
    functions = [dict(f, params=[dict(p, type=type_json) if p["name"] == "X" else p
                                 for p in f["params"]]) for f in LIB["functions"]]
    return dict(LIB, functions=functions)


@pytest.mark.parametrize("desc, fragment", [
    (dict(LIB, backend="hip", variants=[dict(LIB["variants"][0], symbol="scale_a0_s0_gfx942",
                                             target={"backend": "hip", "arch": "gfx942",
                                                     "warp_size": 64})]),
     "kernel library scale is a hip library; C entries over DLPack tensors are CUDA only"),
    (_with_x_type({"kind": "tensordesc", "elem": "bf16", "block": [64, 64]}),
     "scale takes a tensor descriptor (X); C entries over tensor descriptors are not supported"),
    (_with_x_type({"kind": "pointer", "elem": "fp8e4nv", "const": False}),
     "scale: X has type '*fp8e4nv', which has no DLPack dtype"),
])
def test_refuses_libraries_it_cannot_call(desc, fragment, tmp_path):
    with pytest.raises(UserError) as e:
        render(OP, _read(tmp_path, desc))
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_const_pointer_is_its_element(tmp_path):
    const_x = _read(tmp_path, _with_x_type({"kind": "pointer", "elem": "bf16", "const": True}))
    plain_x = _read(tmp_path, LIB)
    assert render(OP, const_x) == render(OP, plain_x)
