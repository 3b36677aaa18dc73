"""scale: out = x * alpha with alpha an fp32 C float (upstream passes a double: garbage)."""
import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
SCALE = ex.kernel("scale")


@pytest.mark.parametrize("algo", range(SCALE.num_algos))
@pytest.mark.parametrize("n", [1, 15, 16, 17, 129, 1000, 4096, 100003])
@pytest.mark.parametrize("alpha", [0.5, -3.25, 0.1, 1e-30, 3.0e38])
def test_scale(algo, n, alpha):
    x = torch.randn(n, device=DEV)
    out = torch.full((n,), float("nan"), device=DEV)
    r = SCALE(ex.stream(torch), ex.ptr(x), ex.ptr(out), alpha, n, algo_id=algo)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    # The kernel multiplies in fp32 by alpha rounded to fp32: exactly what this does.
    want = x * torch.tensor(alpha, dtype=torch.float32, device=DEV)
    assert torch.equal(out, want)


@pytest.mark.parametrize("algo", range(SCALE.num_algos))
def test_scale_misaligned(algo):
    n = 1001
    x = ex.misaligned(torch, (n,), torch.float32, DEV, fill=torch.randn(n, device=DEV))
    out = ex.misaligned(torch, (n,), torch.float32, DEV, fill=torch.zeros(n, device=DEV))
    assert SCALE(ex.stream(torch), ex.ptr(x), ex.ptr(out), 2.5, n, algo_id=algo) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2.5)


def test_scale_empty_grid():
    sentinel = torch.full((16,), 3.0, device=DEV)
    assert SCALE(ex.stream(torch), ex.ptr(sentinel), ex.ptr(sentinel), 9.0, 0, algo_id=0) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.all(sentinel == 3.0)
