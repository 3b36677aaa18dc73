"""The C API common to every kernel: algo queries, algo_id checks, load/unload, contexts,
threads. Tests are parametrised by kernel name."""
import threading

import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
SM = torch.cuda.get_device_capability(DEV)


def _runs_here(name):
    # big_smem and the TMA examples are built for cuda:90 only
    return name not in ("big_smem", "attention_tma", "matmul_tma") or SM == (9, 0)


def _dummy_args(name, n):
    """Arguments for a launch over n elements with null pointers (only used with n == 0 or an
    invalid algo_id, where nothing is launched)."""
    return {
        "add": (0, 0, 0, n),
        "scale": (0, 0, 1.0, n),
        "softmax": (0, 0, n, n, n, n),
        "matmul": (0, 0, 0, n, n, n, n, 1, n, 1, n, 1),
        "big_smem": (0, 0, n, n, n, n),
        "scalars": (0, False, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0),
        # descriptors of n x n tensors; the grid is empty when n == 0 (nothing is encoded)
        "attention_tma": (0, n, 64, 64, 1) * 4 + (0.125, n, n, n),
        "matmul_tma": (0, n, n, n, 1) * 3 + (n, n, n),
    }[name]


@pytest.mark.parametrize("name", ex.KERNELS)
def test_algo_info(name):
    k = ex.kernel(name)
    want = ex.EXPECTED_ALGO_INFO[name]
    assert k.num_algos == len(want)
    assert [k.algo_info(i) for i in range(k.num_algos)] == want
    assert k.algo_info(-1) is None
    assert k.algo_info(k.num_algos) is None


@pytest.mark.parametrize("name", ex.KERNELS)
@pytest.mark.parametrize("bad", ["minus_one", "num_algos", "huge"])
def test_invalid_algo_id(name, bad):
    k = ex.kernel(name)
    algo = {"minus_one": -1, "num_algos": k.num_algos, "huge": 2**31 - 1}[bad]
    r = k(ex.stream(torch), *_dummy_args(name, 256), algo_id=algo)
    assert r == ex.CUDA_ERROR_INVALID_VALUE


@pytest.mark.parametrize("name", [n for n in ex.KERNELS if n != "scalars"])
def test_empty_grid_every_algo(name):
    k = ex.kernel(name)
    want = ex.CUDA_SUCCESS if _runs_here(name) else ex.CUDA_ERROR_NO_BINARY_FOR_GPU
    for algo in range(k.num_algos):
        assert k(ex.stream(torch), *_dummy_args(name, 0), algo_id=algo) == want, f"algo {algo}"
    assert k.default(ex.stream(torch), *_dummy_args(name, 0)) == want
    torch.cuda.synchronize()


@pytest.mark.parametrize("name", ex.KERNELS)
def test_load_unload(name):
    k = ex.kernel(name)
    want = ex.CUDA_SUCCESS if _runs_here(name) else ex.CUDA_ERROR_NO_BINARY_FOR_GPU
    assert k.load() == want
    assert k.load() == want
    assert k.unload() == ex.CUDA_SUCCESS
    assert k.unload() == ex.CUDA_SUCCESS  # no-op when not loaded
    assert k.load() == want  # loads again after an unload


def test_add_works_after_unload():
    add = ex.kernel("add")
    assert add.unload() == ex.CUDA_SUCCESS
    x = torch.arange(1000, device=DEV, dtype=torch.float32)
    out = torch.zeros_like(x)
    assert add(ex.stream(torch), ex.ptr(x), ex.ptr(x), ex.ptr(out), 1000, algo_id=1) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.equal(out, 2 * x)


@pytest.mark.parametrize("name", ex.KERNELS)
def test_no_current_context_in_a_new_thread(name):
    """A thread that never touched CUDA has no current context: CUDA_ERROR_INVALID_CONTEXT."""
    k = ex.kernel(name)
    result = {}

    def body():
        result["load"] = k.load()
        result["launch"] = k(None, *_dummy_args(name, 16), algo_id=0)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert result == {"load": ex.CUDA_ERROR_INVALID_CONTEXT, "launch": ex.CUDA_ERROR_INVALID_CONTEXT}


def test_threads_first_call_race():
    """32 threads launch `scale` at once right after an unload: one load, all results right."""
    scale = ex.kernel("scale")
    assert scale.unload() == ex.CUDA_SUCCESS
    n = 4096
    x = torch.randn(n, device=DEV)
    outs = [torch.zeros(n, device=DEV) for _ in range(32)]
    torch.cuda.synchronize()
    barrier = threading.Barrier(32)
    results = [None] * 32

    def body(i):
        ex.make_context_current(torch, DEV)
        barrier.wait()
        results[i] = scale(None, ex.ptr(x), ex.ptr(outs[i]), float(i), n, algo_id=i % scale.num_algos)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert results == [ex.CUDA_SUCCESS] * 32
    for i, out in enumerate(outs):
        assert torch.equal(out, x * float(i)), f"thread {i}"
