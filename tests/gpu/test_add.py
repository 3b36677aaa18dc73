"""add: out = x + y (fp32), every algo, aligned and misaligned pointers, odd sizes."""
import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
ADD = ex.kernel("add")
SIZES = [1, 7, 15, 16, 17, 255, 1000, 1024, 4097, (1 << 20) + 3]


@pytest.mark.parametrize("algo", range(ADD.num_algos))
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("layout", ["aligned", "misaligned_x", "misaligned_out"])
def test_add(algo, n, layout):
    g = torch.Generator(device=DEV).manual_seed(n)
    x = torch.randn(n, device=DEV, generator=g)
    y = torch.randn(n, device=DEV, generator=g)
    out = torch.full((n,), float("nan"), device=DEV)
    if layout == "misaligned_x":
        x = ex.misaligned(torch, (n,), torch.float32, DEV, fill=x)  # -> the generic variant
    if layout == "misaligned_out":
        out = ex.misaligned(torch, (n,), torch.float32, DEV, fill=out)
    r = ADD(ex.stream(torch), ex.ptr(x), ex.ptr(y), ex.ptr(out), n, algo_id=algo)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_add_default_is_algo_0():
    n = 3000
    x = torch.randn(n, device=DEV)
    y = torch.randn(n, device=DEV)
    out = torch.zeros(n, device=DEV)
    assert ADD.default(ex.stream(torch), ex.ptr(x), ex.ptr(y), ex.ptr(out), n) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


@pytest.mark.parametrize("algo", range(ADD.num_algos))
def test_add_empty_grid(algo):
    """n = 0: the grid is empty; CUDA_SUCCESS and nothing is written."""
    sentinel = torch.full((64,), 7.0, device=DEV)
    r = ADD(ex.stream(torch), ex.ptr(sentinel), ex.ptr(sentinel), ex.ptr(sentinel), 0, algo_id=algo)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.all(sentinel == 7.0)


def test_add_on_a_side_stream():
    n = 1 << 16
    s = torch.cuda.Stream()
    x = torch.randn(n, device=DEV)
    y = torch.randn(n, device=DEV)
    out = torch.zeros(n, device=DEV)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        assert ADD(s.cuda_stream, ex.ptr(x), ex.ptr(y), ex.ptr(out), n, algo_id=0) == ex.CUDA_SUCCESS
    s.synchronize()
    assert torch.equal(out, x + y)
