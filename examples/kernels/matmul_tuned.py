"""C = A @ B for the tuned matmul libraries (matmul_tuned: fp16, matmul_tuned_bf16: bf16).

The output takes C's element type and the accumulator is fp32, so one kernel serves both dtypes;
every stride is an argument. Tiles are walked in groups of GROUP_M tile rows, so that the
programs running at the same time share rows of A and columns of B in L2.

Three ways to run, chosen per algo by constexprs, all behind the same C API (the tuning table
picks one per shape and GPU, matmul_tuned_NAME_auto):
- one program per output tile (the CUDA configs of Triton's matmul tutorial);
- SPLIT_K > 1: SPLIT_K programs per tile, each over every SPLIT_K-th K block, adding their
  partial sums into C with atomics (Triton's split-K, for shapes with too few tiles to fill the
  GPU: decode against narrow layers). C must be zero first: those algos declare
  `reset_to_zero` for c_ptr, so the launcher zeroes C on the stream before the launch, as
  Triton's `pre_hook=init_to_zero("C")` configs did. The sums' order varies from run to run;
- PERSISTENT: min(NUM_SMS, tiles) programs, each walking tiles NUM_SMS apart (Triton's
  persistent matmul tutorial). With TMA, A, B and C move through tensor descriptors made on the
  device (tl.make_tensor_descriptor, which needs the global scratch the launcher provides) when
  the variant knows at compile time that the inner strides are 1 (the `:1` specialisations; B's
  along N, or along K for B = W.t() as torch.nn.Linear passes its weight) and
  the pointers and row strides are 16-byte aligned at run time; otherwise the same loop loads
  through pointers.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_of(tile_id, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    # Tiles go down a group of GROUP_M tile rows before moving right.
    per_group = GROUP_M * tiles_n
    first_m = (tile_id // per_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (tile_id % per_group) % rows_in_group
    tile_n = (tile_id % per_group) // rows_in_group
    return tile_m, tile_n


@triton.jit
def _tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, tile_m, tile_n,
                  k_first, k_step, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    """fp32 sum over the K blocks k_first, k_first + k_step, ... of one tile, loaded through
    pointers."""
    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # Row and column indices wrap around inside the matrix, so that loads need no M/N mask
    # (the extra rows and columns are computed and never stored).
    rm_in = rm % M
    rn_in = rn % N
    # int64: M * stride_am can pass 2**31 for the 70B shapes.
    a_tile = a_ptr + rm_in[:, None].to(tl.int64) * stride_am + (k_first * BLOCK_K + rk[None, :]) * stride_ak
    b_tile = b_ptr + (k_first * BLOCK_K + rk[:, None]) * stride_bk + rn_in[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_first * BLOCK_K, K, k_step * BLOCK_K):
        in_k = rk < K - k0
        a = tl.load(a_tile, mask=in_k[None, :], other=0.0)
        b = tl.load(b_tile, mask=in_k[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += k_step * BLOCK_K * stride_ak
        b_tile += k_step * BLOCK_K * stride_bk
    return acc


@triton.jit
def _store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, tile_m, tile_n, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, ATOMIC: tl.constexpr):
    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_tile = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    in_c = (rm[:, None] < M) & (rn[None, :] < N)
    if ATOMIC:
        tl.atomic_add(c_tile, acc.to(c_ptr.dtype.element_ty), mask=in_c, sem="relaxed")
    else:
        tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=in_c)


@triton.jit
def _persistent_tma(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_b_outer, stride_cm, tiles_m,
                    tiles_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr, B_K_INNER: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    if B_K_INNER:
        # B = W.t() with W row-major [N, K] (torch.nn.Linear's weight): the descriptor walks W.
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_b_outer, 1],
                                           block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_b_outer, 1],
                                           block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    k_blocks = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0), flatten=True):
        tile_m, tile_n = _tile_of(tile_id, tiles_m, tiles_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(k_blocks):
            a = a_desc.load([tile_m * BLOCK_M, kb * BLOCK_K])
            if B_K_INNER:
                b = b_desc.load([tile_n * BLOCK_N, kb * BLOCK_K]).T
            else:
                b = b_desc.load([kb * BLOCK_K, tile_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_tuned_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr = 1,
    PERSISTENT: tl.constexpr = False,
    TMA: tl.constexpr = False,
):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    if PERSISTENT:
        tl.static_assert(SPLIT_K == 1, "persistent algos do not split K")
        # TMA needs unit inner strides, known at compile time when the variant specialises them
        # (`:1` makes the argument the constant 1, a plain int here), and a 16-byte aligned base
        # and row pitch (checked below, at run time). B's unit stride may be along N (row-major
        # B) or along K (B = W.t(), torch.nn.Linear's layout).
        b_n_inner: tl.constexpr = isinstance(stride_bn, int)
        b_k_inner: tl.constexpr = isinstance(stride_bk, int) and not b_n_inner
        unit_inner_strides: tl.constexpr = (isinstance(stride_ak, int) and (b_n_inner or b_k_inner)
                                             and isinstance(stride_cn, int))
        use_tma: tl.constexpr = TMA and unit_inner_strides
        stride_b_outer = stride_bn if b_k_inner else stride_bk
        aligned = True
        if use_tma:
            elem: tl.constexpr = c_ptr.dtype.element_ty.primitive_bitwidth // 8
            aligned = ((a_ptr.to(tl.int64, bitcast=True) | b_ptr.to(tl.int64, bitcast=True)
                        | c_ptr.to(tl.int64, bitcast=True)) % 16 == 0)
            aligned = aligned & ((stride_am * elem) % 16 == 0) & ((stride_b_outer * elem) % 16 == 0)
            aligned = aligned & ((stride_cm * elem) % 16 == 0)
        if use_tma and aligned:
            _persistent_tma(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_b_outer, stride_cm,
                            tiles_m, tiles_n, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, b_k_inner)
        else:
            for tile_id in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0)):
                tile_m, tile_n = _tile_of(tile_id, tiles_m, tiles_n, GROUP_M)
                acc = _tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                    stride_bn, tile_m, tile_n, 0, 1, BLOCK_M, BLOCK_N, BLOCK_K)
                _store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, tile_m, tile_n, BLOCK_M,
                            BLOCK_N, False)
    else:
        tile_m, tile_n = _tile_of(tl.program_id(0), tiles_m, tiles_n, GROUP_M)
        acc = _tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                            tile_m, tile_n, tl.program_id(1) if SPLIT_K > 1 else 0, SPLIT_K, BLOCK_M, BLOCK_N, BLOCK_K)
        _store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, tile_m, tile_n, BLOCK_M, BLOCK_N,
                    SPLIT_K > 1)
