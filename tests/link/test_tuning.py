"""Tuned dispatch (NAME_auto, triton_aot.tuning) against the fake driver: the algo the table
chose on its points, the nearest point between them, the default algo on an SM the table lacks,
the C lookup bit for bit equal to the Python reference, and the link errors of stale or
mismatched tables."""

from __future__ import annotations

import ctypes
import json

import pytest
from hypothesis import given, settings, strategies as st

import harness
from harness import arg, constexpr, variant
from triton_aot import tuning
from triton_aot import record_reader

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
    t = tuning.empty_table(name, key, recs)
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
    # between points: the nearest in log2 space
    (9, 0, 300, 300, 300, "mm_a0_sm90"),
    (9, 0, 3000, 3000, 3000, "mm_a2_sm90"),
    (9, 0, 2, 4096, 4096, "mm_a1_sm90"),
    # (64, 64, 64) has no winner: its neighbour (256, 256, 256) decides
    (9, 0, 64, 64, 64, "mm_a0_sm90"),
    # 1024^3 is 6 octaves from both 256^3 and 4096^3: the first in table order (sorted by key)
    (9, 0, 1024, 1024, 1024, "mm_a0_sm90"),
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
    assert "int mm_auto_algo(int sm, int64_t M, int64_t N, int64_t K);" in h
    assert "sm_90 (NVIDIA H100 80GB HBM3): 4 tuned point(s), algos 0, 1, 2" in h
    # the explicit API is unchanged
    assert "CUresult mm(CUstream stream" in h and "int algo_id);" in h


@pytest.fixture(scope="module")
def mm_so(mm_lib):
    lib = ctypes.CDLL(str(mm_lib.so))
    lib.mm_auto_algo.argtypes = [ctypes.c_int] + [ctypes.c_int64] * 3
    return lib


@settings(max_examples=300, deadline=None)
@given(sm=st.sampled_from([80, 86, 90]),
       q=st.tuples(*[st.integers(min_value=-3, max_value=1 << 40)] * 3))
def test_c_lookup_equals_the_python_reference(mm_so, sm, q):
    table = tuning.Table.from_json(table_for(mm_variants(), [H100, A100]).to_json())
    assert mm_so.mm_auto_algo(sm, *q) == tuning.lookup(table, sm, q, 2)


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
    got = [mm_so.mm_auto_algo(sm, *q) for sm, *q in queries]
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
    t = tuning.seed_from_autotune_cache(tuning.empty_table("mm", ("M", "N", "K"), recs), recs,
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
    so = ctypes.CDLL(str(lib.so))
    so.mm_auto_algo.argtypes = [ctypes.c_int] + [ctypes.c_int64] * 3
    # every shape on every SM: the default algo (no table compiled in)
    assert {so.mm_auto_algo(sm, m, 4096, 4096) for sm in (80, 90) for m in (1, 256, 4096)} == {1}
    assert "NVIDIA H100" not in lib.header.read_text()  # the stale table's points are not in it
