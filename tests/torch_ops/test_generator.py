"""The torch-op generator on its own (no Bazel-built op): its refusals, one line each naming the
op and the attribute, and the modules it writes for every accepted declaration, which compile.
"""

import pytest

from triton_aot.contract import library, op_record
from triton_aot.core.errors import UserError
from triton_aot.torch import torch_ops as gen


# --- the generator's own refusals (no Bazel): each names the op and what to write ------------

def _write_library(tmp_path, params, specializations=((("x_ptr", 16), ("out_ptr", 16)),)):
    """A library description of `k` (NAME and NAME_default) whose parameters after the stream are
    `params`: (C name, C type, kernel parameter, signature type)."""
    stream = library.Param("stream", "CUstream", None, None)
    args = tuple(library.Param(*p) for p in params)
    description = library.Library(
        name="k", header="k.h", backend="cuda",
        functions=(library.Function("k", "algo", (stream, *args,
                                                   library.Param("algo_id", "int", None, None))),
                   library.Function("k_default", "default", (stream, *args))),
        algos=(library.Algo(0, "BLOCK=128 num_warps=4 num_stages=3", "0" * 16),),
        specializations=specializations,
        variants=(library.Variant("k_a0_s0_sm90", 0, 0, "cuda:90"),),
        tuning=None)
    (tmp_path / "k.library.json").write_text(description.to_json())
    return {"description": str(tmp_path / "k.library.json"), "include": "k.h"}


def build_op(name, spec, lib):
    """The generator over one hand-written op's record, as triton_torch_op writes it."""
    return gen.build_op(name, op_record.read(dict(spec, lib="//k:k"), f"op {name!r}").launches[0],
                        lib)


def _lib(tmp_path):
    return _write_library(tmp_path, [("x_ptr", "CUdeviceptr", "x_ptr", "*fp32"),
                                     ("out_ptr", "CUdeviceptr", "out_ptr", "*fp32"),
                                     ("n", "int32_t", "n", "i32")])


@pytest.mark.parametrize("spec,message", [
    ({"args": ["x"], "outputs": {"out_ptr": "x.shape"}},
     "op 'o': parameter 'n' (int32_t) of k_default() is bound to nothing: add bind = {\"n\": "
     "\"EXPRESSION\"} (e.g. \"x.size(0)\") or an argument 'n'"),
    ({"args": ["x"], "outputs": {"out_ptr": "x.shape", "n": "x.shape"}},
     "op 'o': outputs: 'n' is a scalar parameter (int32_t) of k_default(), not a pointer; outputs "
     "names the pointer parameters the op allocates and returns: remove 'n' from outputs and "
     "give its value with bind = {\"n\": \"EXPRESSION\"} or an argument 'n'"),
    ({"args": ["x"], "bind": {"n": "x.numel()"}},
     "op 'o': pointer parameter 'out_ptr' of k_default() is bound to no tensor: add bind = "
     "{\"out_ptr\": \"TENSOR\"} or outputs = {\"out_ptr\": \"SHAPE\"}"),
    ({"args": ["x"], "outputs": {"out_ptr": "x.shape"}, "bind": {"n": "y.numel()"}},
     "op 'o': bind['n']: 'y.numel()': 'y' is not a tensor argument of the op"),
    ({"args": ["x"], "outputs": {"out_ptr": "x.shape"}, "bind": {"n": "x.size(0) ** 2"}},
     "op 'o': bind['n']: 'x.size(0) ** 2': BinOp is not part of the expression language"),
    ({"args": ["x"], "outputs": {"out_ptr": "x.shape"}, "bind": {"m": "1"}},
     "op 'o': bind: 'm' is not a parameter of k_default() (x_ptr, out_ptr, n)"),
    ({"args": ["x"], "outputs": {"out_ptr": "x.shape"}, "bind": {"n": "1"}, "entry": "auto"},
     "op 'o': entry: k has no k_auto() (entry = 'auto'); it has k, k_default"),
    ({"args": ["x: complex"]},
     "op 'o': attribute 'args': 'x: complex': type 'complex' is not one of Tensor, int, static "
     "int, float, bool"),
    ({"args": ["x", "alpha: float = 1.0", "n: int"]},
     "op 'o': attribute 'args': 'n' has no default but follows 'alpha', which has one: put the "
     "arguments with defaults last"),
    ({"args": ["x", "eps: static float"]},
     "op 'o': attribute 'args': 'eps: static float': only an int can be static (a float is never "
     "symbolic)"),
    ({"args": ["x", "lambda: float"]},
     "op 'o': attribute 'args': 'lambda' is reserved (Python keywords, 'torch', 'out', 'self' and "
     "names starting with '_'): rename the argument"),
    ({"args": ["torch"]},
     "op 'o': attribute 'args': 'torch' is reserved (Python keywords, 'torch', 'out', 'self' and "
     "names starting with '_'): rename the argument"),
    ({"args": ["x", "_n: int"]},
     "op 'o': attribute 'args': '_n' is reserved (Python keywords, 'torch', 'out', 'self' and "
     "names starting with '_'): rename the argument"),
    ({"args": ["x", "eps: float = 1e400"]},
     "op 'o': attribute 'args': 'eps: float = 1e400': the default must be a finite float"),
    ({"args": ["x", "n: int = 9223372036854775808"]},
     "op 'o': attribute 'args': 'n: int = 9223372036854775808': the default does not fit an int64"),
    ({"args": ["x", "algo_id: int"], "entry": "algo"},
     "op 'o': attribute 'args': 'algo_id' is added by entry = 'algo': rename the argument"),
])
def test_generator_refusals(tmp_path, spec, message):
    with pytest.raises(UserError) as info:
        build_op("o", spec, _lib(tmp_path))
    assert info.value.message == message


@pytest.mark.parametrize("x_type,message", [
    ("tensordesc<fp32[64, 64]>",
     "op 'o': k takes a tensor descriptor (x_ptr); torch ops over tensordesc parameters are not "
     "supported yet"),
    ("*kfp32", "op 'o': x_ptr has type '*kfp32', which has no torch dtype"),
    ("*fp8e4b15", "op 'o': x_ptr has type '*fp8e4b15', which has no torch dtype"),
])
def test_generator_refuses_parameter_types(tmp_path, x_type, message):
    lib = _write_library(tmp_path, [("x_ptr", "CUdeviceptr", "x_ptr", x_type),
                                    ("out_ptr", "CUdeviceptr", "out_ptr", "*fp32"),
                                    ("n", "int32_t", "n", "i32")])
    with pytest.raises(UserError) as info:
        build_op("o", {"args": ["x"], "outputs": {"out_ptr": "x.shape"},
                           "bind": {"n": "x.numel()"}}, lib)
    assert info.value.message == message


def test_generator_hint_check_rendered(tmp_path):
    op = build_op("o", {"args": ["x"], "outputs": {"out_ptr": "x.shape"},
                            "bind": {"n": "x.numel()"}}, _lib(tmp_path))
    cc = gen.render_cc("ns", "//:t", [op])
    assert "argument 'x' must be 16-byte aligned (every variant of k assumes x_ptr:16)" in cc
    assert 'STABLE_TORCH_LIBRARY(ns, m)' in cc and 'm.def("o(Tensor x) -> Tensor");' in cc
    assert "k_default(stream," in cc
    py = gen.render_py("ns", "//:t", "libt.so", [op])
    assert '@torch.library.register_fake("ns::o")' in py


# --- every accepted declaration renders Python that compiles ---------------------------------

def _plan(tmp_path, spec):
    return {"namespace": "ns", "label": "//:t", "so_name": "libt.so",
            "ops": [{"name": "o", "spec": dict(spec, lib="//k:k"), "lib": _lib(tmp_path)}]}


@pytest.mark.parametrize("args,entry,schema,fake", [
    (["x", "n: int"], "default",
     "o(Tensor x, SymInt n) -> Tensor", "def _fake_o(x, n):"),
    (["x", "n: static int"], "default",
     "o(Tensor x, int n) -> Tensor", "def _fake_o(x, n):"),
    (["x", "n: int", "alpha: float = 1.0", "flag: bool = True", "m: int = -3"], "default",
     "o(Tensor x, SymInt n, float alpha=1.0, bool flag=True, SymInt m=-3) -> Tensor",
     "def _fake_o(x, n, alpha=1.0, flag=True, m=-3):"),
    (["x", "n: int"], "algo",
     "o(Tensor x, SymInt n, int algo_id) -> Tensor", "def _fake_o(x, n, algo_id):"),
    (["x", "n: int", "alpha: float = 1"], "algo",
     "o(Tensor x, SymInt n, int algo_id, float alpha=1.0) -> Tensor",
     "def _fake_o(x, n, algo_id, alpha=1.0):"),
    (["x", "n: int = 4"], "algo",
     "o(Tensor x, int algo_id, SymInt n=4) -> Tensor", "def _fake_o(x, algo_id, n=4):"),
])
def test_generated_module_compiles(tmp_path, args, entry, schema, fake):
    spec = {"args": args, "entry": entry, "bind": {"n": "n"},
            "outputs": {"out_ptr": "cdiv(n, 2), min(n, x.numel()), max(n, 1)"}}
    cc, py = gen.generate(_plan(tmp_path, spec))  # compiles the Python or raises
    compile(py, "t.py", "exec")
    assert f'm.def("{schema}");' in cc
    assert fake in py
    # the expression helpers keep symbolic sizes symbolic
    assert "(_cdiv(n, 2), _min(n, x.numel()), _max(n, 1))" in py


def test_generator_refuses_a_module_that_does_not_compile(tmp_path, monkeypatch):
    from triton_aot.torch import fake
    monkeypatch.setattr(fake, "py_fake", lambda ns, op: "def _fake_o(x, alpha=1.0, algo_id):\n")
    spec = {"args": ["x"], "entry": "default", "bind": {"n": "x.numel()"},
            "outputs": {"out_ptr": "x.shape"}}
    with pytest.raises(RuntimeError) as info:
        gen.generate(_plan(tmp_path, spec))
    message = str(info.value)  # the SyntaxError's wording varies with Python's version
    assert message.startswith("the generated t.py does not compile (a bug of the generator): "
                              "line "), message
    assert message.endswith(": def _fake_o(x, alpha=1.0, algo_id):"), message


def test_fills_fill_outputs_before_the_call(tmp_path):
    # an output the launcher made with torch.zeros: filled on torch's stream before the kernel
    spec = {"args": ["x"], "entry": "default", "bind": {"n": "x.numel()"},
            "outputs": {"out_ptr": "x.shape"}, "fills": {"out_ptr": "0.0"}}
    cc, _ = gen.generate(_plan(tmp_path, spec))
    op = cc[cc.index("static Tensor op_o("):]
    fill = op.index("torch::stable::fill_(o_out_ptr, 0.0);")
    assert op.index("Tensor o_out_ptr = torch::stable::new_empty(") < fill < op.index("trt_check_launch(")
    for fills, problem in (({"x": "0"}, "'x' is not an output"), ({"out_ptr": "inf"}, "not a finite")):
        with pytest.raises(UserError, match=problem):
            gen.generate(_plan(tmp_path, dict(spec, fills=fills)))


def test_fake_checks_keep_sizes_symbolic(tmp_path):
    # `and`, `or`, `not` and chained comparisons as helpers (no bool() of a symbolic size);
    # a number as a condition means != 0, as in the C++
    spec = {"args": ["x", "n: int"], "entry": "default", "bind": {"n": "n"},
            "outputs": {"out_ptr": "x.shape"},
            "checks": ["0 <= n <= x.numel()", "not x.numel() or n > 0 and x.dim() == 1",
                       "x.numel() % 16"]}
    cc, py = gen.generate(_plan(tmp_path, spec))
    assert "    _check('o', _and(0 <= n, n <= x.numel()), '0 <= n <= x.numel()')\n" in py
    assert ("    _check('o', _or(_not(x.numel() != 0), _and(n > 0, x.dim() == 1)), "
            "'not x.numel() or n > 0 and x.dim() == 1')\n") in py
    assert "    _check('o', x.numel() % 16 != 0, 'x.numel() % 16')\n" in py
    assert "if (!trt_mod(t_x.numel(), INT64_C(16))) trt_fail(kOp" in cc


def test_op_binds_parameters_by_their_kernel_names(tmp_path):
    """A parameter C cannot use as it is (CU_SEQLENS) is trt_CU_SEQLENS in the header; the op's
    declaration still names it as the kernel does."""
    lib = _write_library(tmp_path, [("x_ptr", "CUdeviceptr", "x_ptr", "*fp32"),
                                    ("trt_CU_SEQLENS", "CUdeviceptr", "CU_SEQLENS", "*i32"),
                                    ("trt_int", "int32_t", "int", "i32")],
                         ((("x_ptr", 16), ("CU_SEQLENS", 16)),))
    op = build_op("o", {"args": ["x", "seqlens"],
                            "bind": {"x_ptr": "x", "CU_SEQLENS": "seqlens", "int": "x.numel()"}},
                      lib)
    assert [b.param.name for b in op.bindings] == ["x_ptr", "CU_SEQLENS", "int"]
    gen.render_cc("ns", "//k:ops", [op])
    gen.check_python(gen.render_py("ns", "//k:ops", "libops.so", [op]), "libops.so")


def test_library_description_of_another_format(tmp_path):
    """The generator reads a library only through its description; anything else is one line."""
    (tmp_path / "k.library.json").write_text('{"format": "rules_triton.variant.v2"}')
    with pytest.raises(UserError) as info:
        build_op("o", {"args": ["x"]}, {"description": str(tmp_path / "k.library.json"),
                                            "include": "k.h"})
    assert info.value.message == (
        f"{tmp_path / 'k.library.json'}: format 'rules_triton.variant.v2' is not "
        "'rules_triton.library.v2': not a library description of this rules_triton (rebuild "
        "the library)")


# --- composites: a captured launcher's torch work around one primitive op per launch ----------

_PRIMITIVE = {"args": ["X", "Y"], "bind": {"x_ptr": "X", "out_ptr": "Y", "n": "X.numel()"},
              "mutates": ["Y"]}


def _composite_plan(tmp_path, graph, result, args=("x", "scale: float")):
    spec = {"args": list(args), "checks": ["x.dim() == 1"],
            "composite": {"dtypes": {"x": "float32"}, "graph": graph, "result": result,
                          "launches": [dict(_PRIMITIVE, lib="k")]}}
    return {"namespace": "ns", "label": "//:t", "so_name": "libt.so",
            "ops": [{"name": "o", "spec": spec, "launches": [{"spec": _PRIMITIVE,
                                                             "lib": _lib(tmp_path)}]}]}


_GRAPH = [
    {"call": "aten.empty_like.default", "args": [{"input": "x"}], "kwargs": {}},
    {"launch": "k", "args": [{"input": "x"}, {"node": 0}], "floats": []},
    {"call": "aten.mul.Tensor", "args": [{"node": 0}, {"float": "scale"}], "kwargs": {}},
    {"call": "aten.zeros.default", "args": [[{"size": "x.size(0) * 2"}, 3]],
     "kwargs": {"dtype": {"dtype": "int32"}, "device": {"device": "input"}}},
    {"constant": [[1.0, {"scalar": "-inf"}]], "dtype": "float32"},
]


def test_composite_is_defined_in_cc_and_implemented_in_python(tmp_path):
    cc, py = gen.generate(_composite_plan(tmp_path, _GRAPH, [{"node": 2}, {"node": 3},
                                                             {"node": 4}]))
    # the composite's schema is defined with its primitive op's; only the primitive has kernels
    assert 'm.def("o(Tensor x, float scale) -> (Tensor, Tensor, Tensor)");' in cc
    assert 'm.def("o__0(Tensor X, Tensor(a!) Y) -> ()");' in cc
    assert 'm.impl("o__0", TORCH_BOX(&op_o__0));' in cc and 'm.impl("o",' not in cc
    # the replay: aten calls over the inputs' sizes, device and floats, the primitive op, and
    # constants made with aten ops (a host tensor could not be lifted by torch.compile)
    for line in ("_v0 = torch.ops.aten.empty_like.default(x)",
                 "torch.ops.ns.o__0(x, _v0)  # k",
                 "_v2 = torch.ops.aten.mul.Tensor(_v0, scale)",
                 "_v3 = torch.ops.aten.zeros.default([x.size(0) * 2, 3], dtype=torch.int32, "
                 "device=_device)",
                 "torch.ops.aten.scalar_tensor.default(float('-inf'), dtype=torch.float32, "
                 "device=_device)",
                 "return (_v2, _v3, _v4,)",
                 '@torch.library.register_fake("ns::o__0")',
                 'library.impl(name, fn, "CompositeImplicitAutograd")'):
        assert line in py, line
    assert "torch._check(x.dim() == 1" in py


@pytest.mark.parametrize("graph,result,message", [
    ([{"call": "os.system", "args": ["true"], "kwargs": {}}], None, "'os.system' is no aten op"),
    ([{"call": "aten.mul.Tensor", "args": [{"input": "y"}, 2], "kwargs": {}}], None,
     "the reference {'input': 'y'} names nothing the op has"),
    ([{"launch": "k", "args": [{"input": "x"}], "floats": []}], None,
     "launch 0 passes 1 arguments to o__0, which takes 2"),
    ([{"call": "aten.neg.default", "args": [{"size": "y.size(0)"}], "kwargs": {}}], None,
     "'y' is not a tensor argument of the op"),
])
def test_composite_refusals(tmp_path, graph, result, message):
    with pytest.raises(UserError) as e:
        gen.generate(_composite_plan(tmp_path, graph, result))
    assert message in e.value.message and "\n" not in e.value.message, e.value.message
