"""Wrappers of Liger-Kernel's launchers, as a user writes them for a captured op.

Liger's RoPE forward writes q and k in place and returns them (transposed views of its inputs)
with cos and sin for its autograd context. An op cannot return an alias of its input, so the
capture refuses a launcher that returns only its inputs; this wrapper returns None, and the op
writes q and k in place (`Tensor(a!)`), as the launcher did.
"""

from liger_kernel.ops.rope import rope_forward


def rope(q, k, cos, sin):
    rope_forward(q, k, cos, sin)
