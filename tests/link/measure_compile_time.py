"""Measures how long the C compiler takes on a generated variant embedding a large cubin.

Not a test (timings depend on the machine). Usage:

    python tests/link/measure_compile_time.py [--mb 1] [--opt -O2]

Prints the gcc time for the generated variant (string literal split over lines, the format
c_syntax uses), for a few line widths, and for an upstream-style `{0x12, 0x34, ...}` initializer
of the same bytes for comparison.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from triton_aot.core import c_syntax  # noqa: E402


def _time_compile(src: Path, opt: str, cplusplus: bool = False, strict: bool = True) -> float:
    compiler = harness.cxx() if cplusplus else harness.cc()
    flags = (harness.CXX_FLAGS if cplusplus else harness.C_FLAGS) if strict else []
    cmd = [compiler, *flags, opt, "-fPIC", f"-I{harness.cuda_include()}",
           f"-I{harness.RUNTIME_DIR}", "-c", str(src), "-o",
           str(src.with_suffix(".o"))]
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--opt", default="-O2")
    args = ap.parse_args()
    rng = random.Random(0)
    size = int(args.mb * 1024 * 1024)
    # Real cubins are ELF: lots of zero padding and text; mix random and zero runs.
    cubin = bytearray(b"\x7fELF")
    while len(cubin) < size:
        cubin += bytes(rng.getrandbits(8) for _ in range(256)) if rng.random() < 0.7 else bytes(256)
    cubin = bytes(cubin[:size])
    meta = harness.variant("big_sm90", [harness.arg("x", "*fp32", 16), harness.arg("n", "i32")],
                           kernel_name="big_kernel", grid_c=("(int64_t)(n)", "1", "1"))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        c_text, _ = harness.render_variant(meta, cubin, None)
        render = time.perf_counter() - t0
        src = tmp / "big_sm90.c"
        src.write_text(c_text)
        print(f"cubin {size} bytes; render_variant {render:.2f} s; .c {len(c_text)} bytes")
        print(f"generated variant ({c_syntax.BYTES_PER_LINE} B/line): gcc {args.opt} "
              f"{_time_compile(src, args.opt):.2f} s as C, "
              f"{_time_compile(src, args.opt, cplusplus=True):.2f} s as C++")
        for width in (16, 64, 256):
            lit = c_syntax.string_literal(cubin, bytes_per_line=width)
            alt = tmp / f"w{width}.c"
            alt.write_text(f"const char cubin_w[{size + 1}] = \n{lit};\n")
            print(f"  literal only, {width} B/line: {_time_compile(alt, args.opt, strict=False):.2f} s")
        brace = tmp / "brace.c"
        brace.write_text(f"const unsigned char cubin_b[{size}] = {{"
                         + ", ".join(f"0x{b:02x}" for b in cubin) + "};\n")
        print(f"  upstream-style brace initializer: {_time_compile(brace, args.opt, strict=False):.2f} s")


if __name__ == "__main__":
    main()
