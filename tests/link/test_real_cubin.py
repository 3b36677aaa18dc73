"""A cubin really compiled by Triton (no GPU needed) goes through the link tool and the
C compiler, and reaches the (fake) driver byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

import harness
from harness import arg, constexpr, variant

pytest.importorskip("triton")

# Runs in a subprocess: keeps triton (and its cache) out of the test process.
COMPILE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend, compile
from scale_kernel import scale_kernel
target = GPUTarget("cuda", 90, 32)
backend = make_backend(target)
opts = backend.parse_options({"num_warps": 4, "num_stages": 3})
src = ASTSource(fn=scale_kernel, constexprs={"BLOCK": 256},
                signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32",
                           "BLOCK": "constexpr"},
                attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
k = compile(src, target=target, options=opts.__dict__)
open(sys.argv[2] + "/k.cubin", "wb").write(k.asm["cubin"])
open(sys.argv[2] + "/k.ptx", "w").write(k.asm["ptx"])
md = k.metadata
json.dump({"shared": md.shared, "name": md.name, "gs": md.global_scratch_size,
           "gsa": md.global_scratch_align, "ps": md.profile_scratch_size,
           "psa": md.profile_scratch_align}, open(sys.argv[2] + "/k.json", "w"))
"""


def _fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325  # FNV-1a 64 offset basis
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.fixture(scope="module")
def real_kernel(tmp_path_factory):
    out = tmp_path_factory.mktemp("triton")
    env = dict(os.environ, TRITON_CACHE_DIR=str(out / "cache"))
    p = subprocess.run([sys.executable, "-c", COMPILE, str(harness.HERE / "kernels"), str(out)],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        pytest.fail(f"triton.compile failed:\n{p.stderr[-3000:]}")
    return ((out / "k.cubin").read_bytes(), (out / "k.ptx").read_text(),
            json.loads((out / "k.json").read_text()))


def test_real_cubin_roundtrip(tmp_path, real_kernel, fake_dir):
    cubin, ptx, md = real_kernel
    meta = variant("scale_a0_sm90",
                   [arg("x_ptr", "*fp32", 16), arg("out_ptr", "*fp32", 16), arg("n", "i32"),
                    arg("alpha", "fp32"), constexpr("BLOCK", 256)],
                   kernel_name=md["name"], algo_index=0, shared=md["shared"],
                   global_scratch=(md["gs"], md["gsa"]), profile_scratch=(md["ps"], md["psa"]),
                   grid_c=("((int64_t)(n) + 255) / 256", "1", "1"), ptx_embedded=True)
    lib = harness.build(tmp_path / "lib", "scale", [meta],
                        images={"scale_a0_sm90": (cubin, ptx)})
    assert cubin[:4] == b"\x7fELF"
    exe = harness.compile_program(lib, "real.c", tmp_path / "real", fake_dir=fake_dir)
    harness.run_program(exe, [len(cubin), f"{_fnv1a64(cubin):x}"], fake_dir=fake_dir)
    # the PTX text is embedded verbatim too (the library names each image by its sha256)
    ptx_sha = hashlib.sha256(ptx.encode()).hexdigest()
    assert ".entry scale_kernel" in ptx and f"sha256 {ptx_sha}: scale_a0_sm90 (PTX)" in (
        tmp_path / "lib" / "scale.c").read_text()
