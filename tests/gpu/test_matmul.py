"""matmul: C = A @ B (fp16 in, fp32 accumulate, fp16 out) for every algo and operand layout."""
import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
MATMUL = ex.kernel("matmul")
SHAPES = [  # M, N, K
    (1, 1, 1), (16, 16, 16), (64, 64, 64), (128, 256, 64), (512, 512, 512),
    (100, 37, 29), (257, 129, 300), (33, 65, 17), (1, 300, 70), (200, 1, 48), (64, 64, 1000),
]
LAYOUTS = [
    "contiguous",      # row-major, aligned: the most specialised variant when K % 16 == 0
    "a_transposed",    # A is a transposed view (stride_am = 1): pointers-only variant
    "b_transposed",
    "both_transposed",
    "misaligned_a",    # A starts one element into its allocation: the generic variant
    "misaligned_c",
    "c_strided",       # C is a column slice of a wider matrix
]


def _operands(m, n, k, layout, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    a = torch.randn(m, k, device=DEV, generator=g).half()
    b = torch.randn(k, n, device=DEV, generator=g).half()
    c = torch.full((m, n), float("nan"), device=DEV, dtype=torch.float16)
    if layout in ("a_transposed", "both_transposed"):
        a = a.t().contiguous().t()  # same values, column-major storage
    if layout in ("b_transposed", "both_transposed"):
        b = b.t().contiguous().t()
    if layout == "misaligned_a":
        a = ex.misaligned(torch, (m, k), torch.float16, DEV, fill=a)
    if layout == "misaligned_c":
        c = ex.misaligned(torch, (m, n), torch.float16, DEV, fill=c)
    if layout == "c_strided":
        c = torch.full((m, n + 40), float("nan"), device=DEV, dtype=torch.float16)[:, 8:n + 8]
    return a, b, c


def _matmul(a, b, c, algo):
    m, k = a.shape
    n = b.shape[1]
    return MATMUL(ex.stream(torch), ex.ptr(a), ex.ptr(b), ex.ptr(c), m, n, k,
                  a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                  algo_id=algo)


def _check(a, b, c):
    ref = a.double() @ b.double()
    # fp16 output: half an ulp is 2^-11 relative; products of fp16 values are exact in fp32.
    torch.testing.assert_close(c.double(), ref, atol=1e-2, rtol=2e-3)


@pytest.mark.parametrize("algo", range(MATMUL.num_algos))
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_matmul(algo, shape, layout):
    m, n, k = shape
    a, b, c = _operands(m, n, k, layout, seed=m * 1000003 + n * 1009 + k)
    assert _matmul(a, b, c, algo) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    _check(a, b, c)


@pytest.mark.parametrize("algo", range(MATMUL.num_algos))
def test_matmul_k_zero_writes_zeros(algo):
    a = torch.empty(40, 0, device=DEV, dtype=torch.float16)
    b = torch.empty(0, 24, device=DEV, dtype=torch.float16)
    c = torch.full((40, 24), float("nan"), device=DEV, dtype=torch.float16)
    assert MATMUL(ex.stream(torch), ex.ptr(c), ex.ptr(c), ex.ptr(c), 40, 24, 0, 0, 1, 24, 1, 24, 1,
                  algo_id=algo) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.all(c == 0)


@pytest.mark.parametrize("algo", range(MATMUL.num_algos))
@pytest.mark.parametrize("empty", ["M", "N"])
def test_matmul_empty_grid(algo, empty):
    c = torch.full((16, 16), 5.0, device=DEV, dtype=torch.float16)
    m, n = (0, 16) if empty == "M" else (16, 0)
    assert MATMUL(ex.stream(torch), ex.ptr(c), ex.ptr(c), ex.ptr(c), m, n, 16, 16, 1, 16, 1, 16, 1,
                  algo_id=algo) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.all(c == 5.0)


def test_matmul_default_is_algo_0():
    a, b, c = _operands(96, 80, 64, "contiguous", seed=5)
    assert MATMUL.default(ex.stream(torch), ex.ptr(a), ex.ptr(b), ex.ptr(c), 96, 80, 64,
                          64, 1, 80, 1, 80, 1) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    _check(a, b, c)


def test_matmul_algos_agree():
    """Every algo computes the same products exactly (fp32 sums of exact fp16 products of small
    integers are exact, whatever the tile order)."""
    g = torch.Generator(device=DEV).manual_seed(7)
    a = torch.randint(-8, 9, (300, 200), device=DEV, generator=g).half()
    b = torch.randint(-8, 9, (200, 100), device=DEV, generator=g).half()
    want = (a.double() @ b.double()).half()
    for algo in range(MATMUL.num_algos):
        c = torch.zeros(300, 100, device=DEV, dtype=torch.float16)
        assert _matmul(a, b, c, algo) == ex.CUDA_SUCCESS
        torch.cuda.synchronize()
        assert torch.equal(c, want), f"algo {algo}"
