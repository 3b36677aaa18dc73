"""Two triton_kernel_library targets with one c_name linked into one binary (reliability
catalogue case c_name_clash_in_one_binary): linked as cc_binary links them (each library is
`alwayslink`, so whole), the link fails, and the linker's message names the guard symbol, which
says the fix, and both libraries' archives (<package>/lib<target>.lo), which name the targets."""

import json
import os
import shlex
import subprocess
from pathlib import Path

GUARD = ("multiple definition of `rules_triton_c_name_clash_scale_is_the_c_name_of_two_"
         "triton_kernel_library_targets_in_this_link_give_one_another_c_name'")
TARGETS = ("//tests/link_clash/a:scale_a", "//tests/link_clash/b:scale_b")
FIX = "give_one_another_c_name"


def test_two_libraries_of_one_c_name_do_not_link(tmp_path):
    paths = os.environ["ARCHIVES"].split()
    manifest = json.loads(Path(next(p for p in paths if p.endswith(".json"))).read_text())
    archives = [p for p in paths if not p.endswith(".json")]
    assert len(archives) == 2, archives
    assert all(manifest.values()), f"not alwayslink: {manifest}"
    cc = shlex.split(os.environ["RULES_TRITON_CC"])
    link = [*cc, "-o", str(tmp_path / "app"), "main.c" if Path("main.c").exists() else
            str(Path(__file__).parent / "main.c")]
    # as cc_binary links alwayslink archives: whole
    link += ["-Wl,--whole-archive", *archives, "-Wl,--no-whole-archive", "-ldl", "-lpthread"]
    proc = subprocess.run(link, capture_output=True, text=True)
    assert proc.returncode != 0, "two libraries of one c_name linked"
    out = proc.stderr
    assert GUARD in out and FIX in out, out
    for target in TARGETS:
        package, name = target[2:].split(":")
        # the archives are bazel-out/.../<package>/lib<target>.lo, as in cc_binary's link
        assert f"{package}/lib{name}.lo(" in out, (target, out)
