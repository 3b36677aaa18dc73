"""Causal (or full) flash attention forward over strided [batch, seq, heads, head_dim] tensors.

One program computes BLOCK_M query rows of one (batch, head): it walks the keys BLOCK_N at a time,
keeping the running row maximum and the running sum of exp(score - max) (online softmax), so the
[seq, seq] score matrix never exists in memory. Scores and the accumulator are fp32; O is stored
in O's element type.

Q, K, V and O are addressed by their batch, sequence and head strides with a unit head_dim
stride, so Q, K and V can be views into one fused QKV projection ([batch, seq, 3, heads,
head_dim]) with no copy. Grid: (cdiv(N_CTX, BLOCK_M), Z * H).
"""
import triton
import triton.language as tl


@triton.jit
def attention_kernel(
    Q, K, V, O, sm_scale,
    stride_qz, stride_qm, stride_qh,
    stride_kz, stride_kn, stride_kh,
    stride_vz, stride_vn, stride_vh,
    stride_oz, stride_om, stride_oh,
    H, N_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    start_m = tl.program_id(0)
    zh = tl.program_id(1)
    # int64 offsets: batch x seq x 3 x hidden elements overflow int32 at large batch sizes
    z = (zh // H).to(tl.int64)
    h = (zh % H).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N_CTX

    q = tl.load(Q + z * stride_qz + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=row_ok[:, None], other=0.0)
    k_base = K + z * stride_kz + h * stride_kh
    v_base = V + z * stride_vz + h * stride_vh

    # exp(x) = exp2(x * log2(e)): fold log2(e) into the softmax scale once
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    # Causal: keys past this block's last query row contribute nothing, so stop there (keys
    # past N_CTX in the last block are masked below).
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < N_CTX
        kt = tl.load(k_base + cols[None, :] * stride_kn + offs_d[:, None], mask=col_ok[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        # Every query row keeps key 0 in the first block (causal or not), so m_new is finite from
        # then on and exp2(-inf - m_new) is 0 for the masked scores: no NaN from -inf - -inf.
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(O + z * stride_oz + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :],
             acc.to(O.dtype.element_ty), mask=row_ok[:, None])
