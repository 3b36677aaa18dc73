"""Each captured library's cubin is byte-identical to the explicitly declared one of the same
variant (algo, specialization): capture changes how a kernel is declared, never what it
compiles to.

Arguments: PAIR... where PAIR is CAPTURED_LIB:aI_sJ=EXPLICIT_LIB:aK_sL, then `--`, then every
cubin file (the libraries' `cubin` output groups).
"""

import sys
from pathlib import Path


def find(files, lib, variant):
    hits = [f for f in files if f"/_triton/{lib}/" in f and f.endswith(f"_{variant}_sm90.cubin")]
    if len(hits) != 1:
        sys.exit(f"FAIL: {len(hits)} cubins of {lib} {variant} among {len(files)} files")
    return Path(hits[0])


def main(argv):
    split = argv.index("--")
    pairs, files = argv[:split], argv[split + 1:]
    assert pairs, "no pairs"
    for pair in pairs:
        left, right = pair.split("=")
        captured, explicit = find(files, *left.split(":")), find(files, *right.split(":"))
        a, b = captured.read_bytes(), explicit.read_bytes()
        if a != b:
            sys.exit(f"FAIL: {captured.name} ({len(a)} bytes) differs from {explicit.name} "
                     f"({len(b)} bytes)")
        print(f"ok: {captured.name} == {explicit.name} ({len(a)} bytes)")


if __name__ == "__main__":
    main(sys.argv[1:])
