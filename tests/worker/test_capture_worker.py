"""The capture tool's persistent worker against one-shot capture processes.

A capture runs the user's launcher, and a launcher may keep state in its module between calls
(tuned_on_first_call.py launches with another BLOCK once it has run). So every capture request
runs in a fresh child of the warm worker process: two captures of one launcher through one worker
write the same bytes as each written by a process of its own, and those bytes say BLOCK=128 (the
first call's), as a fresh process's do.
"""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import triton_aot

HERE = Path(__file__).resolve().parent
REPO = Path(triton_aot.__file__).resolve().parent.parent
LAUNCHER = HERE / "tuned_on_first_call.py"
OUTS = ["out_record", "out_bzl", "out_build"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([e["PYTHONPATH"]]
                                                     if e.get("PYTHONPATH") else []))
    return e


def arguments(out: Path) -> list:
    out.mkdir(parents=True, exist_ok=True)
    return ["--target=//tests/worker:tuned_on_first_call", f"--launcher_path={LAUNCHER}",
            "--launcher=double", f"--src={LAUNCHER}", "--package=tests/worker",
            "--print_src=tuned_on_first_call.py", f"--import_path={HERE}",
            "--call=fp32(n)", '--sizes={"n": 4096}', "--gpu_target=cuda:90", "--name=double",
            "--targets=cuda:90", *[f"--{o}={out / o}" for o in OUTS]]


def written(out: Path) -> dict:
    return {o: (out / o).read_bytes() for o in OUTS}


def test_each_capture_through_the_worker_is_a_fresh_process(tmp_path):
    worker = subprocess.Popen([sys.executable, "-m", "triton_aot.capture.tool",
                               "--persistent_worker"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    stderr = []
    threading.Thread(target=lambda: stderr.extend(worker.stderr), daemon=True).start()
    try:
        for request_id, name in enumerate(["first", "second"], 1):
            worker.stdin.write((json.dumps({"arguments": arguments(tmp_path / name),
                                            "requestId": request_id}) + "\n").encode())
            worker.stdin.flush()
            line = worker.stdout.readline()
            assert line, b"".join(stderr).decode()
            response = json.loads(line)
            assert response["exitCode"] == 0, response["output"]
            assert response["requestId"] == request_id
    finally:
        worker.stdin.close()
        assert worker.wait(timeout=120) == 0
    proc = subprocess.run([sys.executable, "-m", "triton_aot.capture.tool",
                           *arguments(tmp_path / "one_shot")], capture_output=True, text=True,
                          env=env())
    assert proc.returncode == 0, proc.stderr
    one_shot = written(tmp_path / "one_shot")
    assert b'"BLOCK": 128' in one_shot["out_bzl"], one_shot["out_bzl"].decode()
    assert written(tmp_path / "first") == one_shot
    assert written(tmp_path / "second") == one_shot
