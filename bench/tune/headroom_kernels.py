"""Matmul kernels beyond the tuned library's, for bench/tune/headroom.py: how far the tools
Triton has on Hopper get on torch.nn.Linear's layout (C = A @ W.t(), W row-major [N, K]), every
operand through device-made TMA descriptors.

- mm_tma: one program per work unit (grid = units) or persistent (grid = NUM_SMS, each program
  walking units NUM_SMS apart); a unit is one output tile's SPLIT_K-th share of the K blocks
  (contiguous), added into a zeroed C with TMA's reduce-add when SPLIT_K > 1; WS asks Triton
  for warp specialisation of the unit loop.
- mm_stream_k: stream-K; the K iterations of all tiles dealt out evenly, in order, to the
  programs, so no SM idles on a last partial wave: a share that covers a whole tile stores it,
  a partial one is added into zeroed C.
"""
import sys
from pathlib import Path

import triton
import triton.language as tl

# The tuned library's own tile order (groups of GROUP_M tile rows), so that both walk tiles alike.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "kernels"))
from matmul_tuned import _tile_of  # noqa: E402


@triton.jit
def mm_tma(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, WS: tl.constexpr, FLAT: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_blocks = tl.cdiv(K, BLOCK_K)
    k_per = tl.cdiv(k_blocks, SPLIT_K)
    units = tiles_m * tiles_n * SPLIT_K
    for u in tl.range(tl.program_id(0), units, tl.num_programs(0), flatten=FLAT, warp_specialize=WS):
        tile = u // SPLIT_K
        ks = u % SPLIT_K
        tile_m, tile_n = _tile_of(tile, tiles_m, tiles_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        k0 = ks * k_per
        k1 = min(k0 + k_per, k_blocks)
        for kb in range(k0, k1):
            a = a_desc.load([tile_m * BLOCK_M, kb * BLOCK_K])
            b = b_desc.load([tile_n * BLOCK_N, kb * BLOCK_K]).T
            acc = tl.dot(a, b, acc)
        if SPLIT_K > 1:
            c_desc.atomic_add([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))
        else:
            c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def mm_stream_k(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_blocks = tl.cdiv(K, BLOCK_K)
    total = tiles_m * tiles_n * k_blocks
    per = tl.cdiv(total, tl.num_programs(0))
    it = tl.program_id(0) * per
    end = min(it + per, total)
    while it < end:
        tile = it // k_blocks
        kb0 = it % k_blocks
        kb1 = min(k_blocks, kb0 + (end - it))
        tile_m, tile_n = _tile_of(tile, tiles_m, tiles_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(kb0, kb1):
            a = a_desc.load([tile_m * BLOCK_M, kb * BLOCK_K])
            b = b_desc.load([tile_n * BLOCK_N, kb * BLOCK_K]).T
            acc = tl.dot(a, b, acc)
        if kb0 == 0 and kb1 == k_blocks:
            c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))
        else:
            c_desc.atomic_add([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))
        it += kb1 - kb0
