"""Kernels of the launch features' GPU checks: a row-wise kernel launched over n_rows (a launch
argument), a persistent kernel over min(NUM_SMS, tiles), and a kernel whose device-side tensor
descriptors need global scratch (the reusable per-stream buffer)."""
import triton
import triton.language as tl


@triton.jit
def rmsnorm_rows(x_ptr, w_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, x * tl.math.rsqrt(ms + eps) * w, mask=mask)


@triton.jit
def persistent_axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    tiles = tl.cdiv(n, BLOCK)
    for t in range(pid, tiles, nprog):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        y = tl.load(y_ptr + offs, mask=m)
        tl.store(out_ptr + offs, alpha * x + y, mask=m)


@triton.jit
def desc_scale(x_ptr, out_ptr, M, N, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    od = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    v = xd.load([pid_m * BM, pid_n * BN])
    od.store([pid_m * BM, pid_n * BN], v * alpha)
