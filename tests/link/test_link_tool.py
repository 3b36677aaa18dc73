"""python -m triton_aot.emit_c.link: grouping, ordering, validation errors, determinism."""

from __future__ import annotations

import json
import random
import re

import pytest

import harness
import libs
from harness import arg, constexpr, variant
from triton_aot.contract import library


def _write(tmp_path, metas) -> list[str]:
    """Each record with the images it names, as the compile tool writes them."""
    paths = []
    for i, meta in enumerate(metas):
        name = f"{meta['symbol']}.json"
        if (tmp_path / name).exists():  # duplicate symbols on purpose
            name = f"{meta['symbol']}_{i}.json"
        paths.append(str(harness.write_record(tmp_path, meta, name=name)))
    return paths


def _link(tmp_path, metas, *extra, name="add"):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return harness.link_tool([f"--name={name}", f"--out_c={out / name}.c",
                              f"--out_h={out / name}.h", *extra, *_write(tmp_path, metas)],
                             check=False)


def _expect_error(tmp_path, metas, *needles, extra=()):
    p = _link(tmp_path, metas, *extra)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_output_does_not_depend_on_input_order(tmp_path):
    metas = libs.add_variants()
    outputs = []
    for seed in range(3):
        random.Random(seed).shuffle(metas)
        d = tmp_path / str(seed)
        d.mkdir()
        assert _link(d, metas, "--embed_ptx_fallback").returncode == 0
        outputs.append(((d / "out/add.c").read_bytes(), (d / "out/add.h").read_bytes()))
    assert outputs[0] == outputs[1] == outputs[2]
    assert str(tmp_path).encode() not in outputs[0][0] + outputs[0][1]


def _selector_order(c_text: str, algo: int, arch: int) -> list[str]:
    body = c_text.split(f"trt_select_add_a{algo}_sm{arch}(const trt_driver")[1].split("\n}\n")[0]
    return re.findall(r"return trt_dispatch_(add_\w+)\(", body)


def test_variants_most_specialised_first(tmp_path):
    assert _link(tmp_path, libs.add_variants()).returncode == 0
    c_text = (tmp_path / "out/add.c").read_text()
    assert _selector_order(c_text, 0, 90) == ["add_a0_d16s1_sm90", "add_a0_d16_sm90",
                                              "add_a0_gen_sm90"]


def _algo_infos(tmp_path) -> list[str]:
    c_text = (tmp_path / "out/add.c").read_text()
    table = c_text.split("add_algo_infos[")[1].split("};")[0]
    return re.findall(r'"([^"]*)"', table)


def test_algo_order_follows_algo_index(tmp_path):
    metas = libs.add_variants()
    for m in metas:  # swap the indices: BLOCK=64 becomes algo 0
        m["algo_index"] = 1 - m["algo_index"]
    assert _link(tmp_path, metas).returncode == 0
    assert _algo_infos(tmp_path) == ["BLOCK=64 num_warps=2 num_stages=2",
                                     "BLOCK=128 num_warps=4 num_stages=3"]


def test_algo_order_without_index_is_canonical(tmp_path):
    # numeric constexprs compare as numbers: 64 before 128 (a string sort would put 128 first)
    assert _link(tmp_path, libs.add_variants(with_index=False)).returncode == 0
    assert _algo_infos(tmp_path) == ["BLOCK=64 num_warps=2 num_stages=2",
                                     "BLOCK=128 num_warps=4 num_stages=3"]


def test_algo_info_lists_launch_features(tmp_path):
    metas = libs.feature_variants()
    out = tmp_path / "out"
    out.mkdir()
    p = harness.link_tool(["--name=feat", f"--out_c={out}/feat.c", f"--out_h={out}/feat.h",
                           *_write(tmp_path, metas)], check=False)
    assert p.returncode == 0, p.stderr
    c_text = (out / "feat.c").read_text()
    assert '"MODE=1 num_warps=4 num_stages=3 num_ctas=2"' in c_text
    assert '"MODE=2 num_warps=4 num_stages=3 launch_cooperative_grid=1"' in c_text
    assert '"MODE=3 num_warps=4 num_stages=3 launch_pdl=1"' in c_text


def test_header_lists_algos_variants_targets(tmp_path):
    assert _link(tmp_path, libs.add_variants(), "--embed_ptx_fallback").returncode == 0
    h = (tmp_path / "out/add.h").read_text()
    assert " *   sm_80 (+PTX fallback)\n *   sm_90\n" in h
    assert " *   1: BLOCK=64 num_warps=2 num_stages=2\n" in h
    assert "sm_90  add_a0_d16s1_sm90  x_ptr%16 y_ptr%16 out_ptr%16 n%16 stride==1" in h
    assert ("CUresult add(CUstream stream, CUdeviceptr x_ptr, CUdeviceptr y_ptr, "
            "CUdeviceptr out_ptr, int32_t n, int32_t stride, int algo_id);") in h


def _prototypes(header: str) -> dict[str, list[tuple[str, str]]]:
    """The launching functions the header declares: name -> [(C type, C name)] (this test's own
    reading of the header, to hold the description to it)."""
    out = {}
    for name, params in re.findall(r"CUresult (\w+)\(([^)]*)\);", header):
        if not name.startswith(("load_", "unload_")):
            out[name] = [tuple(p.strip().rsplit(" ", 1)) for p in params.split(",")]
    return out


def test_library_description_is_the_header_api(tmp_path):
    """--out_library writes what the torch ops and the tuner read instead of the header: the
    header's launching functions with the same C types and names, each algo, each variant's
    specialization and the hint pattern of each."""
    metas = libs.add_variants()
    spec_of = {"d16s1": 0, "d16": 1, "gen": 2}
    for m in metas:
        m["specialization_index"] = spec_of[m["symbol"].split("_")[2]]
    description = tmp_path / "out" / "add.library.json"
    assert _link(tmp_path, metas, f"--out_library={description}").returncode == 0
    lib = library.read_library(description)
    header = _prototypes((tmp_path / "out/add.h").read_text())
    assert {f.name: [(p.c_type, p.name) for p in f.params] for f in lib.functions} == header
    assert [f.entry for f in lib.functions] == ["algo", "default"]
    x_ptr = lib.function("default").params[1]
    assert (x_ptr.kernel_param, x_ptr.type, x_ptr.type.elem) == ("x_ptr", "*fp32", "fp32")
    assert [a.info for a in lib.algos] == [
        "BLOCK=128 num_warps=4 num_stages=3", "BLOCK=64 num_warps=2 num_stages=2"]
    assert lib.specializations[2] == ()
    assert {v.symbol for v in lib.variants} == {m["symbol"] for m in metas}
    for v in lib.variants:
        meta = next(m for m in metas if m["symbol"] == v.symbol)
        assert v.specialization == meta["specialization_index"]
        assert v.algo == meta["algo_index"] and v.target.to_dict() == meta["target"]
    assert lib.tuning is None


def test_library_description_without_indices_numbers_patterns(tmp_path):
    """Records compiled without --specialization_index: the link numbers the hint patterns in
    dispatch order (the generic pattern last)."""
    description = tmp_path / "out" / "add.library.json"
    assert _link(tmp_path, libs.add_variants(), f"--out_library={description}").returncode == 0
    lib = library.read_library(description)
    assert lib.specializations[-1] == ()
    assert len(set(lib.specializations)) == len(lib.specializations)


def test_error_specialization_index_on_some_records(tmp_path):
    metas = _two_algo_metas()
    metas[0]["specialization_index"] = 0
    _expect_error(tmp_path, metas, "has a specialization_index but",
                  "compile every variant with --specialization_index, or none",
                  extra=(f"--out_library={tmp_path / 'out' / 'add.library.json'}",))


# ---- validation errors: exit 1, one line, both culprits named ------------------------------

def _two_algo_metas():
    return [m for m in libs.add_variants(archs=(90,)) if "gen" in m["symbol"] or "a1" in m["symbol"]]


def test_error_mixed_kernel_names(tmp_path):
    metas = _two_algo_metas()
    metas[-1]["kernel_name"] = "other_kernel"
    _expect_error(tmp_path, metas, "mixed kernel names", "add_a0_gen_sm90.json",
                  metas[-1]["symbol"] + ".json")


def test_error_different_argument_lists_in_one_algo(tmp_path):
    a = variant("k_a_sm90", [arg("x", "*fp32"), arg("n", "i32")], algo_index=0)
    b = variant("k_b_sm90", [arg("x", "*fp32"), arg("n", "i64", 16)], algo_index=0)
    _expect_error(tmp_path, [a, b], "different argument lists", "k_a_sm90.json",
                  "k_b_sm90.json", "n: i32", "n: i64")


def test_error_duplicate_variants(tmp_path):
    a = variant("k_a_sm90", [arg("x", "*fp32", 16)])
    b = variant("k_b_sm90", [arg("x", "*fp32", 16)])
    _expect_error(tmp_path, [a, b], "duplicate variants", "k_a_sm90.json", "k_b_sm90.json")


def test_error_duplicate_symbol(tmp_path):
    a = variant("k_sm90", [arg("x", "*fp32", 16)])
    b = variant("k_sm90", [arg("x", "*fp32")])
    _expect_error(tmp_path, [a, b], "duplicate symbol", "k_sm90.json", "k_sm90_1.json")


def test_error_algo_missing_a_target(tmp_path):
    metas = [m for m in libs.add_variants() if m["symbol"] != "add_a1_d16_sm80"]
    _expect_error(tmp_path, metas, "no variant for sm_80", "add_a1_d16_sm90.json",
                  "BLOCK=64")


def test_error_specialization_missing_on_a_target(tmp_path):
    metas = [m for m in libs.add_variants() if m["symbol"] != "add_a0_d16_sm80"]
    _expect_error(tmp_path, metas, "no sm_80 counterpart", "add_a0_d16_sm90.json")


def test_error_algo_index_conflict(tmp_path):
    metas = _two_algo_metas()
    for m in metas:
        m["algo_index"] = 0
    _expect_error(tmp_path, metas, "share algo_index 0", "add_a0_gen_sm90.json",
                  "add_a1_d16_sm90.json")


def test_error_algo_index_inconsistent_within_algo(tmp_path):
    metas = [m for m in libs.add_variants(archs=(90,)) if "a0" in m["symbol"]]
    metas[0]["algo_index"] = 3
    _expect_error(tmp_path, metas, "same algo but have algo_index", metas[0]["symbol"])


def test_error_algo_index_partial(tmp_path):
    metas = _two_algo_metas()
    metas[0]["algo_index"] = None
    _expect_error(tmp_path, metas, "has an algo_index but", "has none")


def test_error_algo_index_gap(tmp_path):
    metas = _two_algo_metas()
    for m in metas:
        if "a1" in m["symbol"]:
            m["algo_index"] = 5
    _expect_error(tmp_path, metas, "are not 0..1")


def test_error_ptx_fallback_without_ptx(tmp_path):
    _expect_error(tmp_path, libs.add_variants(ptx_archs=()), "--embed_ptx",
                  extra=("--embed_ptx_fallback",))


def test_error_ptx_mixed_within_target(tmp_path):
    metas = libs.add_variants()
    metas[0]["ptx_embedded"] = False
    _expect_error(tmp_path, metas, "mixes PTX and no PTX", extra=("--embed_ptx_fallback",))


def test_error_not_a_variant_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    out = tmp_path / "o"
    p = harness.link_tool(["--name=x", f"--out_c={out}.c", f"--out_h={out}.h", str(bad)],
                          check=False)
    assert p.returncode == 1 and p.stderr.startswith("error: ") and "bad.json" in p.stderr


def test_error_missing_flag(tmp_path):
    p = harness.link_tool([*_write(tmp_path, _two_algo_metas())], check=False)
    assert p.returncode == 1 and p.stderr.strip() == "error: --name is required"


def test_error_bad_name(tmp_path):
    p = _link(tmp_path, _two_algo_metas(), name="my-kernel")
    assert p.returncode == 1 and "--name 'my-kernel' is not a valid C identifier" in p.stderr


# ---- per-algo target restrictions (--algo_targets)


def test_declared_restriction_allows_a_missing_target(tmp_path):
    p = _link(tmp_path, libs.restricted_variants(), name="restr")
    assert p.returncode == 0, p.stderr
    c = (tmp_path / "out" / "restr.c").read_text()
    # algo 1 has no sm_80 selector: NULL in the table, the dispatcher's documented error
    assert "trt_select_restr_a1_sm80" not in c
    assert "{NULL, trt_select_restr_a1_sm90}," in c
    assert "return CUDA_ERROR_NO_BINARY_FOR_GPU;" in c


def test_error_restricted_algo_missing_a_declared_target(tmp_path):
    metas = libs.restricted_variants(algo1_targets=("cuda:80", "cuda:90"))
    _expect_error(tmp_path, metas, "no variant for sm_80", "restr_a1_d16_sm90")


def test_error_restriction_declares_a_target_the_library_lacks(tmp_path):
    metas = libs.restricted_variants(algo1_targets=("cuda:90", "cuda:100"))
    _expect_error(tmp_path, metas, "declares target cuda:100", "has no variant for it")


def test_error_restriction_differs_within_an_algo(tmp_path):
    metas = libs.restricted_variants()
    metas[-1]["algo_targets"] = [{"backend": "cuda", "arch": a, "warp_size": 32} for a in (80, 90)]
    _expect_error(tmp_path, metas, "declare different algo targets", "same --algo_targets")


def test_undeclared_missing_target_is_still_an_error(tmp_path):
    metas = libs.restricted_variants()
    for m in metas:
        m.pop("algo_targets", None)
    _expect_error(tmp_path, metas, "has no variant for sm_80", "compile every algo for every target")
