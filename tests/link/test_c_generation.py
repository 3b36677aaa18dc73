"""C generation: template rendering (triton_aot.emit_c.c_render), C escaping (c_syntax), standalone
variant rendering (c_variant) and the record validation it relies on (variant)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest

import harness
from harness import arg, constexpr, variant
from triton_aot.core import c_syntax
from triton_aot.core.c_syntax import CCode
from triton_aot.core.errors import UserError
from triton_aot.emit_c import c_render


# ---- template rendering (string.Template over checked values) -----------------------------

def _templates(tmp_path, text):
    (tmp_path / "t.tmpl").write_text(text)
    return c_render.Templates(tmp_path)


def test_template_substitution(tmp_path):
    out = _templates(tmp_path, "a=${a} $$x ${b}!").render("t.tmpl", a=1, b=CCode("q"))
    assert out == "a=1 $x q!"


@pytest.mark.parametrize("text,err", [
    ("${missing}", "no value for ${missing}"),
    ("${ bad }", "malformed placeholder"),
])
def test_template_errors(tmp_path, text, err):
    with pytest.raises(UserError, match=re.escape(err)):
        _templates(tmp_path, text).render("t.tmpl")


def test_template_values_are_not_reinterpreted(tmp_path):
    # A value containing placeholder syntax is inserted verbatim, never rendered again.
    assert _templates(tmp_path, "${a}").render("t.tmpl", a=CCode("${b}")) == "${b}"


def test_template_refuses_unchecked_text(tmp_path):
    # Only c_syntax's checked/escaped text (CCode) and ints reach the C: metadata cannot inject.
    with pytest.raises(TypeError, match="unchecked str"):
        _templates(tmp_path, "${a}").render("t.tmpl", a="x */ evil();")


def test_template_dir_override(tmp_path, monkeypatch):
    for f in c_render.template_dir().iterdir():
        shutil.copy(f, tmp_path / f.name)
    h = tmp_path / "variant.h.tmpl"
    h.write_text("/* OVERRIDDEN */\n" + h.read_text())
    monkeypatch.setenv(c_render.TEMPLATE_DIR_ENV, str(tmp_path))
    meta = variant("v_sm90", [arg("x", "*fp32")])
    _, h_text = harness.render_variant(meta, b"\x7fELF", None)
    assert h_text.startswith("/* OVERRIDDEN */")
    monkeypatch.delenv(c_render.TEMPLATE_DIR_ENV)
    _, h_text = harness.render_variant(meta, b"\x7fELF", None, template_dir=tmp_path)
    assert h_text.startswith("/* OVERRIDDEN */")


# ---- C string literals ----------------------------------------------------------------------

ROUNDTRIP_C = r"""
#include <stdio.h>
#include "data.inc"
int main(void) {
  fwrite(data, 1, sizeof data - 1, stdout);
  return 0;
}
"""


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_string_literal_roundtrip(tmp_path, cplusplus):
    rng = random.Random(1)
    data = (bytes(range(256)) + b"??=??/??'\"\\\x00" + b"1" + b"\\0012" + b"\x001\x7f8?" +
            bytes(rng.getrandbits(8) for _ in range(10000)))
    (tmp_path / "data.inc").write_text(
        f"static const char data[{len(data) + 1}] =\n{c_syntax.string_literal(data)};\n")
    (tmp_path / "main.c").write_text(ROUNDTRIP_C)
    compiler = harness.cxx() if cplusplus else harness.cc()
    flags = harness.CXX_FLAGS if cplusplus else harness.C_FLAGS
    exe = tmp_path / "rt"
    harness.run([compiler, *flags, "-Wno-overlength-strings", "-trigraphs", tmp_path / "main.c",
                 "-o", exe])
    assert subprocess.run([str(exe)], capture_output=True, check=True).stdout == data


def test_string_literal_lines_are_bounded():
    lit = c_syntax.string_literal(bytes(range(256)) * 10)
    assert max(len(line) for line in lit.splitlines()) <= 4 + 2 + 4 * c_syntax.BYTES_PER_LINE
    assert c_syntax.string_literal(b"") == '    ""'


# ---- variants -------------------------------------------------------------------------------

def _meta(**kw):
    args = kw.pop("args", None) or [arg("x_ptr", "*fp16", 16), arg("n", "i32", 16),
                                    arg("s", "i32", 1), arg("alpha", "fp32"),
                                    constexpr("BLOCK", 128)]
    return variant("mk_a0_sm90", args, kernel_name="mk", **kw)


def test_render_variant_is_deterministic():
    meta = _meta(grid_c=("((int64_t)(n) + 127) / 128", "1", "1"))
    first = harness.render_variant(meta, b"\x7fELF" + bytes(range(256)) * 50, "// ptx")
    again = harness.render_variant(dict(meta), b"\x7fELF" + bytes(range(256)) * 50, "// ptx")
    assert first == again


def test_variant_header_prototypes():
    c_text, h_text = harness.render_variant(_meta(), b"\x7fELF", None)
    # :1 arguments are dropped from the variant launcher; fp32 is a float, never a double
    assert ("CUresult mk_a0_sm90(CUstream stream, CUdeviceptr x_ptr, int32_t n, float alpha);"
            in h_text)
    assert "double" not in h_text
    assert '__attribute__((visibility("hidden"))) CUresult load_mk_a0_sm90(void);' in h_text
    assert 'extern "C"' in h_text and "#ifndef RULES_TRITON_VARIANT_MK_A0_SM90_H_" in h_text
    assert ("void *trt_params[5] = {&x_ptr, &n, &alpha, &trt_scratch[0], &trt_scratch[1]};"
            in c_text)
    # the dispatcher's entry is internal to the library whatever the export setting
    assert ('__attribute__((visibility("hidden"))) CUresult trt_dispatch_mk_a0_sm90('
            in c_text)
    assert "trt_dispatch_" not in h_text
    for bad in ("exit(", "abort(", "printf(", "assert("):
        assert bad not in c_text


def test_variant_export_symbols():
    _, h_text = harness.render_variant(_meta() | {"export_symbols": True}, b"\x7fELF", None)
    assert "visibility" not in h_text


def test_variant_no_absolute_paths():
    meta = _meta() | {"kernel_file": "/home/someone/src/kernels/mk.py"}
    c_text, h_text = harness.render_variant(meta, b"\x7fELF", None)
    assert "/home/someone" not in c_text + h_text and "mk.py" in h_text


def test_variant_with_argument_named_stream_compiles(tmp_path):
    meta = variant("st_sm90", [arg("stream", "i64"), arg("p", "*fp32")], kernel_name="st",
                   grid_c=("(int64_t)(stream)", "1", "1"))
    c_text, h_text = harness.render_variant(meta, b"\x7fELF", None)
    assert "CUresult st_sm90(CUstream trt_stream, int64_t stream, CUdeviceptr p);" in h_text
    (tmp_path / "st.c").write_text(c_text)
    harness.run([harness.cc(), *harness.C_FLAGS, f"-I{harness.cuda_include()}",
                 f"-I{harness.RUNTIME_DIR}", "-c", tmp_path / "st.c", "-o", tmp_path / "st.o"])


@pytest.mark.parametrize("change,err", [
    (dict(args=[{"name": "x", "type": {"kind": "scalar", "name": "fp32"}, "hint": 16,
                 "ctype": "float"}]),
     "hint 16 is not valid for type fp32"),
    (dict(args=[{"name": "p", "type": {"kind": "pointer", "elem": "fp32", "const": False},
                 "hint": 1, "ctype": "CUdeviceptr"}]), "hint 1 is not valid"),
    (dict(args=[{"name": "x", "type": {"kind": "scalar", "name": "fp32"}, "hint": None,
                 "ctype": "double"}]), "does not match the ABI type 'float'"),
    (dict(args=[arg("a b", "i32")]), "not a valid C identifier"),
    (dict(args=[{"name": "x", "type": {"kind": "scalar", "name": "bf8"}, "hint": None}]),
     "scalar type 'bf8' is not a Triton scalar type"),
    (dict(args=[{"name": "x", "type": "*fp32", "hint": None}]),
     "type '*fp32' is not an object of one of the kinds"),
    (dict(args=[{"name": "d", "type": {"kind": "tensordesc", "elem": "fp16", "block": [48]},
                 "tma": {"data_type": 6, "elem_size": 2, "swizzle": 0, "box": [48]}}]),
     "the block is not 1 to 5 powers of two"),
    (dict(grid_c=("1; system(\"x\")", "1", "1")), "not a plain C expression"),
    (dict(grid_c=("1 /* */", "1", "1")), "not a plain C expression"),
    (dict(grid_c=("n = 0", "1", "1")), "not a plain C expression"),
    (dict(grid_c=("n++", "1", "1")), "not a plain C expression"),
    (dict(grid_c=("n += 1", "1", "1")), "not a plain C expression"),
    (dict(grid_c=("1", "1")), "3 C expressions"),
    (dict(symbol="9bad"), "symbol '9bad' is not a valid C identifier"),
    (dict(format="other"), "metadata format"),
    (dict(ptx_embedded=True), "no PTX text"),
    (dict(num_warps=0), "num_warps"),
    (dict(target={"backend": "hip", "arch": 90, "warp_size": 64}), "not an AMD gfx name"),
    (dict(target={"backend": "rocm", "arch": "gfx942", "warp_size": 64}), "(cuda or hip)"),
])
def test_variant_validation(change, err):
    meta = _meta()
    args = change.pop("args", None)
    if args is not None:
        meta["args"] = args
    meta.update(change)
    with pytest.raises(UserError, match=re.escape(err)):
        harness.render_variant(meta, b"\x7fELF", None)


def test_constexpr_names_are_not_c_identifiers():
    # constexprs never become C names (only comments and info strings), so any name is fine
    meta = _meta(args=[arg("x", "*fp32"), constexpr("default", 1)])
    meta["args"][1]["value_repr"] = "1 */ evil"  # constexpr spellings are derived from args
    c_text, h_text = harness.render_variant(meta, b"\x7fELF", None)
    assert "1 * / evil" in h_text and "*/ evil" not in h_text


HEADERS_C = """
#include "%s"
%s
int main(void) { return 0; }
"""


@pytest.mark.parametrize("cplusplus", [False, True], ids=["c", "cxx"])
def test_headers_compile_standalone(add_lib, tmp_path, cplusplus):
    """Every generated header compiles on its own (and together) in C and C++."""
    headers = sorted(p.name for p in add_lib.dir.glob("*.h"))
    src = tmp_path / "h.c"
    src.write_text(HEADERS_C % (headers[0], "\n".join(f'#include "{h}"' for h in headers * 2)))
    compiler = harness.cxx() if cplusplus else harness.cc()
    flags = harness.CXX_FLAGS if cplusplus else harness.C_FLAGS
    harness.run([compiler, *flags, f"-I{harness.cuda_include()}", f"-I{add_lib.dir}", "-c",
                 src, "-o", tmp_path / "h.o"])
