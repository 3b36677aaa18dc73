"""Attention forward (softmax(Q K^T * sm_scale) V) reading Q, K, V and writing O through host
tensor descriptors: on Hopper every tile moves by TMA (one bulk copy per tile instead of a load
per thread), which is how the fastest Triton attention kernels read their operands.

Q, K, V and O are (Z, H, N_CTX, HEAD_DIM) fp16 tensors, contiguous in their last dimension, seen
as 2-D (Z * H * N_CTX, HEAD_DIM) matrices: the descriptors are made over those views (host side:
TensorDescriptor(q.view(-1, HEAD_DIM), ...) under the JIT; base, shape and strides through the C
API), and the kernel picks its (batch, head) by a row offset. N_CTX must be a multiple of BLOCK_M
and BLOCK_N, so that no tile crosses into the next head.

Each program computes BLOCK_M rows of one head with the online softmax (running maximum m_i and
sum l_i, in base 2: exp(x) = exp2(x * log2(e))), loading one BLOCK_N-row tile of K and of V per
step. CAUSAL masks keys after the query row and stops the loop at the diagonal.
Grid: (cdiv(N_CTX, BLOCK_M), Z * H).
"""
import triton
import triton.language as tl


@triton.jit
def attn_fwd_tma(
    q_desc, k_desc, v_desc, o_desc,
    sm_scale,
    Z, H, N_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    tile_m = tl.program_id(0)
    head = tl.program_id(1)  # flattened (batch, head): Z * H programs along y
    head_row = head * N_CTX  # first row of this head in the 2-D views
    q_row = head_row + tile_m * BLOCK_M

    q = q_desc.load([q_row, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): softmax in base 2

    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    end = (tile_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, end, BLOCK_N):
        k = k_desc.load([head_row + start_n, 0])
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        if CAUSAL:
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old maximum
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([head_row + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new

    o_desc.store([q_row, 0], (acc / l_i[:, None]).to(q.dtype))
