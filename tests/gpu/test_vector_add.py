"""vector_add: the tutorial-style 01-vector-add.py (torch and driver queries at import), built
unchanged; out = x + y (fp32), aligned and misaligned, odd sizes, against torch."""
import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
VECTOR_ADD = ex.kernel("vector_add")


@pytest.mark.parametrize("n", [1, 17, 1024, 98432, (1 << 20) + 3])
@pytest.mark.parametrize("layout", ["aligned", "misaligned_x"])
def test_vector_add(n, layout):
    g = torch.Generator(device=DEV).manual_seed(n)
    x = torch.randn(n, device=DEV, generator=g)
    y = torch.randn(n, device=DEV, generator=g)
    out = torch.full((n,), float("nan"), device=DEV)
    if layout == "misaligned_x":
        x = ex.misaligned(torch, (n,), torch.float32, DEV, fill=x)  # -> the generic variant
    r = VECTOR_ADD(ex.stream(torch), ex.ptr(x), ex.ptr(y), ex.ptr(out), n, algo_id=0)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
