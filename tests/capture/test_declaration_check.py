"""The TritonDeclarationCheck action's script (rules/private/actions/declaration_check.sh), as
the action runs it, on the capture's in_place.launcher.bzl against the committed copy and a
stale one: a current copy writes the stamp and prints nothing; a stale one fails with exactly
its message, one line, and writes no stamp (so the validation fails the build).
declaration_check_tests (declaration_check_tests.bzl) shows that the action gets this message
and that the libraries, the torch ops and the C entries over a declaration carry it."""

import os
import subprocess

SCRIPT = os.environ["DECLARATION_CHECK"]
CAPTURED = os.environ["CAPTURED"]
COMMITTED = os.environ["COMMITTED"]
MESSAGE = ("error: //tests/capture:in_place: tests/capture/in_place.launcher.bzl is stale (the "
           "launcher, its kernels or the example calls changed); update it: tools/bazel build "
           "//tests/capture:in_place_declaration && cp "
           "bazel-bin/tests/capture/_capture/in_place.launcher.bzl tests/capture/")


def check(committed, stamp):
    return subprocess.run([SCRIPT, CAPTURED, committed, str(stamp), MESSAGE],
                          capture_output=True, text=True, check=False)


def test_current_declaration_passes(tmp_path):
    stamp = tmp_path / "in_place_declaration_check.ok"
    result = check(COMMITTED, stamp)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert stamp.read_bytes() == b""


def test_stale_declaration_fails_with_one_line(tmp_path):
    text = open(COMMITTED).read()
    assert '"BLOCK": 256' in text
    stale = tmp_path / "in_place.launcher.bzl"
    stale.write_text(text.replace('"BLOCK": 256', '"BLOCK": 128'))
    stamp = tmp_path / "in_place_declaration_check.ok"
    result = check(str(stale), stamp)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", MESSAGE + "\n")
    assert not stamp.exists()


def test_a_changed_trailing_newline_is_stale(tmp_path):
    stale = tmp_path / "in_place.launcher.bzl"
    stale.write_bytes(open(COMMITTED, "rb").read() + b"\n")
    result = check(str(stale), tmp_path / "stamp")
    assert (result.returncode, result.stderr) == (1, MESSAGE + "\n")
