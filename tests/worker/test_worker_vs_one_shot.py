"""The persistent worker against one-shot compile processes, request for request.

One worker (at most 2 children, so that the least recently used one retires and its key is
imported anew in a fresh child) serves compiles of kernel files with different keys, interleaved:
the test kernels, a kernel whose helper comes from another import root, a package's kernel with
relative imports, the kernel whose dep refuses a second import in one process (three variants
in one child), a serving-style kernel file that imports torch, one that asks torch.cuda about
the device at import (torch itself is imported once, by the warm worker), and two targets. Each output
(record, cubin, PTX) must be the same bytes as the same request run as a process of its own.
Then an edited kernel file: the worker compiles the new text, as a fresh process would.
"""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import triton_aot

HERE = Path(__file__).resolve().parent
REPO = Path(triton_aot.__file__).resolve().parent.parent
KERNELS = REPO / "tests" / "compile" / "kernels"
OUTS = ["json", "cubin", "ptx"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([e["PYTHONPATH"]]
                                                     if e.get("PYTHONPATH") else []))
    e["RULES_TRITON_WORKER_MAX_CHILDREN"] = "2"
    return e


def request(name, kernel, kernel_name, signature, grid, target, import_paths=(), warps=4):
    def args(out):
        return [f"--kernel_path={kernel}", f"--kernel_name={kernel_name}",
                f"--signature={signature}", f"--grid={grid}", f"--num_warps={warps}",
                "--num_stages=2", f"--target={target}", f"--symbol={name}",
                *[f"--import_path={p}" for p in import_paths],
                *[f"--out_{n}={out}/{name}.{n}" for n in OUTS]]
    return name, args


ONCE = HERE / "scale_once.py"
REQUESTS = [
    request("add80", KERNELS / "add.py", "add_kernel",
            "*fp32:16, *fp32:16, *fp32:16, i32, 512", "cdiv(n, 512)", "cuda:80"),
    request("once_a", ONCE, "scale_once_kernel", "*fp32:16, *fp32:16, i32:16, 128",
            "cdiv(n, 128)", "cuda:80", [HERE]),
    request("helper", KERNELS / "uses_helper.py", "twice_kernel", "*fp32, *fp32, i32, 128",
            "cdiv(n, 128)", "cuda:80", [KERNELS / "helper_root"]),
    request("once_b", ONCE, "scale_once_kernel", "*fp32, *fp32, i32, 256", "cdiv(n, 256)",
            "cuda:80", [HERE]),
    request("relative", KERNELS / "pkg_root" / "aot_test_pkg" / "relative_kernel.py",
            "relative_kernel", "*i32, i32, 64", "cdiv(n, 64)", "cuda:90", [KERNELS / "pkg_root"]),
    request("once_c", ONCE, "scale_once_kernel", "*fp32, *fp32, i32, 1024", "cdiv(n, 1024)",
            "cuda:80", [HERE], warps=8),
    request("serving", REPO / "tests" / "capture" / "serving_kernels.py", "rms_scale_kernel",
            "*fp16:16, *fp16:16, *fp16:16, i32, i32:16, fp32, 1, 1024", "n_rows", "cuda:90"),
    request("once_90", ONCE, "scale_once_kernel", "*fp32:16, *fp32:16, i32, 128",
            "cdiv(n, 128)", "cuda:90", [HERE]),
    # torch.cuda asked at import (capability, name, warp size) with torch already imported by
    # the warm worker: each target's answers, as in a process of its own
    request("torch_cuda_80", KERNELS / "torch_cuda_at_import.py", "k", "*fp32", "1", "cuda:80"),
    request("torch_cuda_90", KERNELS / "torch_cuda_at_import.py", "k", "*fp32", "1", "cuda:90"),
]
# add80 once more, after its child retired (least recently used): imported anew in a fresh child
AGAIN = REQUESTS[0]


def outputs(out, name):
    return {n: (Path(out) / f"{name}.{n}").read_bytes() for n in OUTS}


def one_shot(args):
    proc = subprocess.run([sys.executable, "-m", "triton_aot.compile.compile", *args],
                          capture_output=True, text=True, env=env())
    assert proc.returncode == 0, proc.stderr


class Worker:

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "triton_aot.compile.compile", "--persistent_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.next_id = 1

    def request(self, arguments):
        self.proc.stdin.write((json.dumps({"arguments": arguments, "requestId": self.next_id})
                               + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, b"".join(self.stderr).decode()
        self.next_id += 1
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=120) == 0


def test_worker_outputs_are_the_one_shot_outputs(tmp_path):
    w = Worker()
    try:
        for name, args in REQUESTS:
            r = w.request(args(tmp_path / "worker"))
            assert r["exitCode"] == 0 and r["output"] == "", (name, r["output"])
        r = w.request(AGAIN[1](tmp_path / "again"))
        assert r["exitCode"] == 0 and r["output"] == "", r["output"]
    finally:
        w.close()
    for name, args in REQUESTS:
        one_shot(args(tmp_path / "one_shot"))
    differing = [(name, n) for name, _ in REQUESTS
                 for n, data in outputs(tmp_path / "worker", name).items()
                 if data != outputs(tmp_path / "one_shot", name)[n]]
    differing += [("again", n) for n, data in outputs(tmp_path / "again", AGAIN[0]).items()
                  if data != outputs(tmp_path / "one_shot", AGAIN[0])[n]]
    assert not differing, f"the worker's outputs differ from one-shot: {differing}"


def test_an_edited_kernel_file_is_imported_anew(tmp_path):
    kernel = tmp_path / "k" / "edited.py"
    kernel.parent.mkdir()
    source = (KERNELS / "add.py").read_text()
    kernel.write_text(source)
    _, args = request("edited", kernel, "add_kernel", "*fp32:16, *fp32:16, *fp32:16, i32, 512",
                      "cdiv(n, 512)", "cuda:80")
    w = Worker()
    try:
        assert w.request(args(tmp_path / "before"))["exitCode"] == 0
        # the same key, another text: `x + y` becomes `x - y`
        assert "x + y" in source
        kernel.write_text(source.replace("x + y", "x - y"))
        r = w.request(args(tmp_path / "after"))
        assert r["exitCode"] == 0, r["output"]
    finally:
        w.close()
    one_shot(args(tmp_path / "one_shot"))
    assert outputs(tmp_path / "after", "edited") == outputs(tmp_path / "one_shot", "edited")
    assert outputs(tmp_path / "after", "edited")["cubin"] != \
        outputs(tmp_path / "before", "edited")["cubin"]
