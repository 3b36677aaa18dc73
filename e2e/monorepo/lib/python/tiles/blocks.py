"""A @triton.jit helper and the autotune configs that several kernel files share."""

import triton
import triton.language as tl


@triton.jit
def scaled(x):
    return x * 2.75


def autotune_configs():
    return [triton.Config({"BLOCK": block}, num_warps=warps)
            for block, warps in ((256, 2), (1024, 4))]
