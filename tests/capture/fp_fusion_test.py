"""a * b + c compiled as its launcher compiles it: the captured library of a launch with
enable_fp_fusion=False and the one declared with triton_algo(enable_fp_fusion = False) have no
fma in any variant's PTX; the same kernel declared with Triton's default has one in each.

Arguments: the PTX files of the libraries unfused, unfused_explicit and fused_explicit.
"""

import sys
from pathlib import Path


def main(argv):
    by_lib = {}
    for f in argv:
        by_lib.setdefault(f.split("/_triton/")[1].split("/")[0], []).append(Path(f))
    assert sorted(by_lib) == ["fused_explicit", "unfused", "unfused_explicit"], sorted(by_lib)
    for lib, files in sorted(by_lib.items()):
        for f in files:
            text = f.read_text()
            fmas = text.count("fma.rn.f32")
            if (fmas > 0) != (lib == "fused_explicit"):
                sys.exit(f"FAIL: {f.name} has {fmas} fma.rn.f32")
            print(f"ok: {f.name}: {fmas} fma.rn.f32")


if __name__ == "__main__":
    main(sys.argv[1:])
