"""Kernels of ours in the shapes serving stacks launch them, each with the Python launcher that
runs it, as a kernel package ships them (tests/capture captures these launchers):

- `rms_scale`: a wrapper that picks BLOCK and num_warps from a table of row lengths, and the
  rows per program from the (dynamic) number of rows, as vLLM's and SGLang's wrappers do;
- `decode_attention`: a two-stage split-KV decode attention, one Python function that launches
  a partial kernel over (batch x heads, splits) and a reduction over (batch x heads).
"""

import torch
import triton
import triton.language as tl

# (largest row length, BLOCK, num_warps): the first row that fits is taken
_ROW_TABLE = ((1024, 1024, 4), (4096, 4096, 8), (16384, 16384, 16))


@triton.jit
def rms_scale_kernel(X, W, Y, n_rows, n_cols, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    for r in range(ROWS):
        row = tl.program_id(0) * ROWS + r
        if row < n_rows:
            x = tl.load(X + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
            rstd = 1.0 / tl.sqrt(tl.sum(x * x, 0) / n_cols + eps)
            tl.store(Y + row * n_cols + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_scale(x, w, eps):
    """y = x / rms(x) * w over the rows of a 2-D x."""
    n_rows, n_cols = x.shape
    block, warps = next((b, nw) for limit, b, nw in _ROW_TABLE if n_cols <= limit)
    rows = 1 if n_rows <= 1024 else 4  # many rows: fewer, longer programs
    y = torch.empty_like(x)
    rms_scale_kernel[(triton.cdiv(n_rows, rows),)](x, w, y, n_rows, n_cols, eps, ROWS=rows,
                                                     BLOCK=block, num_warps=warps)
    return y


NUM_SPLITS = 8


@triton.jit
def decode_partial_kernel(Q, K, V, Partial, Lse, seq_len, chunk, sm_scale, stride_kb,
                          stride_ks, stride_kh, H: tl.constexpr, NUM_SPLITS: tl.constexpr,
                          HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    bh = tl.program_id(0)
    split = tl.program_id(1)
    b = bh // H
    h = bh % H
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + bh * HEAD_DIM + d).to(tl.float32)
    start = split * chunk
    end = tl.minimum(start + chunk, seq_len)
    m = tl.max(tl.full([BLOCK_N], -float("inf"), tl.float32), 0)
    l = tl.sum(tl.zeros([BLOCK_N], tl.float32), 0)
    acc = tl.zeros([HEAD_DIM], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        n = n0 + tl.arange(0, BLOCK_N)
        keep = n < end
        at = b * stride_kb + n[:, None] * stride_ks + h * stride_kh + d[None, :]
        k = tl.load(K + at, mask=keep[:, None], other=0.0).to(tl.float32)
        s = tl.where(keep, tl.sum(k * q[None, :], 1) * sm_scale, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, 0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m - m_new)
        v = tl.load(V + at, mask=keep[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        l = l * alpha + tl.sum(p, 0)
        m = m_new
    at = bh * NUM_SPLITS + split
    tl.store(Partial + at * HEAD_DIM + d, acc / tl.maximum(l, 1e-30))
    tl.store(Lse + at, m + tl.log(l))


@triton.jit
def decode_reduce_kernel(Partial, Lse, Out, NUM_SPLITS: tl.constexpr, HEAD_DIM: tl.constexpr):
    bh = tl.program_id(0)
    s = tl.arange(0, NUM_SPLITS)
    lse = tl.load(Lse + bh * NUM_SPLITS + s)
    w = tl.exp(lse - tl.max(lse, 0))  # an empty split has lse -inf: weight 0
    d = tl.arange(0, HEAD_DIM)
    part = tl.load(Partial + (bh * NUM_SPLITS + s)[:, None] * HEAD_DIM + d[None, :])
    out = tl.sum(w[:, None] * part, 0) / tl.sum(w, 0)
    tl.store(Out + bh * HEAD_DIM + d, out.to(Out.dtype.element_ty))


def decode_attention(q, k_cache, v_cache, sm_scale):
    """One query token per sequence: q [batch, heads, head_dim] against k_cache, v_cache
    [batch, seq, heads, head_dim] (one layout for both) -> [batch, heads, head_dim]."""
    batch, heads, head_dim = q.shape
    seq = k_cache.shape[1]
    chunk = triton.cdiv(seq, NUM_SPLITS)
    partial = torch.empty(batch, heads, NUM_SPLITS, head_dim, dtype=torch.float32, device=q.device)
    lse = torch.empty(batch, heads, NUM_SPLITS, dtype=torch.float32, device=q.device)
    out = torch.empty_like(q)
    decode_partial_kernel[(batch * heads, NUM_SPLITS)](
        q, k_cache, v_cache, partial, lse, seq, chunk, sm_scale, k_cache.stride(0),
        k_cache.stride(1), k_cache.stride(2), H=heads, NUM_SPLITS=NUM_SPLITS, HEAD_DIM=head_dim,
        BLOCK_N=64, num_warps=4, num_stages=2)
    decode_reduce_kernel[(batch * heads,)](partial, lse, out, NUM_SPLITS=NUM_SPLITS,
                                           HEAD_DIM=head_dim, num_warps=2)
    return out
