"""The JSON persistent worker (`python -m triton_aot.compile.compile --persistent_worker`)."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import triton_aot
from triton_aot.compile.worker import read_requests, run_captured

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
REPO = Path(triton_aot.__file__).resolve().parent.parent
OUTS = ["json", "cubin", "ptx"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([e["PYTHONPATH"]]
                                                     if e.get("PYTHONPATH") else []))
    return e


def add_args(out):
    return [f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
            "--signature=*fp32:16, *fp32:16, *fp32:16, i32, 512", "--grid=cdiv(n, 512)",
            "--num_warps=4", "--num_stages=3", "--target=cuda:80", "--symbol=add_sm80",
            *[f"--out_{n}={out}/add.{n}" for n in OUTS]]


def scale_args(out):
    return [f"--kernel_path={KERNELS / 'scale.py'}", "--kernel_name=scale_kernel",
            "--signature=*fp32:16, *fp32:16, fp32, i32, 256", "--grid=cdiv(n, 256)",
            "--num_warps=4", "--num_stages=2", "--target=cuda:90", "--symbol=scale_sm90",
            *[f"--out_{n}={out}/scale.{n}" for n in OUTS]]


def helper_args(out, with_import_path):
    return [f"--kernel_path={KERNELS / 'uses_helper.py'}", "--kernel_name=twice_kernel",
            "--signature=*fp32, *fp32, i32, 128", "--grid=cdiv(n, 128)", "--num_warps=4",
            "--num_stages=1", "--target=cuda:80", "--symbol=twice_sm80",
            f"--out_json={out}/twice.json"] + (
                [f"--import_path={KERNELS / 'helper_root'}"] if with_import_path else [])


def read_outputs(out, stem):
    return {n: (Path(out) / f"{stem}.{n}").read_bytes() for n in OUTS}


class Worker:

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "triton_aot.compile.compile", "--persistent_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        # drain stderr so the worker never blocks on a full pipe
        self.stderr = []
        self._t = threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True)
        self._t.start()

    def send_raw(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def response(self):
        line = self.proc.stdout.readline()
        assert line, b"".join(self.stderr).decode()
        return json.loads(line)

    def request(self, arguments, request_id=0):
        self.send_raw(json.dumps({"arguments": arguments, "requestId": request_id}) + "\n")
        return self.response()

    def close(self):
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait(timeout=60)
        self._t.join(timeout=10)
        return code, rest


@pytest.fixture(scope="module")
def one_shot(tmp_path_factory):
    out = tmp_path_factory.mktemp("oneshot")
    for args in (add_args(out), scale_args(out)):
        proc = subprocess.run([sys.executable, "-m", "triton_aot.compile.compile", *args],
                              capture_output=True, text=True, env=env())
        assert proc.returncode == 0, proc.stderr
    return {"add": read_outputs(out, "add"), "scale": read_outputs(out, "scale")}


def test_worker_matches_one_shot_and_isolates_requests(tmp_path, one_shot):
    w = Worker()
    try:
        a = tmp_path / "a"
        r = w.request(add_args(a))
        assert r == {"exitCode": 0, "output": "", "requestId": 0}
        assert read_outputs(a, "add") == one_shot["add"]

        # @paramfile request, written back-to-back with the next request and no newline
        # (older Bazel versions do not separate requests), multiplex-style request ids
        b = tmp_path / "b"
        paramfile = tmp_path / "scale.params"
        paramfile.write_text("\n".join(scale_args(b)) + "\n")
        err_req = {"arguments": ["--kernel_path=" + str(KERNELS / "add.py"),
                                 "--kernel_name=nope"], "requestId": 8}
        w.send_raw(json.dumps({"arguments": [f"@{paramfile}"], "requestId": 7})
                   + json.dumps(err_req, indent=1))
        r = w.response()
        assert r == {"exitCode": 0, "output": "", "requestId": 7}
        assert read_outputs(b, "scale") == one_shot["scale"]
        r = w.response()
        assert r["requestId"] == 8 and r["exitCode"] == 1
        assert r["output"].startswith("error: ") and "Traceback" not in r["output"]

        # a cancel request gets no response (nothing is ever in flight)
        w.send_raw(json.dumps({"requestId": 3, "cancel": True}) + "\n")

        # helper modules do not leak from one request into the next
        c = tmp_path / "c"
        r = w.request(helper_args(c, with_import_path=True), 9)
        assert r["exitCode"] == 0, r["output"]
        r = w.request(helper_args(c, with_import_path=False), 10)
        assert r["exitCode"] == 1 and "triton_aot_test_helpers" in r["output"], r["output"]

        # compile errors are reported with the kernel's file:line
        r = w.request([f"--kernel_path={KERNELS / 'compile_error.py'}",
                       "--kernel_name=not_pow2_kernel", "--signature=*fp32, i32", "--grid=1",
                       "--num_warps=4", "--num_stages=1", "--target=cuda:80", "--symbol=s",
                       f"--out_json={tmp_path}/e.json"], 11)
        assert r["exitCode"] == 1 and "compile_error.py:8:" in r["output"]

        # same request again: same bytes (no state carried over)
        a2 = tmp_path / "a2"
        r = w.request(add_args(a2), 12)
        assert r["exitCode"] == 0, r["output"]
        assert read_outputs(a2, "add") == one_shot["add"]
    finally:
        code, rest = w.close()
    assert code == 0
    assert rest == b""  # nothing but responses on stdout


def test_worker_flagfile_and_startup_args(tmp_path, one_shot):
    """Startup arguments before --persistent_worker apply to every request; --flagfile works."""
    flagfile = tmp_path / "add.flags"
    flagfile.write_text("# absl flagfile\n" + "\n".join(add_args(tmp_path)) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "triton_aot.compile.compile", "--verbose", "--persistent_worker"],
        input=json.dumps({"arguments": [f"--flagfile={flagfile}"], "requestId": 1}),
        capture_output=True, text=True, env=env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    (response,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert response == {"exitCode": 0, "output": "", "requestId": 1}
    assert read_outputs(tmp_path, "add") == one_shot["add"]


# ----------------------------------------------------------------------------- units


def _feed(text):
    r, w = os.pipe()
    os.write(w, text.encode())
    os.close(w)
    try:
        return list(read_requests(r))
    finally:
        os.close(r)


def test_read_requests_stream_forms():
    a = {"arguments": ["x"], "requestId": 1}
    b = {"arguments": ["y é"], "requestId": 2}
    assert _feed(json.dumps(a) + "\n" + json.dumps(b) + "\n") == [a, b]
    assert _feed(json.dumps(a) + json.dumps(b)) == [a, b]
    assert _feed(json.dumps(a, indent=2) + "\n\n" + json.dumps(b, indent=4)) == [a, b]
    assert _feed("") == []


def test_read_requests_skips_garbage(capfd):
    a = {"arguments": [], "requestId": 1}
    assert _feed("nonsense\n") == []
    assert _feed(json.dumps(a) + "\n[1]\n") == [a]
    assert "dropping" in capfd.readouterr().err


def test_run_captured_collects_fd_output(tmp_path):
    def handler(args):
        print("py-out")
        sys.stderr.write("py-err\n")
        os.write(1, b"fd1\n")
        os.write(2, b"fd2\n")
        assert os.getcwd() == str(tmp_path)
        return 3

    cwd = os.getcwd()
    code, output = run_captured(handler, [], str(tmp_path))
    assert code == 3
    assert os.getcwd() == cwd
    for text in ("py-out", "py-err", "fd1", "fd2"):
        assert text in output


def test_run_captured_survives_handler_crash():
    def handler(args):
        raise RuntimeError("boom")

    code, output = run_captured(handler, [], None)
    assert code == 1 and "boom" in output
