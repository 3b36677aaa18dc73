"""Fabricated variant sets used by the tests (what triton_aot.compile.compile would emit)."""

from __future__ import annotations

from harness import arg, constexpr, tensordesc, variant


def add_args(block: int, *, x=None, y=None, out=None, n=None, stride=None) -> list[dict]:
    return [arg("x_ptr", "*fp32", x), arg("y_ptr", "*fp32", y), arg("out_ptr", "*fp32", out),
            arg("n", "i32", n), arg("stride", "i32", stride), constexpr("BLOCK", block)]


# specialisation name -> hints
ADD_SPECS = {
    "d16s1": dict(x=16, y=16, out=16, n=16, stride=1),
    "d16": dict(x=16, y=16, out=16, n=16),
    "gen": {},
}
# algo -> (BLOCK, num_warps, num_stages, specs).  Algo 1 has no generic variant, so misaligned
# calls of algo 1 match nothing.
ADD_ALGOS = {0: (128, 4, 3, ["d16s1", "d16", "gen"]), 1: (64, 2, 2, ["d16"])}


def add_variants(archs=(80, 90), ptx_archs=(80,), with_index=True) -> list[dict]:
    metas = []
    for algo, (block, nw, ns, specs) in ADD_ALGOS.items():
        for spec in specs:
            for arch in archs:
                grid = f"((int64_t)(n) + {block - 1}) / {block}"
                metas.append(variant(
                    f"add_a{algo}_{spec}_sm{arch}", add_args(block, **ADD_SPECS[spec]),
                    kernel_name="add_kernel", arch=arch, algo_index=algo if with_index else None,
                    num_warps=nw, num_stages=ns, grid_c=(grid, "1", "1"),
                    ptx_embedded=arch in ptx_archs))
    return metas


def feature_variants() -> list[dict]:
    """One algo per launch feature, distinguished by the MODE constexpr (sm_90 only)."""
    args = lambda mode: [arg("out_ptr", "*fp32"), arg("n", "i32"), constexpr("MODE", mode)]
    grid = ("(int64_t)(n)", "2", "1")
    common = dict(kernel_name="feat_kernel", arch=90, grid_c=grid)
    return [
        variant("feat_plain", args(0), algo_index=0, **common),
        variant("feat_cluster", args(1), algo_index=1, num_ctas=2, **common),
        variant("feat_coop", args(2), algo_index=2, cooperative=True, **common),
        variant("feat_pdl", args(3), algo_index=3, pdl=True, **common),
        variant("feat_scratch", args(4), algo_index=4, global_scratch=(96, 512),
                profile_scratch=(32, 128), **common),
        variant("feat_smem100k", args(5), algo_index=5, shared=100 * 1024, **common),
        variant("feat_smem200k", args(6), algo_index=6, shared=200 * 1024, **common),
        variant("feat_cluster16", args(7), algo_index=7, num_ctas=16, **common),
        variant("feat_smem48k", args(8), algo_index=8, shared=48 * 1024, **common),
    ]


def launch_variants() -> list[dict]:
    """Launch-only arguments and device attributes in grids: `rows(out_ptr, n_cols, BLOCK)`
    with launch arguments n_rows: i32 and tiles: i64 (C API: stream, out_ptr, n_cols, n_rows,
    tiles, algo_id). Algo 0 is row-wise (grid n_rows, with an n_cols%16 variant), algo 1
    persistent (min(NUM_SMS, tiles)), algo 2 overflow-prone arithmetic, algo 3 max()."""
    args = lambda block, n_cols=None: [arg("out_ptr", "*fp32"), arg("n_cols", "i32", n_cols),
                                       constexpr("BLOCK", block)]
    la = [("n_rows", "i32"), ("tiles", "i64")]
    common = dict(kernel_name="rows_kernel", arch=90, launch_args=la)
    return [
        variant("rows_a0_d16", args(64, 16), algo_index=0, grid_c=(
            "(int64_t)n_rows", "(int64_t)1", "(int64_t)1"), **common),
        variant("rows_a0_gen", args(64), algo_index=0, grid_c=(
            "(int64_t)n_rows", "(int64_t)1", "(int64_t)1"), **common),
        variant("rows_a1", args(128), algo_index=1, grid_c=(
            "trt_grid_min(trt_attr_num_sms, (int64_t)tiles)", "(int64_t)1", "(int64_t)1"),
                **common),
        variant("rows_a2", args(256), algo_index=2, grid_c=(
            "trt_grid_mul(trt_grid_cdiv((int64_t)n_rows, (int64_t)2), (int64_t)tiles)",
            "(int64_t)1", "(int64_t)1"), **common),
        variant("rows_a3", args(512), algo_index=3, grid_c=(
            "trt_grid_max((int64_t)n_cols, (int64_t)tiles)", "trt_grid_mul(trt_attr_num_sms, "
            "(int64_t)2)", "(int64_t)1"), maxnreg=128, **common),
    ]


def restricted_variants(algo1_targets=("cuda:90",), archs1=(90,)) -> list[dict]:
    """`restr(out_ptr, n)`: algo 0 on sm_80 and sm_90; algo 1 (an fp8-style algo) declared and
    compiled for sm_90 only, with an aligned and a generic variant."""
    args = lambda block, n=None: [arg("out_ptr", "*fp32"), arg("n", "i32", n),
                                  constexpr("BLOCK", block)]
    grid = ("(int64_t)n", "(int64_t)1", "(int64_t)1")
    out = [variant(f"restr_a0_sm{a}", args(64), kernel_name="restr_kernel", arch=a,
                   algo_index=0, grid_c=grid) for a in (80, 90)]
    for a in archs1:
        for spec, hint in (("d16", 16), ("gen", None)):
            out.append(variant(f"restr_a1_{spec}_sm{a}", args(128, hint), kernel_name="restr_kernel",
                               arch=a, algo_index=1, grid_c=grid,
                               algo_targets=list(algo1_targets)))
    return out


SCALAR_TYPES = ["i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16",
                "fp32", "fp64"]


def types_variants() -> list[dict]:
    args = [arg("p", "*fp32")] + [arg(f"a_{t}", t) for t in SCALAR_TYPES]
    return [variant("types_sm90", args, kernel_name="types_kernel", arch=90)]


def tma_variants() -> list[dict]:
    """Host tensor descriptors: `tma(a_desc, c_desc, n, scale, BLOCK)` with a_desc a 2-D fp16
    descriptor (block [64, 32], 64-byte swizzle) and c_desc a 1-D fp32 one whose block 512 Triton
    clamps to a 256 box (C API: stream, a_desc_base, a_desc_shape0, a_desc_shape1,
    a_desc_stride0, a_desc_stride1, c_desc_base, c_desc_shape0, c_desc_stride0, n, scale,
    algo_id). Algo 0 grid (n), with an n%16 variant; algo 1 the same kernel with a 128B swizzle
    and a 3-D bf16 descriptor in a_desc's place is another library (tma3d)."""
    def args(n=None, rows=64):
        return [tensordesc("a_desc", "fp16", [rows, 32], data_type=6, elem_size=2, swizzle=2),
                tensordesc("c_desc", "fp32", [512], data_type=7, elem_size=4, swizzle=0,
                           box=[256]),
                arg("n", "i32", n), arg("scale", "fp32"), constexpr("BLOCK", rows)]
    common = dict(kernel_name="tma_kernel", arch=90, grid_c=("(int64_t)n", "1", "1"))
    return [variant("tma_d16", args(16), algo_index=0, **common),
            variant("tma_gen", args(), algo_index=0, **common),
            # another algo with another block shape (the rule's tensordesc<fp16[{BLOCK}, 32]>):
            # the same C API, its own box
            variant("tma_a1", args(rows=128), algo_index=1, **common)]


def tma3d_variants() -> list[dict]:
    """A 3-D bf16 descriptor with a 128-byte swizzle: `tma3d(x_desc)`, grid over its shape
    (x_desc_shape0, cdiv(x_desc_shape1, 16))."""
    return [variant("tma3d", [tensordesc("x_desc", "bf16", [2, 16, 64], data_type=9,
                                         elem_size=2, swizzle=3)],
                    kernel_name="tma3d_kernel", arch=90, algo_index=0,
                    grid_c=("(int64_t)x_desc_shape0",
                            "trt_grid_cdiv((int64_t)x_desc_shape1, (int64_t)16)", "(int64_t)1"))]


def zero_variants() -> list[dict]:
    """reset_to_zero (split-K style accumulation): `zero(c_ptr: *fp32, b_ptr: *fp16, x_ptr: *i8,
    d_ptr: *fp64, M: i32, N: i32, stride_cm: i32, n: i64, SPLIT)` (C API: stream, c_ptr, b_ptr,
    x_ptr, d_ptr, M, N, stride_cm, n, algo_id).
      algo 0: grid (cdiv(M, 16), SPLIT, 1), zeroes c_ptr[M, N, stride_cm] (2-D fp32); a c_ptr%16
              variant and a generic one;
      algo 1: grid (M, 1, 1), zeroes b_ptr[n] (1-D fp16), x_ptr[M, N, stride_cm] (2-D i8) and
              d_ptr[n] (1-D fp64);
      algo 2: the same kernel without reset_to_zero."""
    def args(split, c=None):
        return [arg("c_ptr", "*fp32", c), arg("b_ptr", "*fp16"), arg("x_ptr", "*i8"),
                arg("d_ptr", "*fp64"), arg("M", "i32"), arg("N", "i32"), arg("stride_cm", "i32"),
                arg("n", "i64"), constexpr("SPLIT", split)]

    def region(name, *extents):
        return {"name": name, "extents": list(extents),
                "extents_c": [f"(int64_t){e}" for e in extents]}
    common = dict(kernel_name="zero_kernel", arch=90)
    grid0 = ("trt_grid_cdiv((int64_t)M, (int64_t)16)", "(int64_t)4", "(int64_t)1")
    metas = [
        variant("zero_a0_c16", args(4, c=16), algo_index=0, grid_c=grid0, **common),
        variant("zero_a0_gen", args(4), algo_index=0, grid_c=grid0, **common),
        variant("zero_a1", args(1), algo_index=1, grid_c=("(int64_t)M", "1", "1"), **common),
        variant("zero_a2", args(4), algo_index=2, grid_c=grid0, **common),
    ]
    for m in metas[:2]:
        m["reset_to_zero"] = [region("c_ptr", "M", "N", "stride_cm")]
    metas[2]["reset_to_zero"] = [region("b_ptr", "n"), region("x_ptr", "M", "N", "stride_cm"),
                                 region("d_ptr", "n")]
    return metas


def zero_matrix_variants() -> list[dict]:
    """reset_to_zero of a strided matrix (four extents), the split-K matmul's C:
    `zm(c_ptr: *fp16, M: i32, N: i32, stride_cm: i32, stride_cn: i32)`, grid (M, 1, 1), zeroes
    c_ptr[M, N, stride_cm, stride_cn] (C API: stream, c_ptr, M, N, stride_cm, stride_cn,
    algo_id)."""
    meta = variant("zm_a0", [arg("c_ptr", "*fp16"), arg("M", "i32"), arg("N", "i32"),
                             arg("stride_cm", "i32"), arg("stride_cn", "i32")],
                   kernel_name="zm_kernel", arch=90, algo_index=0,
                   grid_c=("(int64_t)M", "1", "1"))
    meta["reset_to_zero"] = [{"name": "c_ptr", "extents": ["M", "N", "stride_cm", "stride_cn"],
                              "extents_c": ["(int64_t)M", "(int64_t)N", "(int64_t)stride_cm",
                                            "(int64_t)stride_cn"]}]
    return [meta]
