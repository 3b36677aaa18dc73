"""End-to-end tests of `python -m triton_aot.compile.compile` (no GPU needed).

Kernels live in kernels/ next to this file; nothing here depends on absolute paths.
"""

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import triton_aot
from triton_aot.compile.compile import run_command_line
from triton_aot.core.signature import parse_type

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
REPO = Path(triton_aot.__file__).resolve().parent.parent


JSON_KEYS = ["format", "symbol", "kernel_name", "kernel_file", "target", "algo_index", "args",
             "constexprs", "num_warps", "num_stages", "num_ctas", "launch_cooperative_grid",
             "launch_pdl", "shared", "global_scratch_size", "global_scratch_align",
             "profile_scratch_size", "profile_scratch_align", "grid", "grid_c", "triton_version",
             "cubin_file", "cubin_sha256", "cubin_size", "ptx_embedded", "ptx_file"]
# *fp32 as a record writes it (core/arg_type.py's JSON form)
FP32_PTR = {"kind": "pointer", "elem": "fp32", "const": False}

ADD_FLAGS = ["--kernel_name=add_kernel", "--signature=*fp32:16, *fp32:16, *fp32:16, i32, BLOCK",
             "--constexprs=BLOCK=1024", "--grid=cdiv(n, 1024)", "--num_warps=4",
             "--num_stages=3", "--symbol=add_a0_sm80", "--algo_index=0"]
ADD_OUTPUTS = ["json", "cubin", "ptx", "ttir", "ttgir", "llir"]


def tool(args, cwd=None, env=None):
    """Runs the tool as a separate process, like Bazel does."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "triton_aot.compile.compile", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def out_flags(out_dir, names, stem="k"):
    return [f"--out_{n}={out_dir / (stem + '.' + n)}" for n in names]


def assert_ok(proc):
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


# ----------------------------------------------------------------------------- add, cuda:80


@pytest.fixture(autouse=True)
def fresh_modules():
    """Each test as a fresh process would see it: the compile tool keeps the modules it imports
    (a process compiles one kernel's requests, worker.py), so what a test's in-process compiles
    imported is dropped before the next test."""
    before = set(sys.modules)
    yield
    # only kernel files and their helpers: triton's and the environment's lazily imported
    # modules (extension submodules among them) stay, as they would in the next request
    installed = tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix}) + (
        str(REPO / "triton_aot") + os.sep,)
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None)
        if file and not os.path.realpath(file).startswith(installed) \
                and not os.path.abspath(file).startswith(installed):
            del sys.modules[name]


@pytest.fixture(scope="module")
def add80(tmp_path_factory):
    out = tmp_path_factory.mktemp("add80")
    names = ADD_OUTPUTS + ["sass"] + ["c", "h"]
    proc = tool([f"--kernel_path={KERNELS / 'add.py'}", *ADD_FLAGS, "--target=cuda:80",
                 *out_flags(out, names)])
    assert_ok(proc)
    return out


def test_add80_json(add80):
    text = (add80 / "k.json").read_text()
    meta = json.loads(text)
    assert list(meta) == JSON_KEYS
    cubin = (add80 / "k.cubin").read_bytes()
    assert meta == {
        "format": "rules_triton.variant.v3",
        "symbol": "add_a0_sm80",
        "kernel_name": "add_kernel",
        "kernel_file": "add.py",
        "target": {"backend": "cuda", "arch": 80, "warp_size": 32},
        "algo_index": 0,
        "args": [
            {"name": "x_ptr", "type": FP32_PTR, "ctype": "CUdeviceptr", "hint": 16},
            {"name": "y_ptr", "type": FP32_PTR, "ctype": "CUdeviceptr", "hint": 16},
            {"name": "out_ptr", "type": FP32_PTR, "ctype": "CUdeviceptr", "hint": 16},
            {"name": "n", "type": {"kind": "scalar", "name": "i32"}, "ctype": "int32_t",
             "hint": None},
            {"name": "BLOCK", "type": {"kind": "constexpr"}, "value": 1024, "value_repr": "1024"},
        ],
        "constexprs": {"BLOCK": "1024"},
        "num_warps": 4, "num_stages": 3, "num_ctas": 1,
        "launch_cooperative_grid": False, "launch_pdl": False,
        "shared": 0,
        "global_scratch_size": 0, "global_scratch_align": 1,
        "profile_scratch_size": 0, "profile_scratch_align": 1,
        "grid": ["cdiv(n, 1024)", "1", "1"],
        "grid_c": ["trt_grid_cdiv((int64_t)n, (int64_t)1024)", "(int64_t)1", "(int64_t)1"],
        "triton_version": meta["triton_version"],
        "cubin_file": "k.cubin",
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
        "cubin_size": len(cubin),
        "ptx_embedded": False,
        "ptx_file": None,
    }
    import triton
    assert meta["triton_version"] == triton.__version__
    assert text.endswith("}\n")


def test_add80_artifacts(add80):
    cubin = (add80 / "k.cubin").read_bytes()
    assert cubin[:4] == b"\x7fELF" and len(cubin) > 1000
    ptx = (add80 / "k.ptx").read_text()
    assert ".target sm_80" in ptx and ".visible .entry add_kernel(" in ptx
    assert "tt.func public @add_kernel" in (add80 / "k.ttir").read_text()
    assert "ttg.num-warps" in (add80 / "k.ttgir").read_text()
    assert "define" in (add80 / "k.llir").read_text()
    sass = (add80 / "k.sass").read_text()
    assert sass.startswith("Function:add_kernel") and "EXIT" in sass


def test_add80_has_no_paths(add80):
    for f in add80.iterdir():
        data = f.read_bytes()
        for path in (str(REPO), str(HERE), str(Path.home())):
            assert path.encode() not in data, (f.name, path)


def test_add80_c_outputs(add80):
    c, h = (add80 / "k.c").read_text(), (add80 / "k.h").read_text()
    assert "add_a0_sm80" in h and "load_add_a0_sm80" in h
    assert "add_a0_sm80" in c


# ----------------------------------------------------------------------------- cuda:90


def test_add90_only_requested_outputs(tmp_path):
    proc = tool([f"--kernel_path={KERNELS / 'add.py'}", *ADD_FLAGS, "--target=cuda:90",
                 "--num_warps=8", *out_flags(tmp_path, ["json", "ptx"])])
    assert_ok(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.json", "k.ptx"]
    meta = json.loads((tmp_path / "k.json").read_text())
    assert meta["target"] == {"backend": "cuda", "arch": 90, "warp_size": 32}
    assert meta["num_warps"] == 8 and meta["cubin_size"] > 1000
    assert ".target sm_90a" in (tmp_path / "k.ptx").read_text()


# ----------------------------------------------------------------------------- determinism


def test_deterministic_across_paths_caches_and_arg_files(tmp_path, add80):
    """Two copies of the kernel in different folders, different TRITON_CACHE_DIRs, HOME set to
    an empty folder, arguments from @paramfile and --flagfile: byte-identical outputs, and
    nothing written to HOME, the cache dirs or the temp dir."""
    names = ADD_OUTPUTS + ["c", "h"]
    results = []
    for i, (sub, how) in enumerate([("a", "@"), ("b/deeper/still", "--flagfile=")]):
        src_dir = tmp_path / "src" / sub
        src_dir.mkdir(parents=True)
        shutil.copy(KERNELS / "add.py", src_dir / "add.py")
        home, cache, tmp = (tmp_path / f"{d}{i}" for d in ("home", "cache", "tmp"))
        home.mkdir()
        tmp.mkdir()
        out = tmp_path / f"out{i}"
        argfile = tmp_path / f"args{i}.txt"
        argfile.write_text("\n".join(["--kernel_path=add.py", *ADD_FLAGS, "--target=cuda:80",
                                      *out_flags(out, names)]) + "\n")
        env = dict(os.environ, HOME=str(home), TRITON_CACHE_DIR=str(cache), TMPDIR=str(tmp),
                   TRITON_HOME=str(home / "th"))
        proc = tool([f"{how}{argfile}"], cwd=src_dir, env=env)
        assert_ok(proc)
        assert list(home.iterdir()) == [], "wrote under HOME"
        assert not cache.exists(), "used the caller's TRITON_CACHE_DIR"
        assert list(tmp.iterdir()) == [], "left temporary files"
        results.append({n: (out / f"k.{n}").read_bytes() for n in names})
    assert results[0] == results[1]
    # and the same as the run from the original location
    for n in names:
        assert results[0][n] == (add80 / f"k.{n}").read_bytes(), n


# ----------------------------------------------------------------------------- ABI / features


def test_scale_fp32_scalar_is_float(tmp_path):
    proc = tool([f"--kernel_path={KERNELS / 'scale.py'}", "--kernel_name=scale_kernel",
                 "--signature=*fp32:16, *fp32:16, fp32, i32:16, 256", "--grid=cdiv(n, 256)",
                 "--num_warps=4", "--num_stages=2", "--target=cuda:80", "--symbol=scale_sm80",
                 *out_flags(tmp_path, ["json", "ptx"])])
    assert_ok(proc)
    meta = json.loads((tmp_path / "k.json").read_text())
    alpha = meta["args"][2]
    assert alpha == {"name": "alpha", "type": {"kind": "scalar", "name": "fp32"},
                     "ctype": "float", "hint": None}
    assert meta["args"][3]["hint"] == 16
    assert ".param .f32 scale_kernel_param_2" in (tmp_path / "k.ptx").read_text()


def test_scalars_every_type(tmp_path):
    types = ["i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16",
             "fp32", "fp64"]
    proc = tool([f"--kernel_path={KERNELS / 'scalars.py'}", "--kernel_name=scalars_kernel",
                 "--signature=*u8:16, " + ", ".join(types), "--grid=1", "--num_warps=1",
                 "--num_stages=1", "--target=cuda:80", "--symbol=scalars_sm80",
                 *out_flags(tmp_path, ["json", "ptx"])])
    assert_ok(proc)
    meta = json.loads((tmp_path / "k.json").read_text())
    ctypes = [a["ctype"] for a in meta["args"][1:]]
    assert ctypes == ["bool", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint8_t",
                      "uint16_t", "uint32_t", "uint64_t", "uint16_t", "uint16_t", "float",
                      "double"]
    # kernel parameter widths as ptxas sees them: i1/u1 are one byte
    ptx = (tmp_path / "k.ptx").read_text()
    assert ptx.count(".param .b8 ") + ptx.count(".param .u8 ") + ptx.count(".param .s8 ") >= 4


def test_constexpr_kinds_hints_and_one(tmp_path):
    proc = tool([f"--kernel_path={KERNELS / 'cast.py'}", "--kernel_name=cast_kernel",
                 "--signature=*fp32, *fp16, i32, i32, i64:1, BLOCK, OUT_DTYPE, 0.5",
                 "--hints=x_ptr:16, out_ptr:16 N:16", "--constexprs=OUT_DTYPE=tl.float16,BLOCK=64",
                 "--grid=M, cdiv(N, 64) * stride", "--num_warps=2", "--num_stages=1",
                 "--target=cuda:90", "--symbol=cast_sm90", *out_flags(tmp_path, ["json", "ttir"])])
    assert_ok(proc)
    meta = json.loads((tmp_path / "k.json").read_text())
    args = {a["name"]: a for a in meta["args"]}
    assert args["x_ptr"]["hint"] == 16 and args["out_ptr"]["hint"] == 16
    assert args["N"]["hint"] == 16 and args["M"]["hint"] is None
    assert args["stride"] == {"name": "stride", "type": {"kind": "scalar", "name": "i64"},
                              "ctype": "int64_t", "hint": 1}
    assert args["OUT_DTYPE"] == {"name": "OUT_DTYPE", "type": {"kind": "constexpr"},
                                 "value": "tl.float16", "value_repr": "tl.float16"}
    assert args["SCALE"]["value"] == 0.5
    assert meta["constexprs"] == {"BLOCK": "64", "OUT_DTYPE": "tl.float16", "SCALE": "0.5"}
    assert list(meta["constexprs"]) == ["BLOCK", "OUT_DTYPE", "SCALE"]  # declaration order
    assert meta["grid"] == ["M", "cdiv(N, 64) * stride", "1"]
    assert meta["grid_c"][1] == "trt_grid_mul(trt_grid_cdiv((int64_t)N, (int64_t)64), (int64_t)1)"
    # stride is specialised away: the kernel has 4 runtime parameters (+2 scratch pointers)
    ttir = (tmp_path / "k.ttir").read_text()
    assert "%stride" not in ttir and "%N: i32 {tt.divisibility = 16" in ttir


def test_helper_module_needs_import_path(tmp_path):
    base = [f"--kernel_path={KERNELS / 'uses_helper.py'}", "--kernel_name=twice_kernel",
            "--signature=*fp32, *fp32, i32, 128", "--grid=cdiv(n, 128)", "--num_warps=4",
            "--num_stages=1", "--target=cuda:80", "--symbol=twice_sm80",
            *out_flags(tmp_path, ["json"])]
    proc = tool(base)
    assert proc.returncode == 1 and "No module named 'triton_aot_test_helpers'" in proc.stderr
    assert "--import_path" in proc.stderr
    proc = tool(base + ["--import_path=helper_root"], cwd=KERNELS)
    assert_ok(proc)
    assert json.loads((tmp_path / "k.json").read_text())["kernel_name"] == "twice_kernel"


# ----------------------------------------------------------------------------- errors

BASE = ["--num_warps=4", "--num_stages=3", "--target=cuda:80", "--symbol=sym"]


def add_args(sig="*fp32, *fp32, *fp32, i32, 128", grid="cdiv(n, 128)", extra=()):
    return [f"--kernel_path={KERNELS / 'add.py'}", "--kernel_name=add_kernel",
            f"--signature={sig}", f"--grid={grid}", *BASE, *extra]


def ker_args(file, name, sig, extra=()):
    return [f"--kernel_path={KERNELS / file}", f"--kernel_name={name}", f"--signature={sig}",
            "--grid=1", *BASE, *extra]


ERROR_CASES = {
    "unknown_kernel": (ker_args("add.py", "add_kernl", "*fp32"),
                       ["--kernel_name", "'add_kernl' is not defined in add.py",
                        "functions there are: add_kernel"]),
    "not_a_kernel": (ker_args("compile_error.py", "not_a_kernel", "*fp32"),
                     ["is not a @triton.jit function", "nested_error_kernel, not_pow2_kernel"]),
    "wrong_count": (add_args(sig="*fp32, *fp32, *fp32, i32"),
                    ["--signature has 4 entries",
                     "(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr)",
                     "the omitted 'BLOCK' is a tl.constexpr without a default"]),
    "unknown_type": (add_args(sig="*fp32, *fp32, *fp32, int33, 128"),
                     ["entry 4", "unknown type 'int33'"]),
    "unknown_pointer_type": (add_args(sig="*fp32, *fp23, *fp32, i32, 128"),
                             ["entry 2", "unknown pointer element type 'fp23'"]),
    "hint_on_float": (ker_args("scale.py", "scale_kernel", "*fp32, *fp32, fp32:16, i32, 64"),
                      ["entry 3", "fp32 cannot take a hint"]),
    "hint_value": (add_args(sig="*fp32:8, *fp32, *fp32, i32, 128"),
                   ["entry 1", "hint :8 is not supported"]),
    "hint_flag_on_float": (ker_args("scale.py", "scale_kernel", "*fp32, *fp32, fp32, i32, 64",
                                    ["--hints=alpha:16"]), ["--hints alpha:16", "fp32"]),
    "value_for_runtime_arg": (add_args(sig="*fp32, *fp32, *fp32, 7, 128"),
                              ["parameter 'n'", "'n' is not tl.constexpr"]),
    "type_for_constexpr": (add_args(sig="*fp32, *fp32, *fp32, i32, i32"),
                           ["parameter 'BLOCK'", "'BLOCK' is tl.constexpr"]),
    "constexprs_unknown": (add_args(sig="*fp32, *fp32, *fp32, i32, BLOCK",
                                    extra=["--constexprs=BLOCK=64,BLOK=3"]),
                           ["--constexprs: 'BLOK' is not a parameter of 'add_kernel'"]),
    "constexprs_non_constexpr": (add_args(extra=["--constexprs=n=3"]),
                                 ["--constexprs: 'n' is not tl.constexpr"]),
    "identifier_without_value": (add_args(sig="*fp32, *fp32, *fp32, i32, BLOCK"),
                                 ["BLOCK has no value", "--constexprs=BLOCK=VALUE"]),
    "bad_target_90a": (add_args()[:-4] + ["--num_warps=4", "--num_stages=3", "--target=cuda:90a",
                                          "--symbol=s"], ["--target", "write cuda:90"]),
    "bad_target_form": (add_args()[:-4] + ["--num_warps=4", "--num_stages=3",
                                           "--target=sm_90", "--symbol=s"],
                        ["--target: 'sm_90' is not a CUDA target"]),
    "bad_target_old": (add_args()[:-4] + ["--num_warps=4", "--num_stages=3",
                                          "--target=cuda:60", "--symbol=s"],
                       ["--target", "no supported triton compiles for sm_60", "use cuda:70 or newer"]),
    "bad_target_unknown": (add_args()[:-4] + ["--num_warps=4", "--num_stages=3",
                                              "--target=cuda:99", "--symbol=s"],
                           ["--target: 'cuda:99'", "cannot compile for sm_99", "cuda:90"]),
    "import_fails": (ker_args("import_error.py", "never_kernel", "*fp32"),
                     ["--kernel_path: importing import_error.py failed", "ModuleNotFoundError",
                      "import_error.py:4"]),
    "missing_kernel_file": (ker_args("nope.py", "k", "*fp32"),
                            ["--kernel_path", "nope.py' is not a file"]),
    "compile_error": (ker_args("compile_error.py", "not_pow2_kernel", "*fp32, i32"),
                      ["compile_error.py:8:", "arange's range must be a power of 2",
                       "tl.arange(0, 100)"]),
    "nested_compile_error": (ker_args("compile_error.py", "nested_error_kernel", "*fp32, i32"),
                             ["compile_error.py:14:", "undefined_name is not defined"]),
    "grid_unknown_name": (add_args(grid="cdiv(m, 128)"), ["--grid", "unknown name 'm'"]),
    "grid_constexpr": (add_args(grid="cdiv(n, BLOCK)"), ["--grid", "'BLOCK' is a tl.constexpr"]),
    "grid_pointer": (add_args(grid="x_ptr"), ["--grid", "'x_ptr' is a pointer argument"]),
    "grid_call": (add_args(grid="pow(n, 1)"), ["--grid", "function 'pow' is not allowed"]),
    "grid_injection": (add_args(grid="n); abort(); (1"), ["--grid", "character ';'"]),
    "grid_too_many": (add_args(grid="1,1,1,1"), ["--grid has 4 entries"]),
    "missing_flags": ([f"--kernel_path={KERNELS / 'add.py'}", "--out_json=x.json"],
                      # num_warps and num_stages default to upstream compile.py's 1 and 3
                      ["missing required flag(s): --kernel_name, --signature, --grid, "
                       "--target, --symbol"]),
    "unknown_flag": (add_args(extra=["--out_jsn=x"]), ["Unknown command line flag 'out_jsn'"]),
    "positional": (add_args(extra=["stray"]), ["unexpected positional argument 'stray'"]),
    "no_outputs": (None, ["no output requested"]),
    "bad_symbol": (add_args()[:-1] + ["--symbol=1abc"], ["--symbol: '1abc' is not a valid C"]),
    "num_warps": (add_args(extra=["--num_warps=3"]), ["--num_warps: 3 is not a power of two"]),
    "num_ctas_sm80": (add_args(extra=["--num_ctas=2"]), ["--num_ctas", "needs sm_90"]),
    "algo_index_negative": (add_args(extra=["--algo_index=-1"]), ["algo_index"]),
    "param_file_missing": (["@does_not_exist.txt"], ["cannot read param file"]),
    "template_dir_missing": (add_args(extra=[f"--out_c={KERNELS}/never.c",
                                             "--template_dir=no_such_dir"]),
                             ["--out_c/--out_h: C generation failed", "no_such_dir"]),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_in_process(case, tmp_path):
    argv, expected = ERROR_CASES[case]
    out = tmp_path / "x.json"
    if argv is None:
        argv = add_args()
    elif "--out_json=x.json" in argv:
        argv = [a if a != "--out_json=x.json" else f"--out_json={out}" for a in argv]
    else:
        argv = argv + [f"--out_json={out}"]
    err = io.StringIO()
    assert run_command_line(argv, err) == 1
    message = err.getvalue()
    assert message.startswith("error: ") and message.count("error: ") == 1, message
    assert "Traceback" not in message
    for text in expected:
        assert text in message, message
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("case", ["unknown_kernel", "compile_error", "import_fails",
                                  "missing_flags"])
def test_errors_as_process(case, tmp_path):
    argv, expected = ERROR_CASES[case]
    argv = [a for a in argv if not a.startswith("--out_json")] + [f"--out_json={tmp_path}/x.json"]
    proc = tool(argv)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    for text in expected:
        assert text in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_verbose_shows_traceback(tmp_path):
    argv, _ = ERROR_CASES["unknown_kernel"]
    err = io.StringIO()
    assert run_command_line(argv + ["--verbose", f"--out_json={tmp_path}/x.json"], err) == 1
    assert "Traceback" in err.getvalue() and "error: --kernel_name" in err.getvalue()


def test_kernel_file_shadowing_a_module(tmp_path):
    shutil.copy(KERNELS / "add.py", tmp_path / "json.py")
    err = io.StringIO()
    argv = add_args() + [f"--out_json={tmp_path}/x.json"]
    argv[0] = f"--kernel_path={tmp_path / 'json.py'}"
    assert run_command_line(argv, err) == 1
    assert "shadows the Python module 'json'" in err.getvalue()


def test_help():
    proc = tool(["--help"])
    assert proc.returncode == 0 and "--kernel_path" in proc.stdout and "--out_sass" in proc.stdout


# ----------------------------------------------------------------------------- kernel loading


def test_package_kernel_with_relative_import(tmp_path):
    args = [f"--kernel_path={KERNELS / 'pkg_root' / 'aot_test_pkg' / 'relative_kernel.py'}",
            "--kernel_name=relative_kernel", "--signature=*i32, i32, 64", "--grid=cdiv(n, 64)",
            "--num_warps=2", "--num_stages=1", "--target=cuda:80", "--symbol=rel",
            f"--out_json={tmp_path}/x.json"]
    err = io.StringIO()
    assert run_command_line(args, err) == 1
    assert "attempted relative import" in err.getvalue()
    err = io.StringIO()
    assert run_command_line(args + [f"--import_path={KERNELS / 'pkg_root'}"], err) == 0, \
        err.getvalue()
    # the package's modules stay imported under their own names: a second load executes none
    assert sys.modules["aot_test_pkg.relative_kernel"].__package__ == "aot_test_pkg"


def test_kernel_in_a_deps_package_is_imported_once(tmp_path):
    """A srcs file under a dep's `imports` root gets the name its package gives it: with the
    roots `.` and `lib` (as the rule passes them), lib/mypkg/kern.py is `mypkg.kern`, not
    `lib.mypkg.kern` as well (module-level side effects, such as registering a torch op, would
    run twice)."""
    from triton_aot.compile.kernel_loader import load_kernel
    pkg = tmp_path / "lib" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from mypkg import kern  # noqa: F401\n")
    (pkg / "kern.py").write_text(
        "import sys\n"
        "sys.__dict__.setdefault('_rules_triton_kern_names', []).append(__name__)\n"
        + (KERNELS / "add.py").read_text())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with load_kernel("lib/mypkg/kern.py", "add_kernel", [".", "lib"]) as kernel:
            assert kernel.name == "add_kernel"
            assert sys._rules_triton_kern_names == ["mypkg.kern"]
        # loaded again in the same process (the worker's child of this kernel): not executed
        with load_kernel("lib/mypkg/kern.py", "add_kernel", [".", "lib"]) as kernel:
            assert sys._rules_triton_kern_names == ["mypkg.kern"]
    finally:
        os.chdir(cwd)
        sys.__dict__.pop("_rules_triton_kern_names", None)


def test_kernel_named_like_its_package(tmp_path):
    """kernels/kernels.py with --import_path=. : the kernel's own folder must not shadow the
    package `kernels` (it used to fail with "No module named 'kernels.kernels'")."""
    pkg = tmp_path / "kernels"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    shutil.copy(KERNELS / "add.py", pkg / "kernels.py")
    proc = tool(["--kernel_path=kernels/kernels.py", "--import_path=.", *ADD_FLAGS,
                 "--target=cuda:80", f"--out_json={tmp_path / 'k.json'}"], cwd=tmp_path)
    assert_ok(proc)
    assert json.loads((tmp_path / "k.json").read_text())["kernel_name"] == "add_kernel"


def test_loader_keeps_modules_found_through_symlinked_roots(tmp_path):
    """Bazel sandboxes are symlink trees: a second load through them finds the kernel module
    (and its helper) already imported, and executes neither again; sys.path is restored."""
    from triton_aot.compile.kernel_loader import load_kernel
    for sub in ("k", "h"):
        (tmp_path / sub).mkdir()
    (tmp_path / "k" / "uses_helper.py").symlink_to(KERNELS / "uses_helper.py")
    (tmp_path / "h" / "triton_aot_test_helpers.py").symlink_to(
        KERNELS / "helper_root" / "triton_aot_test_helpers.py")
    path_before = list(sys.path)
    with load_kernel(str(tmp_path / "k" / "uses_helper.py"), "twice_kernel",
                     [str(tmp_path / "h")]) as kernel:
        assert [p.name for p in kernel.params] == ["x_ptr", "out_ptr", "n", "BLOCK"]
        assert [p.is_constexpr for p in kernel.params] == [False, False, False, True]
        assert "triton_aot_test_helpers" in sys.modules and "uses_helper" in sys.modules
        first = sys.modules["uses_helper"], sys.modules["triton_aot_test_helpers"]
    with load_kernel(str(tmp_path / "k" / "uses_helper.py"), "twice_kernel",
                     [str(tmp_path / "h")]) as kernel:
        assert (sys.modules["uses_helper"], sys.modules["triton_aot_test_helpers"]) == first
    assert sys.path == path_before
    assert not list(tmp_path.rglob("__pycache__"))


def test_gluon_kernel(tmp_path):
    base = [f"--kernel_path={KERNELS / 'gluon_copy.py'}", "--kernel_name=gluon_copy_kernel",
            "--signature=*fp32:16, *fp32:16, i32, 128", "--grid=cdiv(n, 128)", "--num_warps=4",
            "--num_stages=1", "--target=cuda:90", "--symbol=gcopy"]
    err = io.StringIO()
    assert run_command_line(base + [f"--out_json={tmp_path}/g.json"], err) == 0, err.getvalue()
    assert json.loads((tmp_path / "g.json").read_text())["kernel_name"] == "gluon_copy_kernel"
    err = io.StringIO()
    assert run_command_line(base + [f"--out_ttir={tmp_path}/g.ttir"], err) == 1
    assert "--out_ttir: Gluon kernels have no TTIR stage" in err.getvalue()


# ----------------------------------------------------------------------------- units


def test_parse_target():
    from triton_aot.compile.triton_adapter import Target, parse_target
    assert parse_target("cuda:80") == Target("cuda", 80, 32)
    assert parse_target(" cuda:90:32 ") == Target("cuda", 90, 32)  # upstream spelling
    assert parse_target("cuda:120") == Target("cuda", 120, 32)
    assert parse_target("hip:gfx942") == Target("hip", "gfx942", 64)  # AMD targets
    for bad in ("cuda:90:64", "cuda", "cuda:", "cuda:9", "90", "cuda:90a"):
        with pytest.raises(triton_aot.core.errors.UserError, match="--target"):
            parse_target(bad)


def test_check_options():
    from triton_aot.compile.triton_adapter import CompileOptions, Target, check_options
    sm90, sm80 = Target("cuda", 90, 32), Target("cuda", 80, 32)
    check_options(CompileOptions(4, 3, 2, True, True), sm90)
    for opts, target, flag in [(CompileOptions(0, 3), sm90, "--num_warps"),
                               (CompileOptions(64, 3), sm90, "--num_warps"),
                               (CompileOptions(4, 0), sm90, "--num_stages"),
                               (CompileOptions(4, 3, 3), sm90, "--num_ctas"),
                               (CompileOptions(4, 3, 2), sm80, "--num_ctas"),
                               (CompileOptions(4, 3, 1, False, True), sm80, "--launch_pdl")]:
        with pytest.raises(triton_aot.core.errors.UserError, match=flag):
            check_options(opts, target)


def test_hermetic_env_sanitises_and_restores(monkeypatch):
    import tempfile
    from triton_aot.compile.triton_adapter import hermetic_env
    monkeypatch.setenv("TRITON_OVERRIDE_ARCH", "sm75")
    monkeypatch.setenv("PTXAS_OPTIONS", "-O0")
    monkeypatch.setenv("MLIR_ENABLE_DUMP", "1")
    before = dict(os.environ)
    with hermetic_env() as scratch:
        assert "TRITON_OVERRIDE_ARCH" not in os.environ and "PTXAS_OPTIONS" not in os.environ
        assert "MLIR_ENABLE_DUMP" not in os.environ
        assert os.environ["TRITON_DISABLE_LINE_INFO"] == "1"
        for key in ("TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR",
                    "HOME", "TMPDIR"):
            assert os.environ[key].startswith(str(scratch))
        assert tempfile.gettempdir().startswith(str(scratch))
    assert dict(os.environ) == before
    assert not scratch.exists()


def test_metadata_round_trip(add80):
    from triton_aot.contract import record_reader
    text = (add80 / "k.json").read_text()
    meta = record_reader.read_json(text)
    assert meta.to_json() == text
    assert [a.name for a in meta.runtime_args] == ["x_ptr", "y_ptr", "out_ptr", "n"]
    with pytest.raises(triton_aot.core.errors.UserError, match="is not 'rules_triton.variant.v3'"):
        record_reader.read_json('{"format": "other"}')
    with pytest.raises(triton_aot.core.errors.UserError, match="not valid JSON"):
        record_reader.read_json("{")


def test_param_file_formats(tmp_path):
    from triton_aot.core.cli import expand_param_files
    multiline = tmp_path / "m.params"
    multiline.write_text("--signature=*fp32:16, i32\n--constexprs=ACT='relu'\n\n--grid=n\n")
    shell = tmp_path / "s.params"
    shell.write_text("'--signature=*fp32:16, i32'\n'--constexprs=ACT='\\''relu'\\'''\n--grid=n\n")
    expected = ["--signature=*fp32:16, i32", "--constexprs=ACT='relu'", "--grid=n"]
    assert expand_param_files(["-x", f"@{multiline}"]) == ["-x"] + expected
    assert expand_param_files([f"@{shell}"]) == expected
    bad = tmp_path / "b.params"
    bad.write_text("'unterminated\n")
    with pytest.raises(triton_aot.core.errors.UserError, match="cannot unquote"):
        expand_param_files([f"@{bad}"])


def test_embed_ptx_and_export_symbols(tmp_path):
    argv = [f"--kernel_path={KERNELS / 'add.py'}", *ADD_FLAGS, "--target=cuda:80",
            "--embed_ptx", "--export_symbols", *out_flags(tmp_path, ["json", "h", "c"])]
    err = io.StringIO()
    assert run_command_line(argv, err) == 0, err.getvalue()
    meta = json.loads((tmp_path / "k.json").read_text())
    assert meta["ptx_embedded"] is True and meta["export_symbols"] is True
    assert list(meta)[-1] == "export_symbols"
    assert 'visibility("hidden")' not in (tmp_path / "k.h").read_text()
    assert "add_a0_sm80_ptx" in (tmp_path / "k.c").read_text()


# ----------------------------------------------------------------------------- hip (AMD)


def test_hip_variant_checked_against_its_hsaco(tmp_path, monkeypatch):
    """A hip compile writes the hsaco and a record; the hsaco's kernel descriptor agrees with
    the launcher (kernarg bytes) and the LDS (static + the launch's dynamic) fits the arch."""
    from triton_aot.compile import hsaco
    argv = [f"--kernel_path={KERNELS / 'add.py'}", *ADD_FLAGS, "--target=hip:gfx942",
            f"--out_json={tmp_path / 'k.json'}", f"--out_hsaco={tmp_path / 'k.hsaco'}"]
    err = io.StringIO()
    assert run_command_line(argv, err) == 0, err.getvalue()
    meta = json.loads((tmp_path / "k.json").read_text())
    assert meta["target"] == {"backend": "hip", "arch": "gfx942", "warp_size": 64}
    kd = hsaco.kernel_descriptors((tmp_path / "k.hsaco").read_bytes())[meta["kernel_name"]]
    assert kd.kernarg_size == hsaco.kernarg_bytes(
        [parse_type(t, "t") for t in ["*fp32", "*fp32", "*fp32", "i32"]])
    assert kd.group_segment_fixed_size + meta["shared"] <= hsaco.lds_bytes("gfx942")
    # An arch with less LDS than the kernel needs is refused, naming the sizes and the fix
    # (a limit below the add kernel's need, whatever it is: -1).
    monkeypatch.setattr(hsaco, "_LDS_BYTES", {"gfx942": -1})
    err = io.StringIO()
    argv_small = [a for a in argv if not a.startswith("--out_")] + [
        f"--out_json={tmp_path / 'k2.json'}"]
    assert run_command_line(argv_small, err) == 1
    assert "bytes of LDS" in err.getvalue() and "fewer stages" in err.getvalue(), err.getvalue()


# ----------------------------------------------------------------------------- launch args, maxnreg


def test_launch_args_min_max_num_sms_and_maxnreg(tmp_path):
    """--launch_args and NUM_SMS reach the record's grid and the C API, never the kernel;
    --maxnreg reaches Triton (the PTX's .maxnreg) and the record."""
    flags = [f for f in ADD_FLAGS if not f.startswith("--grid")]
    argv = [f"--kernel_path={KERNELS / 'add.py'}", *flags, "--target=cuda:90",
            "--grid=min(NUM_SMS * 2, cdiv(n_rows, 4)), max(tiles, 1)",
            "--launch_args=n_rows: i32, tiles: i64", "--maxnreg=128",
            *out_flags(tmp_path, ["json", "ptx", "c", "h"])]
    err = io.StringIO()
    assert run_command_line(argv, err) == 0, err.getvalue()
    meta = json.loads((tmp_path / "k.json").read_text())
    assert meta["launch_args"] == [
        {"name": "n_rows", "type": {"kind": "scalar", "name": "i32"}, "ctype": "int32_t"},
        {"name": "tiles", "type": {"kind": "scalar", "name": "i64"}, "ctype": "int64_t"}]
    assert meta["maxnreg"] == 128
    assert meta["grid"] == ["min(NUM_SMS * 2, cdiv(n_rows, 4))", "max(tiles, 1)", "1"]
    assert meta["grid_c"][0] == ("trt_grid_min(trt_grid_mul(trt_attr_num_sms, (int64_t)2), "
                                 "trt_grid_cdiv((int64_t)n_rows, (int64_t)4))")
    assert [a["name"] for a in meta["args"]] == ["x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"]
    assert ".maxnreg 128" in (tmp_path / "k.ptx").read_text()
    h = (tmp_path / "k.h").read_text()
    assert "int32_t n, int32_t n_rows, int64_t tiles);" in h
    c = (tmp_path / "k.c").read_text()
    assert "trt_device_attribute(&trt_driver_table, &trt_context_key_, TRT_ATTR_NUM_SMS" in c
    # the kernel's parameters: the three pointers, n and the two scratch pointers
    assert "void *trt_params[6] = {&x_ptr, &y_ptr, &out_ptr, &n, " in c


@pytest.mark.parametrize("extra,message", [
    (["--launch_args=n: i32"], "--launch_args: 'n' is already a parameter of the kernel"),
    (["--launch_args=rows: fp32"], "launch arguments are integers"),
    (["--maxnreg=8"], "--maxnreg: 8 is not a register count from 16 to 255"),
    (["--grid=cdiv(n_rows, 4)"], "a grid value the kernel does not take must be declared as a "
     "launch argument"),
])
def test_launch_arg_and_maxnreg_errors(tmp_path, extra, message):
    flags = [f for f in ADD_FLAGS if not (f.startswith("--grid") and any(
        e.startswith("--grid") for e in extra))]
    argv = [f"--kernel_path={KERNELS / 'add.py'}", *flags, "--target=cuda:90", *extra,
            *out_flags(tmp_path, ["json"])]
    err = io.StringIO()
    assert run_command_line(argv, err) == 1
    assert message in err.getvalue(), err.getvalue()


@pytest.mark.parametrize("fusion", [True, False])
def test_enable_fp_fusion_decides_the_fma(tmp_path, fusion):
    """--noenable_fp_fusion compiles a * b + c as a launch with enable_fp_fusion=False does: a
    multiply and an add in the PTX and the SASS, no fma; the default contracts them into one.
    The record says so only when off (records of fused algos are as before)."""
    argv = [f"--kernel_path={KERNELS / 'muladd.py'}", "--kernel_name=muladd_kernel",
            "--signature=*fp32:16, *fp32:16, *fp32:16, *fp32:16, i32, 256",
            "--grid=cdiv(n, 256)", "--num_warps=4", "--symbol=muladd", "--target=cuda:90",
            *([] if fusion else ["--noenable_fp_fusion"]),
            *out_flags(tmp_path, ["json", "ptx", "sass"])]
    err = io.StringIO()
    assert run_command_line(argv, err) == 0, err.getvalue()
    ptx, sass = (tmp_path / "k.ptx").read_text(), (tmp_path / "k.sass").read_text()
    assert ("fma.rn.f32" in ptx) == fusion and ("mul.rn.f32" in ptx) != fusion, ptx
    assert ("FFMA" in sass) == fusion and ("FMUL" in sass) != fusion, sass
    text = (tmp_path / "k.json").read_text()
    meta = json.loads(text)
    assert meta.get("enable_fp_fusion", True) == fusion and ("enable_fp_fusion" in meta) != fusion
    # the link reads it back: another algo than the fused one of the same constexprs
    from triton_aot.contract import record_reader, tuning_table
    record = record_reader.read_json(text)
    assert record.to_json() == text and record.launch.enable_fp_fusion == fusion
    assert ("enable_fp_fusion=0" in record.algo_info()) != fusion
    fused = tuning_table.fingerprint(record.constexprs, 4, 3)
    assert (tuning_table.record_fingerprint(record) == fused) == fusion


def test_algo_targets_recorded(tmp_path):
    argv = [f"--kernel_path={KERNELS / 'add.py'}", *ADD_FLAGS, "--target=cuda:90",
            "--algo_targets=cuda:90, cuda:100", *out_flags(tmp_path, ["json"])]
    err = io.StringIO()
    assert run_command_line(argv, err) == 0, err.getvalue()
    meta = json.loads((tmp_path / "k.json").read_text())
    assert meta["algo_targets"] == [{"backend": "cuda", "arch": a, "warp_size": 32}
                                    for a in (90, 100)]
    argv[-2] = "--algo_targets=cuda:90,cuda:90"
    err = io.StringIO()
    assert run_command_line(argv, err) == 1
    assert "--algo_targets: cuda:90 is listed twice" in err.getvalue()
