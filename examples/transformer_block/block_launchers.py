"""The launchers of the block's own kernels, written as a kernel package ships them: a Python
function that allocates the output and runs `kernel[grid](...)`. BUILD.bazel declares the
kernels by capturing these calls (triton_launcher_library); nothing here runs at run time."""

import torch
import triton

from kernels.add import add_kernel
from kernels.attention import attention_kernel


def add(x, y):
    """x + y (same shape, contiguous): the residual adds."""
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4, num_stages=1)
    return out


def attention(q, k, v, sm_scale):
    """Causal attention of q, k, v [batch, seq, heads, 64] (strided views of one QKV
    projection) -> a contiguous [batch, seq, heads, 64]."""
    batch, seq, heads, head_dim = q.shape
    o = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    attention_kernel[(triton.cdiv(seq, 128), batch * heads)](
        q, k, v, o, sm_scale, q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1),
        k.stride(2), v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1),
        o.stride(2), heads, seq, HEAD_DIM=head_dim, BLOCK_M=128, BLOCK_N=64, CAUSAL=True,
        num_warps=8, num_stages=3)
    return o
