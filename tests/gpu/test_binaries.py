"""The C and C++ programs built by Bazel (packed into .gpu/examples/bin): the example app, the API test
and the dlopen test of libexample_kernels.so, plus the exported-symbol check of the .so."""
import shutil
import subprocess

import pytest

import examples_lib as ex

BIN = ex.gpu_dir() / "bin"
SKIPPED = 77  # the app's "no driver / no GPU" exit code


def _run(args, timeout=300, echo=True):
    proc = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    if echo:
        print(proc.stdout)
    return proc


def _binary(name):
    path = BIN / name
    if not ex.gpu_dir().exists():
        pytest.skip(f"{ex.gpu_dir()} does not exist: run tools/gpu pack examples")
    if not path.exists():
        pytest.fail(f"{path} is missing: run tools/gpu pack examples")
    return path


def test_app():
    proc = _run([_binary("app")])
    if proc.returncode == SKIPPED:
        pytest.skip("app: no CUDA driver or GPU: " + proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert " 0 failed" in proc.stdout


def test_api_test():
    proc = _run([_binary("api_test")])
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "0 failed" in proc.stdout


def test_so_test():
    proc = _run([_binary("so_test"), ex.library_path()])
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_exported_symbols():
    _binary("so_test")  # skips when nothing was packed
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    proc = _run([nm, "-D", "--defined-only", ex.library_path()], echo=False)
    assert proc.returncode == 0, proc.stdout
    got = sorted(line.split()[-1] for line in proc.stdout.splitlines() if line.strip())
    want = sorted(s for k in ex.KERNELS for s in (k, k + "_default", "load_" + k, "unload_" + k,
                                                  k + "_get_num_algos", k + "_get_algo_info"))
    assert got == want, f"extra: {sorted(set(got) - set(want))}, missing: {sorted(set(want) - set(got))}"
    print(f"exported symbols: exactly the {len(want)} API symbols of {len(ex.KERNELS)} kernels")
