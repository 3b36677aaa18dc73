"""The workspace arithmetic of a generated C entry, compiled and run: a two-launch record whose
intermediates are not multiples of 256 bytes (fp32[n + 3] and i8[n]), over stub kernel
libraries that record what they are called with. Each intermediate starts at a 256-byte aligned
offset, NAME_workspace_size() is their rounded sum, the second launch gets the first launch's
intermediates and sizes read off them, and too small a workspace launches nothing. With fills
(torch.full / torch.zeros), every filled tensor, scratch and output, is memset after the checks
and before the first launch, and a refused call writes nothing."""

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


def _compile_and_run(tmp_path: Path, op, stubs, main, flags=()):
    libs = {}
    for name, desc in LIBS.items():
        path = tmp_path / f"{name}.library.json"
        path.write_text(json.dumps(desc))
        libs[name] = library.read_library(path)
        (tmp_path / f"{name}.h").write_text(
            "#include <cuda.h>\n#include <stdint.h>\n" +
            {"first": "CUresult first_default(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, int32_t);\n",
             "second": "CUresult second_default(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, int32_t);\n"}[name])
    e = entry.build("two_c", op, libs, {"first": "first.h", "second": "second.h"})
    source, header = entry.render("two_c", "//pkg:two_c", e)
    (tmp_path / "two_c.c").write_text(source)
    (tmp_path / "two_c.h").write_text(header)
    (tmp_path / "stubs.c").write_text(stubs)
    (tmp_path / "main.c").write_text(main)
    cc = os.environ["RULES_TRITON_CC"]
    includes = [f"-I{tmp_path}",
                f"-I{Path(os.environ['RULES_TRITON_CUDA_INCLUDE']).resolve().parent}",
                f"-I{Path(os.environ['RULES_TRITON_DLPACK_HEADER']).resolve().parent.parent}"]
    exe = tmp_path / "two"
    subprocess.run([cc, "-std=gnu11", "-Wall", "-Werror", *includes, *flags,
                    str(tmp_path / "two_c.c"), str(tmp_path / "stubs.c"), str(tmp_path / "main.c"),
                    "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True)


def test_workspace_carving(tmp_path: Path):
    out = _compile_and_run(tmp_path, OP, STUBS, MAIN)
    assert out.returncode == 0 and out.stdout == "ok\n", out.stdout + out.stderr


# The same two launches with the tensors the launcher made with torch.full / torch.zeros: T (fp32
# scratch) 1.5, U (i8 scratch) 1, Y (the returned output) 0. The driver table is a stub whose
# memsets are logged with the launches, in one order.
FILLS_OP = {**OP, "steps": [dict(OP["steps"][0], fills={"T": "1.5", "U": "1.0"}),
                            dict(OP["steps"][1], fills={"Y": "0.0"})]}

FILL_STUBS = r"""
#include <string.h>
#include "trt_runtime.h"
typedef struct { char kind; CUdeviceptr ptr; unsigned value; size_t count; } event;
event ev[64];
int nev, lookups;
static CUresult log_set(char kind, CUdeviceptr p, unsigned v, size_t n) {
  event e = {kind, p, v, n};
  ev[nev++] = e;
  return CUDA_SUCCESS;
}
static CUresult d8(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { (void)s; return log_set('1', p, v, n); }
static CUresult d16(CUdeviceptr p, unsigned short v, size_t n, CUstream s) { (void)s; return log_set('2', p, v, n); }
static CUresult d32(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { (void)s; return log_set('4', p, v, n); }
CUresult trt_driver_get(const trt_driver **out) {
  static trt_driver d;
  d.memset_d8_async = d8; d.memset_d16_async = d16; d.memset_d32_async = d32;
  ++lookups;
  *out = &d;
  return CUDA_SUCCESS;
}
CUresult first_default(CUstream s, CUdeviceptr X, CUdeviceptr T, CUdeviceptr U, int32_t n) {
  (void)s; (void)T; (void)U; (void)n; return log_set('L', X, 0, 0);
}
CUresult second_default(CUstream s, CUdeviceptr T, CUdeviceptr U, CUdeviceptr Y, int32_t m) {
  (void)s; (void)U; (void)Y; (void)m; return log_set('L', T, 0, 0);
}
"""

FILL_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "two_c.h"
typedef struct { char kind; CUdeviceptr ptr; unsigned value; size_t count; } event;
extern event ev[64];
extern int nev, lookups;
#define CHECK(c) do { if (!(c)) { printf("CHECK failed line %d: %s\n", __LINE__, #c); return 1; } } while (0)
#define EV(i, k, p, v, n) CHECK(ev[i].kind == k && ev[i].ptr == (p) && ev[i].value == (v) && ev[i].count == (n))
static DLTensor t(int64_t *shape, uintptr_t at) {
  DLTensor d;
  memset(&d, 0, sizeof d);
  d.data = (void *)at; d.device.device_type = kDLCUDA; d.ndim = 1;
  d.dtype.code = kDLFloat; d.dtype.bits = 32; d.dtype.lanes = 1; d.shape = shape;
  return d;
}
int main(void) {
  const uintptr_t ws = 0x10000;
  int64_t n = 5, zero = 0;
  DLTensor x = t(&n, 0x1000), y = t(&n, 0x2000);
  size_t bytes = 0;
  CHECK(two_c_workspace_size(&x, &bytes) == CUDA_SUCCESS && bytes == 512);
  /* refused (too small a workspace; a misaligned output): nothing filled, nothing launched */
  CHECK(two_c(NULL, &x, &y, (void *)ws, bytes - 1) == CUDA_ERROR_INVALID_VALUE);
  y.data = (void *)0x2002;
  CHECK(two_c(NULL, &x, &y, (void *)ws, bytes) == CUDA_ERROR_INVALID_VALUE);
  CHECK(nev == 0 && lookups == 0);
  y.data = (void *)0x2000;
  CHECK(two_c(NULL, &x, &y, (void *)ws, bytes) == CUDA_SUCCESS);
  CHECK(nev == 5);
  EV(0, '4', ws, 0x3fc00000u, 8);         /* T: fp32[n + 3] = 1.5 */
  EV(1, '1', ws + 256, 0x01u, 5);         /* U: i8[n] = 1, 5 bytes: byte by byte */
  EV(2, '4', 0x2000, 0u, 5);              /* Y: fp32[n] = 0 */
  EV(3, 'L', 0x1000, 0u, 0);              /* then the launches */
  EV(4, 'L', ws, 0u, 0);
  /* n = 0: T still has 3 elements; the empty U and Y are not memset */
  nev = 0;
  x = t(&zero, 0x1000), y = t(&zero, 0x2000);
  CHECK(two_c_workspace_size(&x, &bytes) == CUDA_SUCCESS && bytes == 256);
  CHECK(two_c(NULL, &x, &y, (void *)ws, bytes) == CUDA_SUCCESS);
  CHECK(nev == 3);
  EV(0, '4', ws, 0x3fc00000u, 3);
  CHECK(ev[1].kind == 'L' && ev[2].kind == 'L');
  printf("ok\n");
  return 0;
}
"""


def test_fills_are_memset_before_the_launches(tmp_path: Path):
    # the runtime's headers (trt_runtime.h declares the driver table the entry's memsets use)
    runtime = next((Path(p).resolve().parent for p in os.environ.get(
        "RULES_TRITON_RUNTIME_SRCS", "").split() if p.endswith("/trt_runtime.h")),
        Path(__file__).resolve().parents[2] / "runtime")
    out = _compile_and_run(tmp_path, FILLS_OP, FILL_STUBS, FILL_MAIN, [f"-I{runtime}"])
    assert out.returncode == 0 and out.stdout == "ok\n", out.stdout + out.stderr
