"""big_smem: a 128 x 128 fp32 tile transposed through 64 KiB of shared memory.

More than the 48 KiB a kernel gets by default: the library must opt in
(cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)) at load, or the launch fails. Built for
sm_90 only (Triton's arch-specific sm_90a): other GPUs get CUDA_ERROR_NO_BINARY_FOR_GPU.
"""
import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
BIG = ex.kernel("big_smem")
SM = torch.cuda.get_device_capability(DEV)
ON_SM90 = SM == (9, 0)


def test_big_smem_needs_more_than_48k():
    meta = ex.metadata("big_smem")
    if not meta:
        pytest.skip("no metadata packed (tools/gpu pack examples copies it to .gpu/examples/metadata)")
    for m in meta:
        assert m["shared"] > 49152, f"{m['symbol']}: shared {m['shared']} is not above 48 KiB"


def test_big_smem_load():
    want = ex.CUDA_SUCCESS if ON_SM90 else ex.CUDA_ERROR_NO_BINARY_FOR_GPU
    assert BIG.load() == want
    assert BIG.load() == want  # idempotent


@pytest.mark.skipif(not ON_SM90, reason=f"big_smem is built for sm_90 only; this GPU is sm_{SM[0]}{SM[1]}")
@pytest.mark.parametrize("shape", [(1, 1), (128, 128), (129, 257), (256, 384), (1000, 77), (2048, 2048)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("layout", ["contiguous", "misaligned", "strided"])
def test_big_smem_transpose(shape, layout):
    m, n = shape
    x = torch.randn(m, n, device=DEV)
    out = torch.full((n, m), float("nan"), device=DEV)
    if layout == "misaligned":
        x = ex.misaligned(torch, (m, n), torch.float32, DEV, fill=x)
        out = ex.misaligned(torch, (n, m), torch.float32, DEV, fill=out)
    elif layout == "strided":
        x = torch.randn(m, n + 32, device=DEV)[:, :n]
        out = torch.full((n, m + 16), float("nan"), device=DEV)[:, :m]
    r = BIG(ex.stream(torch), ex.ptr(x), ex.ptr(out), m, n, x.stride(0), out.stride(0), algo_id=0)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.equal(out, x.t())


@pytest.mark.skipif(not ON_SM90, reason="big_smem is built for sm_90 only")
def test_big_smem_empty_grid():
    sentinel = torch.full((4,), 2.0, device=DEV)
    r = BIG(ex.stream(torch), ex.ptr(sentinel), ex.ptr(sentinel), 0, 100, 100, 100, algo_id=0)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    assert torch.all(sentinel == 2.0)
