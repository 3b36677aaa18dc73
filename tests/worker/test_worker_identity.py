"""The library whose dep refuses a second import in one process, built with the persistent
worker (the command line's setting) and with it off: every record, image, C file and header
is there, 4 algos x 2 specializations x 2 targets, and the same bytes both ways.

$LIBRARY and $VARIANTS name another library and its number of variants (the one whose kernel
file would take a constexpr from a module that no target declares)."""

import os
from pathlib import Path

LIBRARY = os.environ.get("LIBRARY", "scale_once")
VARIANTS = int(os.environ.get("VARIANTS", 4 * 2 * 2))


def outputs(variable):
    files = {}
    for path in os.environ[variable].split():
        name = Path(path).name
        assert name not in files, f"two outputs named {name}"
        files[name] = Path(path).read_bytes()
    return files


def test_every_variant_is_built_both_ways_and_the_same():
    default, off = outputs("WORKER_DEFAULT"), outputs("WORKER_OFF")
    records = sorted(n for n in default if n.endswith(".json"))
    assert len(records) == VARIANTS, records
    assert len([n for n in default if n.endswith(".cubin")]) == VARIANTS
    assert {f"{LIBRARY}.c", f"{LIBRARY}.h"} <= set(default)
    assert sorted(default) == sorted(off)
    differing = [n for n in sorted(default) if default[n] != off[n]]
    assert not differing, f"differ between worker on and off: {differing}"
