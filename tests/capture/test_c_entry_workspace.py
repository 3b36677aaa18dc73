"""The workspace arithmetic of a generated C entry, compiled and run: a two-launch record whose
intermediates are not multiples of 256 bytes (fp32[n + 3] and i8[n]), over stub kernel
libraries that record what they are called with. Each intermediate starts at a 256-byte aligned
offset, NAME_workspace_size() is their rounded sum, the second launch gets the first launch's
intermediates and sizes read off them, and too small a workspace launches nothing."""

import json
import os
import subprocess
from pathlib import Path

from triton_aot.c_entry import entry
from triton_aot.contract import library
from triton_aot.core.signature import parse_type


def _param(name, c_type, type_):
    # the description's JSON form of the type (core/arg_type.py's to_json)
    return {"name": name, "c_type": c_type, "kernel_param": name,
            "type": parse_type(type_, name).to_json()}


STREAM = {"name": "stream", "c_type": "CUstream", "kernel_param": None, "type": None}


def _lib(name, params):
    return {
        "format": library.FORMAT, "name": name, "header": f"{name}.h", "backend": "cuda",
        "functions": [{"name": f"{name}_default", "entry": "default",
                       "params": [STREAM] + params}],
        "algos": [{"index": 0, "info": "", "fingerprint": "0"}],
        "specializations": [[]],
        "variants": [{"symbol": f"{name}_a0_s0_sm90", "algo": 0, "specialization": 0,
                      "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}],
        "tuning": None,
    }


LIBS = {
    "first": _lib("first", [_param("X", "CUdeviceptr", "*fp32"), _param("T", "CUdeviceptr", "*fp32"),
                            _param("U", "CUdeviceptr", "*i8"), _param("n", "int32_t", "i32")]),
    "second": _lib("second", [_param("T", "CUdeviceptr", "*fp32"), _param("U", "CUdeviceptr", "*i8"),
                              _param("Y", "CUdeviceptr", "*fp32"), _param("m", "int32_t", "i32")]),
}

OP = {
    "args": ["x"],
    "steps": [
        {"lib": "first", "args": ["x"], "bind": {"X": "x", "n": "x.size(0)"},
         "checks": ["x.dim() == 1"], "contiguous": ["x"],
         "outputs": {"T": "x.size(0) + 3", "U": "x.size(0)"}},
        {"lib": "second", "args": ["T", "U"], "bind": {"T": "T", "U": "U", "m": "T.size(0)"},
         "checks": [], "contiguous": ["T", "U"], "outputs": {"Y": "U.size(0)"}},
    ],
    "returns": [[1, "Y"]],
}

STUBS = r"""
#include <cuda.h>
#include <stdint.h>
CUdeviceptr got[2][3];
int32_t got_n[2];
int calls;
CUresult first_default(CUstream s, CUdeviceptr X, CUdeviceptr T, CUdeviceptr U, int32_t n) {
  (void)s; got[0][0] = X; got[0][1] = T; got[0][2] = U; got_n[0] = n; ++calls; return CUDA_SUCCESS;
}
CUresult second_default(CUstream s, CUdeviceptr T, CUdeviceptr U, CUdeviceptr Y, int32_t m) {
  (void)s; got[1][0] = T; got[1][1] = U; got[1][2] = Y; got_n[1] = m; ++calls; return CUDA_SUCCESS;
}
"""

MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "two_c.h"
extern CUdeviceptr got[2][3];
extern int32_t got_n[2];
extern int calls;
#define CHECK(c) do { if (!(c)) { printf("CHECK failed line %d: %s\n", __LINE__, #c); return 1; } } while (0)
static DLTensor t(int64_t *shape, uintptr_t at) {
  DLTensor d;
  memset(&d, 0, sizeof d);
  d.data = (void *)at; d.device.device_type = kDLCUDA; d.ndim = 1;
  d.dtype.code = kDLFloat; d.dtype.bits = 32; d.dtype.lanes = 1; d.shape = shape;
  return d;
}
int main(void) {
  const uintptr_t ws = 0x10000;
  int64_t sizes[2] = {5, 64}, want[2] = {512, 768}, u_at[2] = {256, 512};
  int i;
  for (i = 0; i < 2; ++i) {
    int64_t n = sizes[i];
    DLTensor x = t(&n, 0x1000), y = t(&n, 0x2000);
    size_t bytes = 0;
    CHECK(two_c_workspace_size(&x, &bytes) == CUDA_SUCCESS);
    CHECK(bytes == (size_t)want[i]);
    CHECK(two_c(NULL, &x, &y, (void *)ws, bytes - 1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(calls == 2 * i);
    CHECK(two_c(NULL, &x, &y, (void *)ws, bytes) == CUDA_SUCCESS);
    CHECK(calls == 2 * i + 2);
    CHECK(got[0][0] == 0x1000 && got[0][1] == ws && got[0][2] == ws + (uint64_t)u_at[i]);
    CHECK(got[1][0] == ws && got[1][1] == ws + (uint64_t)u_at[i] && got[1][2] == 0x2000);
    CHECK(got_n[0] == n && got_n[1] == n + 3);
  }
  printf("ok\n");
  return 0;
}
"""


def test_workspace_carving(tmp_path: Path):
    libs = {}
    for name, desc in LIBS.items():
        path = tmp_path / f"{name}.library.json"
        path.write_text(json.dumps(desc))
        libs[name] = library.read_library(path)
        (tmp_path / f"{name}.h").write_text(
            "#include <cuda.h>\n#include <stdint.h>\n" +
            {"first": "CUresult first_default(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, int32_t);\n",
             "second": "CUresult second_default(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, int32_t);\n"}[name])
    e = entry.build("two_c", OP, libs, {"first": "first.h", "second": "second.h"})
    source, header = entry.render("two_c", "//pkg:two_c", e)
    (tmp_path / "two_c.c").write_text(source)
    (tmp_path / "two_c.h").write_text(header)
    (tmp_path / "stubs.c").write_text(STUBS)
    (tmp_path / "main.c").write_text(MAIN)
    cc = os.environ["RULES_TRITON_CC"]
    includes = [f"-I{tmp_path}",
                f"-I{Path(os.environ['RULES_TRITON_CUDA_INCLUDE']).resolve().parent}",
                f"-I{Path(os.environ['RULES_TRITON_DLPACK_HEADER']).resolve().parent.parent}"]
    exe = tmp_path / "two"
    subprocess.run([cc, "-std=gnu11", "-Wall", "-Werror", *includes, str(tmp_path / "two_c.c"),
                    str(tmp_path / "stubs.c"), str(tmp_path / "main.c"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == "ok\n", out.stdout + out.stderr
