"""Tuned dispatch (NAME_auto, triton_aot.contract.tuning_table) against the fake driver: the algo the table
chose on its points, the neighbours' vote between them, the call's hint class, the default algo
on an SM the table lacks, the C lookup bit for bit equal to the Python reference, and the link
errors of stale or mismatched tables."""

from __future__ import annotations

import ctypes
import json

import pytest
from hypothesis import given, settings, strategies as st

import harness
from harness import arg, constexpr, variant
from triton_aot.contract import record_reader
from triton_aot.contract import tuning_table as tuning
from triton_aot.tuning import seed, tuning_reach

BLOCKS = (16, 32, 64)


def mm_variants(blocks=BLOCKS, archs=(80, 90)) -> list[dict]:
    args = lambda block: [arg("a_ptr", "*fp16"), arg("b_ptr", "*fp16"), arg("c_ptr", "*fp16"),
                          arg("M", "i32"), arg("N", "i32"), arg("K", "i32"),
                          constexpr("BLOCK", block)]
    return [variant(f"mm_a{i}_sm{arch}", args(b), kernel_name="mm_kernel", arch=arch,
                    algo_index=i) for i, b in enumerate(blocks) for arch in archs]


def table_for(metas: list[dict], devices: list[tuning.Device], name: str = "mm",
              key=("M", "N", "K")) -> tuning.Table:
    recs = {r.algo_index: r for r in map(record_reader.read, metas)}
    t = seed.empty_table(name, key, recs)
    for d in devices:
        t = t.with_device(d)
    return t


def pt(key, winner, n=3):
    times = [100.0 + i for i in range(n)]
    times[winner] = 50.0
    return tuning.Point(tuple(key), tuple(times), winner)


H100 = tuning.Device("NVIDIA H100 80GB HBM3", 90, "tune", (
    pt((256, 256, 256), 0), pt((4096, 4096, 4096), 2), pt((1, 4096, 4096), 1),
    pt((16, 11008, 4096), 1),
    # every algo failed here: no winner, never chosen
    tuning.Point((64, 64, 64), ("failed: CUDA_ERROR_INVALID_VALUE", "exceeds resources", None),
                 None)))
A100 = tuning.Device("NVIDIA A100-SXM4-80GB", 80, "tune", (pt((1024, 1024, 1024), 1),))


@pytest.fixture(scope="module")
def mm_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("mm")
    metas = mm_variants()
    table = out / "mm.tuning.json"
    table.write_text(table_for(metas, [H100, A100]).to_json())
    return harness.build(out, "mm", metas, link_flags=(
        f"--tuning={table}", "--tuning_key=M,N,K", "--tuning_default_algo=2"))


@pytest.mark.parametrize("major,minor,m,n,k,expected", [
    # on tuned points
    (9, 0, 256, 256, 256, "mm_a0_sm90"),
    (9, 0, 4096, 4096, 4096, "mm_a2_sm90"),
    (9, 0, 1, 4096, 4096, "mm_a1_sm90"),
    (9, 0, 16, 11008, 4096, "mm_a1_sm90"),
    # between points: the neighbours vote, the nearest weighing most
    (9, 0, 300, 300, 300, "mm_a0_sm90"),
    (9, 0, 3000, 3000, 3000, "mm_a2_sm90"),
    (9, 0, 2, 4096, 4096, "mm_a1_sm90"),
    # (64, 64, 64) has no winner, so never decides; the 2 nearest points vote, 256^3 (algo 0)
    # nearer, so weighing more than (1, 4096, 4096) (algo 1)
    (9, 0, 64, 64, 64, "mm_a0_sm90"),
    # the GEMM features count output tiles: 1024^2 (256 tiles of 64 x 64) is nearer to
    # 16 x 11008 (172) and 1 x 4096 (64) than to 256^2 (16) or 4096^2 (4096); both pick algo 1
    (9, 0, 1024, 1024, 1024, "mm_a1_sm90"),
    # sizes <= 1 count as 1
    (9, 0, 0, 4096, 4096, "mm_a1_sm90"),
    (9, 0, -5, 4096, 4096, "mm_a1_sm90"),
    # another SM's own points
    (8, 0, 64, 64, 64, "mm_a1_sm80"),
    # an SM the table lacks (sm_86 runs the sm_80 cubins): the default algo, 2
    (8, 6, 1024, 1024, 1024, "mm_a2_sm80"),
])
def test_auto_picks_the_tuned_algo(mm_lib, run_prog, major, minor, m, n, k, expected):
    assert run_prog(mm_lib, "tuned.c", major, minor, m, n, k, expected).stdout == "OK\n"


def test_header_describes_the_tuned_dispatch(mm_lib):
    h = mm_lib.header.read_text()
    assert "CUresult mm_auto(CUstream stream, CUdeviceptr a_ptr" in h
    assert ("int mm_auto_algo(int sm, CUdeviceptr a_ptr, CUdeviceptr b_ptr, CUdeviceptr c_ptr, "
            "int32_t M, int32_t N, int32_t K);") in h
    assert "sm_90 (NVIDIA H100 80GB HBM3): 4 tuned point(s), algos 0, 1, 2" in h
    # the explicit API is unchanged
    assert "CUresult mm(CUstream stream" in h and "int algo_id);" in h


@pytest.fixture(scope="module")
def mm_so(mm_lib):
    return _auto_algo(ctypes.CDLL(str(mm_lib.so)))


ALIGNED = 0x100000


def _auto_algo(lib):
    """mm_auto_algo(sm, M, N, K) with 16-byte aligned pointers."""
    fn = lib.mm_auto_algo
    fn.argtypes = [ctypes.c_int] + [ctypes.c_uint64] * 3 + [ctypes.c_int32] * 3
    return lambda sm, m, n, k: fn(sm, ALIGNED, ALIGNED, ALIGNED, m, n, k)


@settings(max_examples=300, deadline=None)
@given(sm=st.sampled_from([80, 86, 90]),
       q=st.tuples(*[st.integers(min_value=-3, max_value=(1 << 31) - 1)] * 3))
def test_c_lookup_equals_the_python_reference(mm_so, sm, q):
    table = tuning.Table.from_json(table_for(mm_variants(), [H100, A100]).to_json())
    assert mm_so(sm, *q) == tuning.lookup(table, sm, q, 2)


def test_memoised_lookup_follows_the_query(mm_so, mm_lib):
    """The lookup memoises its last answer by the exact query (SM, each key's log2): repeated,
    alternating and neighbouring queries, and the same shape on another SM, each get the table's
    answer, never the previous call's."""
    assert "trt_tuned_memo" in (mm_lib.dir / "mm.c").read_text()
    table = tuning.Table.from_json(table_for(mm_variants(), [H100, A100]).to_json())
    queries = [(90, 1, 4096, 4096), (90, 1, 4096, 4096), (90, 4096, 4096, 4096),
               (90, 1, 4096, 4096), (80, 1, 4096, 4096), (90, 1, 4096, 4096),
               (90, 2, 4096, 4096), (90, 4096, 1, 4096), (86, 4096, 4096, 4096),
               (90, 4096, 4096, 4096), (90, 4096, 4096, 4096)]
    got = [mm_so(sm, *q) for sm, *q in queries]
    assert got == [tuning.lookup(table, sm, tuple(q), 2) for sm, *q in queries]
    assert len(set(got)) > 1  # the queries do reach different answers


@given(x=st.integers(min_value=2, max_value=(1 << 63) - 1))
def test_log2_q8_is_within_two_256ths_of_an_octave(x):
    import math
    # the dropped mantissa bits (< log2(1 + 1/256)) plus the table's rounding (1/512)
    assert abs(tuning.log2_q8(x) / 256 - math.log2(x)) <= 2 / 256


def test_key_without_table_launches_the_default(tmp_path, run_prog):
    lib = harness.build(tmp_path / "lib", "mm", mm_variants(),
                        link_flags=("--tuning_key=M,N,K", "--tuning_default_algo=1"))
    run_prog(lib, "tuned.c", 9, 0, 4096, 4096, 4096, "mm_a1_sm90")
    assert "no tuned device: every call launches the default algo" in lib.header.read_text()


def test_table_round_trips_byte_identically(tmp_path):
    text = table_for(mm_variants(), [H100, A100]).to_json()
    assert tuning.Table.from_json(text).to_json() == text
    data = json.loads(text)
    assert data["format"] == "rules_triton.tuning.v1"
    assert data["devices"][1]["points"][2]["times_us"] == [
        "failed: CUDA_ERROR_INVALID_VALUE", "exceeds resources", None]


def _link_error(tmp_path, metas, table_text, *flags) -> str:
    (tmp_path / "t.json").write_text(table_text)
    jsons = [str(harness.write_record(tmp_path / "rec", m)) for m in metas]
    p = harness.link_tool([f"--name=mm", f"--out_c={tmp_path}/mm.c", f"--out_h={tmp_path}/mm.h",
                           f"--tuning={tmp_path}/t.json", *flags, *jsons], check=False)
    assert p.returncode == 1
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    return lines[0]


def test_stale_table_fails_with_the_retune_command(tmp_path):
    old = table_for(mm_variants(), [H100]).to_json()
    changed = mm_variants(blocks=(16, 32, 128))  # algo 2's config changed since tuning
    err = _link_error(tmp_path, changed, old, "--tuning_key=M,N,K",
                      "--tuning_label=//kernels:mm")
    assert "is stale: algo 2 is now 'BLOCK=128 num_warps=4 num_stages=3' but was tuned as " \
           "'BLOCK=64 num_warps=4 num_stages=3'" in err
    assert "retune: tools/tune //kernels:mm" in err


def test_table_with_another_algo_count_is_stale(tmp_path):
    old = table_for(mm_variants(), [H100]).to_json()
    err = _link_error(tmp_path, mm_variants(blocks=(16, 32)), old, "--tuning_key=M,N,K",
                      "--tuning_label=//kernels:mm")
    assert "is stale: it was tuned for 3 algos, the library has 2" in err


@pytest.mark.parametrize("flags,table_kw,message", [
    (("--tuning_key=M,N",), {}, "is keyed by M, N, K but --tuning_key is M, N"),
    (("--tuning_key=M,N,K",), {"name": "other"}, "is the table of library 'other', not 'mm'"),
    ((), {}, "--tuning needs --tuning_key"),
    (("--tuning_key=M,N,X",), {"key": ("M", "N", "X")},
     "--tuning_key: 'X' is not an integer argument of the C API; use some of M, N, K"),
    (("--tuning_key=M,N,K", "--tuning_default_algo=3"), {},
     "--tuning_default_algo: 3 is not an algo index (0..2)"),
])
def test_table_errors(tmp_path, flags, table_kw, message):
    text = table_for(mm_variants(), [H100], **table_kw).to_json()
    assert message in _link_error(tmp_path, mm_variants(), text, *flags)


def test_malformed_table(tmp_path):
    err = _link_error(tmp_path, mm_variants(), '{"format": "x"}', "--tuning_key=M,N,K")
    assert "is not 'rules_triton.tuning.v1'" in err


def test_seed_from_triton_autotune_cache(tmp_path):
    metas = mm_variants()
    recs = {r.algo_index: r for r in map(record_reader.read, metas)}
    cache = tmp_path / "cache" / "abc123"
    cache.mkdir(parents=True)
    cfg = lambda block: {"kwargs": {"BLOCK": block}, "num_warps": 4, "num_stages": 3,
                         "num_ctas": 1, "maxnreg": None, "pre_hook": None, "ir_override": None}
    # what triton.runtime.autotuner writes with cache_results=True: median, p20, p80 in ms
    (cache / "mm_kernel.autotune.json").write_text(json.dumps({
        "key": [512, 512, 512, "torch.float16", "torch.float16", "torch.float16"],
        "configs_timings": [[cfg(16), [0.02, 0.019, 0.021]], [cfg(32), [0.01, 0.009, 0.011]],
                            [cfg(64), [float("inf")] * 3]]}))
    t = seed.seed_from_autotune_cache(seed.empty_table("mm", ("M", "N", "K"), recs), recs,
                                        [cache / "mm_kernel.autotune.json"], "GPU X", 90)
    (p,) = t.device(90).points
    assert p.key == (512, 512, 512) and p.winner == 1
    assert p.times_us == (20.0, 10.0, "exceeds resources")
    assert t.device(90).source == "triton-autotune-cache"


def test_tuned_library_compiles_as_cxx(tmp_path, run_prog):
    metas = mm_variants()
    table = tmp_path / "mm.tuning.json"
    table.write_text(table_for(metas, [H100, A100]).to_json())
    lib = harness.generate(tmp_path / "lib", "mm", metas, link_flags=(
        f"--tuning={table}", "--tuning_key=M,N,K", "--tuning_default_algo=2"))
    harness.compile_library(lib, cplusplus=True)
    run_prog(lib, "tuned.c", 9, 0, 4096, 4096, 4096, "mm_a2_sm90")


def test_stale_table_is_left_out_when_retuning(tmp_path):
    """--tuning_stale_ok (what tools/tune builds with): the library links without the table, so
    the command the stale-table error names can run; NAME_auto launches the default algo."""
    old = table_for(mm_variants(), [H100]).to_json()
    metas = mm_variants(blocks=(16, 32))  # a changed algo list: the table is stale
    (tmp_path / "t.json").write_text(old)
    out = tmp_path / "lib"
    lib = harness.build(out, "mm", metas, link_flags=(
        f"--tuning={tmp_path}/t.json", "--tuning_key=M,N,K", "--tuning_default_algo=1",
        "--tuning_stale_ok"))
    auto_algo = _auto_algo(ctypes.CDLL(str(lib.so)))
    # every shape on every SM: the default algo (no table compiled in)
    assert {auto_algo(sm, m, 4096, 4096) for sm in (80, 90) for m in (1, 256, 4096)} == {1}
    assert "NVIDIA H100" not in lib.header.read_text()  # the stale table's points are not in it


# ---- hint classes: a call is chosen for among the points timed with its own variant ----------

ALIGNED_K = "a_ptr:16 b_ptr:16 c_ptr:16 K:16"
ALIGNED_ONLY = "a_ptr:16 b_ptr:16 c_ptr:16"


def hinted_variants(blocks=BLOCKS) -> list[dict]:
    """mm with three specializations per algo: pointers aligned and K % 16 == 0, pointers
    aligned, and generic."""
    out = []
    for i, block in enumerate(blocks):
        for tag, ptr_hint, k_hint in (("ak", 16, 16), ("a", 16, None), ("g", None, None)):
            args = [arg("a_ptr", "*fp16", ptr_hint), arg("b_ptr", "*fp16", ptr_hint),
                    arg("c_ptr", "*fp16", ptr_hint), arg("M", "i32"), arg("N", "i32"),
                    arg("K", "i32", k_hint), constexpr("BLOCK", block)]
            out.append(variant(f"mm_a{i}_{tag}", args, kernel_name="mm_kernel", arch=90,
                               algo_index=i))
    return out


def cpt(key, winner, hints, n=3):
    p = pt(key, winner, n)
    return tuning.Point(p.key, p.times_us, p.winner, hints)


# The same shapes timed in both classes: K % 16 == 0 favours algo 2, K % 16 != 0 algo 0.
HINTED = tuning.Device("NVIDIA H100 80GB HBM3", 90, "tune", (
    cpt((1024, 1024, 1024), 2, ALIGNED_K), cpt((4096, 4096, 4096), 2, ALIGNED_K),
    cpt((1024, 1024, 1000), 0, ALIGNED_ONLY), cpt((4096, 4096, 4001), 0, ALIGNED_ONLY),
    cpt((64, 64, 64), 1, ALIGNED_K)))


@pytest.fixture(scope="module")
def hinted_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("hinted")
    metas = hinted_variants()
    table = out / "mm.tuning.json"
    table.write_text(table_for(metas, [HINTED]).to_json())
    return harness.build(out, "mm", metas, link_flags=(
        f"--tuning={table}", "--tuning_key=M,N,K", "--tuning_default_algo=1"))


def test_table_lists_the_hint_classes(hinted_lib):
    table = tuning.Table.from_json(table_for(hinted_variants(), [HINTED]).to_json())
    assert tuning.classes(table) == [ALIGNED_K, ALIGNED_ONLY]
    assert f"0: {ALIGNED_K}" in hinted_lib.header.read_text()


@pytest.mark.parametrize("k,ptr,expected", [
    # K % 16 == 0 and aligned pointers: the aligned-K points decide (algo 2), its variant runs
    (2048, ALIGNED, "mm_a2_ak"),
    # K % 16 != 0 near the same sizes: the aligned-only points decide (algo 0)
    (2047, ALIGNED, "mm_a0_a"),
    (1001, ALIGNED, "mm_a0_a"),
    # unaligned pointers: no class holds; the nearest points of any class vote
    (2048, ALIGNED + 8, None),
])
def test_call_class_chooses_among_its_own_points(hinted_lib, k, ptr, expected):
    so = ctypes.CDLL(str(hinted_lib.so))
    fn = so.mm_auto_algo
    fn.argtypes = [ctypes.c_int] + [ctypes.c_uint64] * 3 + [ctypes.c_int32] * 3
    table = tuning.Table.from_json(table_for(hinted_variants(), [HINTED]).to_json())
    hints = " ".join(h for h, ok in (("a_ptr:16 b_ptr:16 c_ptr:16", ptr % 16 == 0),
                                     ("K:16", k % 16 == 0)) if ok)
    got = fn(90, ptr, ptr, ptr, 2048, 2048, k)
    assert got == tuning.lookup(table, 90, (2048, 2048, k), 1, hints)
    if expected is not None:
        assert f"mm_a{got}_" + expected.rsplit("_", 1)[1] == expected


def test_point_without_its_variant_fails_the_link(tmp_path):
    """A point timed with hints the library has no variant for would be another variant's time."""
    metas = [m for m in hinted_variants() if not m["symbol"].endswith("_a")]
    text = table_for(hinted_variants(), [HINTED]).to_json()
    err = _link_error(tmp_path, metas, text, "--tuning_key=M,N,K")
    assert ("the point 1024x1024x1000 (sm_90) was timed with hints 'a_ptr:16 b_ptr:16 c_ptr:16', "
            "which no specialization of mm has") in err
    assert "mm.tuning_hints.bzl" in err


def _two_layout_points(second_hints):
    table = tuning.Table("mm", ("M", "N", "K"), tuple(
        tuning.TunedAlgo(i, f"algo {i}", f"f{i}") for i in range(2)))
    return table.with_device(tuning.Device("H", 90, "tune", (
        tuning.Point((64, 64, 64), (2.0, 1.0), 1, "a_ptr:16 stride_ak:1 stride_bk:1"),
        tuning.Point((64, 64, 64), (1.0, 2.0), 0, second_hints))))


def test_a_key_may_have_one_point_per_hint_pattern():
    text = _two_layout_points("a_ptr:16 stride_ak:1 stride_bn:1").to_json()
    table = tuning.Table.from_json(text)
    assert table.to_json() == text
    # each layout's class chooses its own point's winner
    assert tuning.lookup(table, 90, (64, 64, 64), 0, "a_ptr:16 stride_ak:1 stride_bk:1") == 1
    assert tuning.lookup(table, 90, (64, 64, 64), 1, "a_ptr:16 stride_ak:1 stride_bn:1") == 0


def test_a_key_and_pattern_twice_is_refused():
    text = _two_layout_points("a_ptr:16 stride_ak:1 stride_bk:1").to_json()
    with pytest.raises(tuning.TableError, match=r"key \[64, 64, 64\] with hints "
                       r"'a_ptr:16 stride_ak:1 stride_bk:1' appears twice"):
        tuning.Table.from_json(text)

# ---- pruned specializations: each pattern keeps the algos NAME_auto can launch through it ----


def _query(*logs):
    """The features of the (M, N, K) whose log2 are these, in 1/256 octave."""
    return tuning.query_features(tuning.GEMM, [round(2 ** (v / 256)) for v in logs])


def test_reach_covers_every_choice_of_the_class():
    """Every algo `choose` picks for a call of a class (dense queries, finer than the module's
    grid) is kept by the pattern such calls launch; the generic pattern is not listed."""
    table = tuning.Table.from_json(table_for(hinted_variants(), [HINTED]).to_json())
    kept = tuning_reach.specialization_algos(table, [ALIGNED_K, ALIGNED_ONLY, ""], 1)
    assert set(kept) == {ALIGNED_K, ALIGNED_ONLY}
    for pattern, hint_class in ((ALIGNED_K, 0), (ALIGNED_ONLY, 1)):
        rows = tuning.rows_of(table, table.devices[0])
        picks = {tuning.choose(rows, _query(m, n, k), hint_class, 1, tuning.GEMM)
                 for m in range(0, 16 * 256, 96) for n in range(0, 16 * 256, 384)
                 for k in range(0, 16 * 256, 96)}
        assert picks <= set(kept[pattern]), pattern
    # the class's own winners are all there, and something was left out
    assert {0} <= set(kept[ALIGNED_ONLY]) and {1, 2} <= set(kept[ALIGNED_K])
    assert sum(map(len, kept.values())) < 2 * len(BLOCKS)


def test_reach_keeps_the_default_for_devices_the_table_lacks():
    table = tuning.Table.from_json(table_for(hinted_variants(), [HINTED]).to_json())
    for default in range(len(BLOCKS)):
        kept = tuning_reach.specialization_algos(table, [ALIGNED_K, ALIGNED_ONLY, ""], default)
        assert all(default in algos for algos in kept.values())


def test_reach_of_a_pattern_without_a_class():
    """A pattern that holds for calls no class of the table holds for keeps what the vote of
    every class's points picks for them (class -1)."""
    table = tuning.Table.from_json(table_for(hinted_variants(), [HINTED]).to_json())
    kept = tuning_reach.specialization_algos(table, [ALIGNED_K, ALIGNED_ONLY, "K:16", ""], 1)
    rows = tuning.rows_of(table, table.devices[0])
    picks = {tuning.choose(rows, _query(m, m, k), -1, 1, tuning.GEMM)
             for m in range(0, 16 * 256, 128) for k in range(1024, 16 * 256, 128)}
    assert picks <= set(kept["K:16"])


# Cut from the hinted library: algo 1 from ALIGNED_K (the winner at 64^3 there), algo 2 from
# ALIGNED_ONLY.
PRUNED = {"mm_a1_ak", "mm_a2_a"}


@pytest.fixture(scope="module")
def pruned_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("pruned")
    metas = [m for m in hinted_variants() if m["symbol"] not in PRUNED]
    table = out / "mm.tuning.json"
    table.write_text(table_for(hinted_variants(), [HINTED]).to_json())
    return harness.build(out, "mm", metas, link_flags=(
        f"--tuning={table}", "--tuning_key=M,N,K", "--tuning_default_algo=1"))


@pytest.mark.parametrize("m,n,k,offset,algo,explicit,auto", [
    # NAME_auto picks algo 1 on its ALIGNED_K point, where algo 1 was cut: the next variant of
    # algo 1 whose hints hold (aligned only) runs, not the generic one; so does mm(..., 1)
    (64, 64, 64, 0, 1, "mm_a1_a", "mm_a1_a"),
    # algo 2 was cut from ALIGNED_ONLY: K % 16 != 0 falls back to the generic variant
    (2048, 2048, 2047, 0, 2, "mm_a2_g", "mm_a0_a"),
    # kept algos launch their own pattern's variant
    (2048, 2048, 2048, 0, 2, "mm_a2_ak", "mm_a2_ak"),
    (2048, 2048, 2048, 0, 0, "mm_a0_ak", "mm_a2_ak"),
    # unaligned pointers: the generic variant has every algo
    (2048, 2048, 2048, 8, 1, "mm_a1_g", "-"),
])
def test_pruned_algo_launches_the_most_specific_variant_that_has_it(
        pruned_lib, run_prog, m, n, k, offset, algo, explicit, auto):
    assert run_prog(pruned_lib, "pruned.c", m, n, k, offset, algo, explicit,
                    auto).stdout == "OK\n"


@settings(max_examples=200, deadline=None)
@given(q=st.tuples(*[st.integers(min_value=1, max_value=1 << 16)] * 3), aligned=st.booleans())
def test_auto_choice_is_kept_in_the_calls_own_pattern(hinted_lib, q, aligned):
    """Whatever NAME_auto picks is among the algos tuning_reach keeps for the call's own pattern:
    pruning to those changes no NAME_auto launch."""
    so = ctypes.CDLL(str(hinted_lib.so))
    fn = so.mm_auto_algo
    fn.argtypes = [ctypes.c_int] + [ctypes.c_uint64] * 3 + [ctypes.c_int32] * 3
    ptr = ALIGNED if aligned else ALIGNED + 8
    got = fn(90, ptr, ptr, ptr, *q)
    pattern = ALIGNED_K if aligned and q[2] % 16 == 0 else ALIGNED_ONLY if aligned else ""
    if pattern:
        table = tuning.Table.from_json(table_for(hinted_variants(), [HINTED]).to_json())
        kept = tuning_reach.specialization_algos(table, [ALIGNED_K, ALIGNED_ONLY, ""], 1)
        assert got in kept[pattern]


# ---- waves: algos whose programs the SM count bounds (a persistent GEMM's grid)

def _persistent_grid(tm: int, tn: int) -> tuple[tuple, tuple]:
    """(source, C) of min(NUM_SMS, cdiv(M, tm) * cdiv(N, tn)), 1, 1."""
    return ((f"min(NUM_SMS, cdiv(M, {tm}) * cdiv(N, {tn}))", "1", "1"),
            (f"trt_grid_min(trt_attr_num_sms, trt_grid_mul(trt_grid_cdiv((int64_t)M, "
             f"(int64_t){tm}), trt_grid_cdiv((int64_t)N, (int64_t){tn})))", "(int64_t)1",
             "(int64_t)1"))


# algo 0: a tile per program; algos 1 and 2: persistent, 128 x 128 and 128 x 256 tiles
WAVE_GRIDS = [(("cdiv(M, 64) * cdiv(N, 64)", "1", "1"),
               ("trt_grid_mul(trt_grid_cdiv((int64_t)M, (int64_t)64), trt_grid_cdiv((int64_t)N, "
                "(int64_t)64))", "(int64_t)1", "(int64_t)1")),
              _persistent_grid(128, 128), _persistent_grid(128, 256)]


def wave_variants(archs=(80, 90)) -> list[dict]:
    args = [arg("a_ptr", "*fp16"), arg("b_ptr", "*fp16"), arg("c_ptr", "*fp16"),
            arg("M", "i32"), arg("N", "i32"), arg("K", "i32")]
    return [variant(f"mmw_a{i}_sm{arch}", args + [constexpr("ALGO", i)], kernel_name="mmw_kernel",
                    arch=arch, algo_index=i, grid=source, grid_c=c)
            for i, (source, c) in enumerate(WAVE_GRIDS) for arch in archs]


def wpt(key, times):
    return tuning.Point(tuple(key), tuple(times), tuning.winner_of(times))


# Around Falcon-7B's qkv layer: at M = 778 the 128 x 256 tiles of N = 4096 (112) and 4608 (126)
# fill the 132 SMs once and algo 2 wins there; N = 4672 has 133 of them, two waves.
WAVE_POINTS = (wpt((778, 4096, 4544), [130.0, 110.0, 100.0]),
               wpt((778, 4608, 4544), [140.0, 118.0, 108.0]),
               wpt((64, 256, 256), [5.0, 6.0, 7.0]), wpt((8192, 8192, 4096), [900.0, 700.0, 820.0]))


def wave_table(num_sms) -> tuning.Table:
    return tuning.Table.from_json(table_for(wave_variants(), [
        tuning.Device("NVIDIA H200", 90, "tune", WAVE_POINTS, num_sms),
        tuning.Device("NVIDIA A100-SXM4-80GB", 80, "tune", WAVE_POINTS)], name="mmw").to_json())


@pytest.fixture(scope="module")
def wave_so(tmp_path_factory):
    out = tmp_path_factory.mktemp("mmw")
    table = out / "mmw.tuning.json"
    table.write_text(wave_table(132).to_json())
    lib = harness.build(out, "mmw", wave_variants(), link_flags=(
        f"--tuning={table}", "--tuning_key=M,N,K", "--tuning_default_algo=0"))
    assert "trt_wave_excess" in (lib.dir / "mmw.c").read_text()
    assert "waves over its 132 SMs for the SM-bound algos 1, 2" in lib.header.read_text()
    fn = ctypes.CDLL(str(lib.so)).mmw_auto_algo
    fn.argtypes = [ctypes.c_int] + [ctypes.c_uint64] * 3 + [ctypes.c_int32] * 3
    return lambda sm, m, n, k: fn(sm, ALIGNED, ALIGNED, ALIGNED, m, n, k)


def test_the_grid_says_which_algos_the_sm_count_bounds():
    table = wave_table(132)
    waves = tuning.waves_of(table, table.device(90), [g for g, _ in WAVE_GRIDS])
    assert waves == tuning.Waves(132, (None, (128, 128), (128, 256)))
    # no SM count recorded (an older table), or no grid known: no waves
    assert tuning.waves_of(table, table.device(80), [g for g, _ in WAVE_GRIDS]) is None
    assert tuning.waves_of(table, table.device(90), [None] * 3) is None
    # 133 tiles on 132 SMs: two whole waves, almost an octave over one; 126: none over
    assert tuning.wave_excess((128, 256), [tuning.lead9(v) for v in (778, 4672)], 132) == 253
    assert tuning.wave_excess((128, 256), [tuning.lead9(v) for v in (778, 4608)], 132) == 0


def test_a_wave_boundary_between_the_points_changes_the_pick(wave_so):
    """Past the boundary the persistent 128 x 256 algo, the neighbours' winner, runs two waves
    for 133 tiles: the vote moves to the 128 x 128 one (259 tiles, nearly two full waves). On
    the neighbours' side of the boundary, and on a device without an SM count, it does not."""
    grids = [g for g, _ in WAVE_GRIDS]
    table = wave_table(132)
    assert tuning.lookup(table, 90, (778, 4672, 4544), 0, None, grids) == 1
    assert tuning.lookup(table, 90, (778, 4672, 4544), 0, None) == 2  # the vote without waves
    assert tuning.lookup(table, 90, (778, 4352, 4544), 0, None, grids) == 2
    assert tuning.lookup(table, 80, (778, 4672, 4544), 0, None, grids) == 2
    assert wave_so(90, 778, 4672, 4544) == 1
    assert wave_so(90, 778, 4352, 4544) == 2
    assert wave_so(80, 778, 4672, 4544) == 2


@settings(max_examples=300, deadline=None)
@given(sm=st.sampled_from([80, 90]),
       q=st.tuples(*[st.integers(min_value=-3, max_value=(1 << 31) - 1)] * 2,
                   st.integers(min_value=1, max_value=1 << 16)))
def test_c_lookup_with_waves_equals_the_python_reference(wave_so, sm, q):
    table = wave_table(132)
    assert wave_so(sm, *q) == tuning.lookup(table, sm, q, 0, None, [g for g, _ in WAVE_GRIDS])
