"""softmax: row softmax (fp32), one program per row; algo k handles rows up to its BLOCK."""
import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
SOFTMAX = ex.kernel("softmax")
BLOCKS = [SOFTMAX.algo_constexprs(a)["BLOCK"] for a in range(SOFTMAX.num_algos)]
SHAPES = [(1, 1), (3, 17), (128, 1000), (64, 1024), (7, 1025), (5, 4096), (3, 5000), (2, 16384),
          (1000, 32)]
CASES = [(shape, algo) for shape in SHAPES for algo in range(SOFTMAX.num_algos)
         if BLOCKS[algo] >= shape[1]]


def _run(x, out, algo):
    rows, cols = x.shape
    r = SOFTMAX(ex.stream(torch), ex.ptr(out), ex.ptr(x), x.stride(0), out.stride(0), rows, cols,
                algo_id=algo)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()


@pytest.mark.parametrize("shape,algo", CASES, ids=[f"{s[0]}x{s[1]}-algo{a}" for s, a in CASES])
@pytest.mark.parametrize("layout", ["contiguous", "strided_rows", "offset_strided", "misaligned"])
def test_softmax(shape, algo, layout):
    rows, cols = shape
    x = torch.randn(rows, cols, device=DEV) * 5
    if layout == "strided_rows":  # columns of a wider matrix: aligned rows, stride % 16 == 0
        width = (cols + 15) // 16 * 16 + 16
        x = (torch.randn(rows, width, device=DEV) * 5)[:, :cols]
        out = torch.full((rows, width), float("nan"), device=DEV)[:, :cols]
    elif layout == "offset_strided":  # starts 3 elements in, odd row strides
        x = (torch.randn(rows, cols + 13, device=DEV) * 5)[:, 3:cols + 3]
        out = torch.full((rows, cols + 7), float("nan"), device=DEV)[:, 1:cols + 1]
    elif layout == "misaligned":
        x = ex.misaligned(torch, (rows, cols), torch.float32, DEV, fill=x)
        out = ex.misaligned(torch, (rows, cols), torch.float32, DEV, fill=torch.zeros(rows, cols, device=DEV))
    else:
        out = torch.full((rows, cols), float("nan"), device=DEV)
    _run(x, out, algo)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1), atol=1e-6, rtol=1e-5)


def test_softmax_no_rows():
    sentinel = torch.full((4, 4), 1.0, device=DEV)
    r = SOFTMAX(ex.stream(torch), ex.ptr(sentinel), ex.ptr(sentinel), 4, 4, 0, 4, algo_id=0)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.all(sentinel == 1.0)
