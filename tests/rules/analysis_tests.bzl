"""Analysis tests of triton_kernel_library and triton_toolchain (bazel_skylib analysistest)."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("//rules:defs.bzl", "triton_algo", "triton_kernel_library")

def _compile_actions(env):
    return [a for a in analysistest.target_actions(env) if a.mnemonic == "TritonCompile"]

def _flag_values(action, flag):
    prefix = "--" + flag + "="
    return [arg[len(prefix):] for arg in action.argv if arg.startswith(prefix)]

# --- action counts and mnemonics -------------------------------------------------------------

def _actions_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = analysistest.target_actions(env)
    counts = {}
    for action in actions:
        counts[action.mnemonic] = counts.get(action.mnemonic, 0) + 1
    asserts.equals(env, 8, counts.get("TritonCompile", 0), "2 algos x 2 specializations x 2 targets")
    asserts.equals(env, 1, counts.get("TritonLink", 0))
    asserts.equals(env, 8, counts.get("TritonSass", 0))
    asserts.equals(env, 9, counts.get("CppCompile", 0), "8 variants + 1 dispatcher")
    return analysistest.end(env)

actions_test = analysistest.make(_actions_test_impl)

# --- argv: target, symbol, algo index, hints, constexprs, grid ----------------------------------

def _argv_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = _compile_actions(env)
    symbols = sorted([_flag_values(a, "symbol")[0] for a in compiles])
    asserts.equals(env, sorted([
        "add_a0_s0_sm80",
        "add_a0_s0_sm90",
        "add_a0_s1_sm80",
        "add_a0_s1_sm90",
        "add_a1_s0_sm80",
        "add_a1_s0_sm90",
        "add_a1_s1_sm80",
        "add_a1_s1_sm90",
    ]), symbols)
    for action in compiles:
        symbol = _flag_values(action, "symbol")[0]
        target = _flag_values(action, "target")[0]
        asserts.true(env, symbol.endswith("_sm" + target.split(":")[1]), "symbol {} matches target {}".format(symbol, target))
        algo = _flag_values(action, "algo_index")[0]
        asserts.true(env, symbol.startswith("add_a" + algo + "_"), "algo index in " + symbol)
        block = "1024" if algo == "0" else "256"
        asserts.equals(env, ["BLOCK=" + block], _flag_values(action, "constexprs"))
        asserts.equals(env, ["cdiv(n, {}), 1, 1".format(block)], _flag_values(action, "grid"))
        if "_s0_" in symbol:
            asserts.equals(env, ["n:16 out_ptr:16 x_ptr:16 y_ptr:16"], _flag_values(action, "hints"))
        else:
            asserts.equals(env, [], _flag_values(action, "hints"))
        asserts.true(env, "triton_aot.compile" in action.argv, "runs the compile tool")
    return analysistest.end(env)

argv_test = analysistest.make(_argv_test_impl)

# --- a fixed, hermetic environment -----------------------------------------------------------

def _env_test_impl(ctx):
    env = analysistest.begin(ctx)
    for action in analysistest.target_actions(env):
        if action.mnemonic not in ("TritonCompile", "TritonLink", "TritonSass"):
            continue
        asserts.equals(env, "0", action.env.get("PYTHONHASHSEED"), action.mnemonic + " PYTHONHASHSEED")
        asserts.equals(env, "1", action.env.get("PYTHONNOUSERSITE"), action.mnemonic + " PYTHONNOUSERSITE")
        asserts.false(env, "HOME" in action.env, action.mnemonic + " must not see HOME")
        asserts.false(env, "PATH" in action.env, action.mnemonic + " must not see the user's PATH")
        asserts.false(env, "CUDA_VISIBLE_DEVICES" in action.env)
    return analysistest.end(env)

env_test = analysistest.make(_env_test_impl)

# --- CcInfo and output groups ------------------------------------------------------------------

def _cc_info_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    headers = [h.basename for h in target[CcInfo].compilation_context.headers.to_list()]
    asserts.true(env, "add.h" in headers, "public header in CcInfo: {}".format(headers))
    asserts.true(env, "cuda.h" in headers, "cuda.h travels with the library")
    groups = target[OutputGroupInfo]
    for group, ext in [("ptx", "ptx"), ("ttir", "ttir"), ("ttgir", "ttgir"), ("llir", "llir"), ("cubin", "cubin"), ("sass", "sass"), ("metadata", "json")]:
        files = getattr(groups, group).to_list()
        asserts.equals(env, 8, len(files), "output group " + group)
        for f in files:
            asserts.equals(env, ext, f.extension)
    libs = []
    for linker_input in target[CcInfo].linking_context.linker_inputs.to_list():
        libs.extend(linker_input.libraries)
        asserts.true(env, "-ldl" in linker_input.user_link_flags or linker_input.libraries == [], "links libdl for dlopen")
    asserts.true(env, libs != [], "has a static library")
    return analysistest.end(env)

cc_info_test = analysistest.make(_cc_info_test_impl)

# --- the targets flag ----------------------------------------------------------------------------

def _targets_flag_test_impl(ctx):
    env = analysistest.begin(ctx)
    targets = sorted({_flag_values(a, "target")[0]: True for a in _compile_actions(env)}.keys())
    asserts.equals(env, ["cuda:80", "cuda:86"], targets)
    return analysistest.end(env)

targets_flag_test = analysistest.make(
    _targets_flag_test_impl,
    config_settings = {str(Label("//:targets")): ["cuda:80", "cuda:86"]},
)

# --- a toolchain built from a pip hub's py_library (rules_python mode) -------------------------

def _hub_toolchain_test_impl(ctx):
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[platform_common.ToolchainInfo].triton
    # A hermetic interpreter is a File in the build, and so an input of every action.
    asserts.equals(env, "triton_stub.py", info.interpreter.basename)
    asserts.true(env, [p for p in info.python_path if p.endswith("fake_pypi_triton")] != [], "hub import root on PYTHONPATH: {}".format(info.python_path))
    inputs = [f.basename for f in info.tool_inputs.to_list()]
    asserts.true(env, "triton_stub.py" in inputs, "hub sources are action inputs")
    asserts.true(env, "variant.c.tmpl" in inputs, "templates are action inputs")
    return analysistest.end(env)

hub_toolchain_test = analysistest.make(_hub_toolchain_test_impl)

# --- failures: each names the attribute -----------------------------------------------------------

def _make_failure_test(message):
    def _impl(ctx):
        env = analysistest.begin(ctx)
        asserts.expect_failure(env, message)
        return analysistest.end(env)

    return analysistest.make(_impl, expect_failure = True)

bad_target_test = _make_failure_test("attribute 'targets': 'sm_90' is not a target")
old_target_test = _make_failure_test("attribute 'targets': 'cuda:70': Triton 3.6 supports sm_75 and newer")
dup_target_test = _make_failure_test("attribute 'targets': 'cuda:90' is listed twice")
bad_hint_test = _make_failure_test("attribute 'specializations': entry 0 ('x_ptr:8'): 'x_ptr:8' is not a hint")
dup_spec_test = _make_failure_test("attribute 'specializations': entries 0 and 1 give the same hints")
missing_constexpr_test = _make_failure_test("attribute 'algos': algos[0] does not set constexpr 'BLOCK'")
extra_constexpr_test = _make_failure_test("attribute 'algos': algos[0] sets 'BLOCKK', which is not a constexpr name")
bad_grid_placeholder_test = _make_failure_test("has a {NAME} placeholder that is not one of this algo's constexprs")
bad_c_name_test = _make_failure_test("attribute 'c_name': 'my-kernel' is not a C identifier")
dup_algo_test = _make_failure_test("attribute 'algos': algos[0] and algos[1] are the same algo")
bad_warps_test = _make_failure_test("attribute 'algos': algos[0]: num_warps must be a power of two, got 3")
no_grid_test = _make_failure_test("attribute 'grid': no grid")
bad_algo_json_test = _make_failure_test("attribute 'algos': algos[0] is not a triton_algo(...) value")

_GOOD = dict(
    srcs = ["add_kernel.py"],
    kernel = "add_kernel",
    signature = "*fp32, *fp32, *fp32, i32, BLOCK",
    grid = "cdiv(n, {BLOCK}), 1, 1",
    tags = ["manual"],
)

def _library(name, **overrides):
    attrs = dict(_GOOD)
    attrs["algos"] = [triton_algo(constexprs = {"BLOCK": 1024})]
    attrs.update(overrides)
    triton_kernel_library(name = name, **attrs)

def analysis_test_suite(name):
    """Declares every analysis test; `name` is the test_suite."""
    tests = []

    for test_rule, subject in [
        (actions_test, ":add"),
        (argv_test, ":add"),
        (env_test, ":add"),
        (cc_info_test, ":add"),
        (targets_flag_test, ":add_default_targets"),
        (hub_toolchain_test, ":hub_toolchain"),
    ]:
        test_name = "{}_{}_{}".format(name, len(tests), subject.lstrip(":"))
        test_rule(name = test_name, target_under_test = subject)
        tests.append(test_name)

    failures = [
        (bad_target_test, dict(targets = ["sm_90"])),
        (old_target_test, dict(targets = ["cuda:70"])),
        (dup_target_test, dict(targets = ["cuda:90", "cuda:90"])),
        (bad_hint_test, dict(specializations = ["x_ptr:8"])),
        (dup_spec_test, dict(specializations = ["x_ptr:16 n:16", "n:16, x_ptr:16"])),
        (missing_constexpr_test, dict(algos = [triton_algo(num_warps = 4)])),
        (extra_constexpr_test, dict(algos = [triton_algo(constexprs = {"BLOCK": 1, "BLOCKK": 2})])),
        (bad_grid_placeholder_test, dict(grid = "cdiv(n, {BLOCK_M}), 1, 1")),
        (bad_c_name_test, dict(c_name = "my-kernel")),
        (dup_algo_test, dict(algos = [triton_algo(constexprs = {"BLOCK": 64}), triton_algo(constexprs = {"BLOCK": 64})])),
        (bad_warps_test, dict(algos = [triton_algo(constexprs = {"BLOCK": 64}, num_warps = 3)])),
        (no_grid_test, dict(grid = "")),
        (bad_algo_json_test, dict(algos = ["BLOCK=64"])),
    ]
    for i, (test_rule, overrides) in enumerate(failures):
        subject = "{}_bad_{}".format(name, i)
        _library(subject, **overrides)
        test_name = "{}_failure_{}".format(name, i)
        test_rule(name = test_name, target_under_test = ":" + subject)
        tests.append(test_name)

    native.test_suite(name = name, tests = tests)
