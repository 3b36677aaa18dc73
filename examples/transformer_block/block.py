"""A pre-norm transformer block built only from torch.ops.transformer_block.* (and views).

    h   = x + o_proj(attention(rms_norm(x)))            causal, heads of HEAD_DIM
    out = h + down_proj(silu(gate_proj(n)) * up_proj(n)),  n = rms_norm(h)

`Block.forward` calls the ops of //transformer_block:block_ops and nothing else that computes:
every matmul, the attention, both norms, the SwiGLU and the residual adds run in kernels that
rules_triton compiled ahead of time; the rest are views (reshape of contiguous tensors, and
q, k, v as slices of the fused QKV projection, passed to the attention op by their strides).
So under torch.compile each op is one opaque node and Inductor has nothing left to generate a
kernel for, and an AOTInductor package only calls the ops.

`reference` is the same block in plain torch (torch.matmul, scaled_dot_product_attention, ...):
in bf16 it is what torch itself computes, in fp32 (parameters upcast) the accuracy yardstick.
Weights are stored [in_features, out_features], the layout the matmul op reads as B.
"""

import math

import torch
from torch import nn

from transformer_block import block_ops  # noqa: F401  (loads the ops and their fake implementations)

OPS = torch.ops.transformer_block

# The sizes the kernels were built for (transformer_block/BUILD.bazel): RMSNorm rows of at most
# 1024 columns, SwiGLU rows of exactly 4096, attention heads of 64.
HIDDEN = 1024
INTERMEDIATE = 4096
HEAD_DIM = 64


class Block(nn.Module):
    """Pre-norm Llama-style block (no rotary embedding) over the transformer_block ops."""

    def __init__(self, hidden=HIDDEN, heads=HIDDEN // HEAD_DIM, intermediate=INTERMEDIATE,
                 eps=1e-6, dtype=torch.bfloat16, device=None):
        super().__init__()
        if hidden % heads or hidden // heads != HEAD_DIM:
            raise ValueError(f"hidden / heads must be {HEAD_DIM} (the attention kernel's head size), "
                             f"got {hidden} / {heads}")
        self.hidden, self.heads, self.intermediate, self.eps = hidden, heads, intermediate, eps
        self.sm_scale = 1.0 / math.sqrt(HEAD_DIM)

        def weight(*shape):
            return nn.Parameter(torch.empty(*shape, dtype=dtype, device=device), requires_grad=False)

        self.attn_norm = weight(hidden)
        self.w_qkv = weight(hidden, 3 * hidden)
        self.w_o = weight(hidden, hidden)
        self.mlp_norm = weight(hidden)
        self.w_gate = weight(hidden, intermediate)
        self.w_up = weight(hidden, intermediate)
        self.w_down = weight(intermediate, hidden)

    @torch.no_grad()
    def init_weights(self, generator=None):
        """Random weights that keep activations near unit scale (1/sqrt(fan_in) projections)."""
        for name, p in self.named_parameters():
            if p.device.type == "meta":
                continue
            r = torch.randn(p.shape, generator=generator, dtype=torch.float32, device="cpu")
            if name.endswith("norm"):
                p.copy_(1.0 + 0.1 * r)
            else:
                p.copy_(r / math.sqrt(p.shape[0]))
        return self

    def forward(self, x):
        """x: [batch, seq, hidden], bf16, contiguous -> [batch, seq, hidden]."""
        batch, seq, hidden = x.shape
        rows = x.view(batch * seq, hidden)

        # attention: the op reads q, k and v as strided views of the one QKV projection
        n, _rstd = OPS.rms_norm(rows, self.attn_norm, self.eps, 0.0)  # Liger's offset 0
        qkv = OPS.matmul(n, self.w_qkv).view(batch, seq, 3, self.heads, HEAD_DIM)
        attn = OPS.attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], self.sm_scale)
        rows = OPS.add(rows, OPS.matmul(attn.view(batch * seq, hidden), self.w_o))

        # SwiGLU MLP: gate and up as two matmuls, since the SwiGLU kernel takes one row stride
        # for a, b and its output (halves of one fused projection would need two)
        n, _rstd = OPS.rms_norm(rows, self.mlp_norm, self.eps, 0.0)
        mlp = OPS.swiglu(OPS.matmul(n, self.w_gate), OPS.matmul(n, self.w_up), 1.0)
        rows = OPS.add(rows, OPS.matmul(mlp, self.w_down))
        return rows.view(batch, seq, hidden)


def reference(block, x):
    """The same block in plain torch, in x's dtype (the parameters cast to it)."""
    dtype = x.dtype
    p = {name: t.to(dtype) for name, t in block.named_parameters()}
    batch, seq, hidden = x.shape

    def rms_norm(t, w):
        # Llama's RMSNorm (Liger's casting mode 0): statistics in fp32, the weight in t's dtype
        f = t.float()
        f = f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + block.eps)
        return w * f.to(dtype)

    h = rms_norm(x, p["attn_norm"])
    q, k, v = (h @ p["w_qkv"]).view(batch, seq, 3, block.heads, HEAD_DIM).unbind(2)
    attn = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
        scale=block.sm_scale).transpose(1, 2).reshape(batch, seq, hidden)
    x = x + attn @ p["w_o"]
    h = rms_norm(x, p["mlp_norm"])
    gate = h @ p["w_gate"]
    mlp = torch.nn.functional.silu(gate.float()).to(dtype) * (h @ p["w_up"])
    return x + mlp @ p["w_down"]
