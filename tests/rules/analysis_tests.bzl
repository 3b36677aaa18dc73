"""Analysis tests of triton_kernel_library and triton_toolchain (bazel_skylib analysistest).

Inputs the rule must refuse are cases of the bad-input catalogue, tested in one place:
//tests/reliability:rule_failure_tests (tests/reliability/catalogue.py).
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("//rules:defs.bzl", "triton_algo", "triton_kernel_library")

# The targets table itself, to test the rule against every SM it lists.
# buildifier: disable=bzl-visibility
load("//rules/private/generated:targets.bzl", "ARCH_SPECIFIC_FROM", "CUDA_ARCHS")

# What every compile action writes, next to each other under _triton/<name>/<symbol>.<ext>.
_COMPILE_OUTPUTS = ["json", "cubin", "ptx", "ttir", "ttgir", "llir"]

def _compile_actions(env):
    return [a for a in analysistest.target_actions(env) if a.mnemonic == "TritonCompile"]

def _actions(env, mnemonic):
    return [a for a in analysistest.target_actions(env) if a.mnemonic == mnemonic]

def _flag_values(action, flag):
    prefix = "--" + flag + "="
    return [arg[len(prefix):] for arg in action.argv if arg.startswith(prefix)]

def _basenames(files):
    return sorted([f.basename for f in files])

# --- action counts and mnemonics -------------------------------------------------------------

def _tool_stages(action):
    """The stages of triton_aot (its subfolders) among an action's inputs."""
    stages = {}
    for f in action.inputs.to_list():
        parts = ("/" + f.short_path).split("/triton_aot/")
        if len(parts) == 2 and "/" in parts[1]:
            stages[parts[1].split("/")[0]] = True
    return stages

def _actions_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = analysistest.target_actions(env)
    counts = {}
    for action in actions:
        counts[action.mnemonic] = counts.get(action.mnemonic, 0) + 1
    asserts.equals(env, 8, counts.get("TritonCompile", 0), "2 algos x 2 specializations x 2 targets")
    asserts.equals(env, 1, counts.get("TritonImport", 0), "the kernel file is imported once first")
    asserts.equals(env, 1, counts.get("TritonLink", 0))

    # No variant compiles before the import check passed: an import failure is one error.
    check = _actions(env, "TritonImport")[0]
    params = check.outputs.to_list()
    asserts.equals(env, ["kernel_params.json"], _basenames(params))
    for action in _compile_actions(env):
        asserts.true(env, params[0] in action.inputs.to_list(), "TritonCompile waits for TritonImport")
        asserts.equals(env, ["//tests/rules:add"], _flag_values(action, "bazel_target"))
        asserts.equals(env, 1, len(_flag_values(action, "env_fingerprint")), "checks its environment")
    asserts.equals(env, 8, counts.get("TritonSass", 0))

    # The import check binds algo 0's signature: a signature that fits no variant is one error.
    algo0 = [a for a in _compile_actions(env) if _flag_values(a, "algo_index") == ["0"]][0]
    for flag in ("signature", "constexprs"):
        asserts.equals(env, _flag_values(algo0, flag), _flag_values(check, flag), "the import check's --" + flag)

    # The compile stage's actions take only the stages the compile tool imports: an edit to
    # triton_aot/tuning/ or triton_aot/torch/ re-runs none of them.
    for action in _compile_actions(env) + [check] + _actions(env, "TritonSass"):
        stages = _tool_stages(action)
        asserts.true(env, "compile" in stages, "the compile stage is an input of " + action.mnemonic)
        for stage in ("tuning", "torch"):
            asserts.false(env, stage in stages, "triton_aot/" + stage + " is no input of " + action.mnemonic)
    link = _actions(env, "TritonLink")[0]
    asserts.equals(env, ["contract", "core", "emit_c"], sorted(_tool_stages(link).keys()), "the link takes its stage and the ones it imports")

    # The library's one C file; the runtime is compiled once, by //runtime, not per library.
    asserts.equals(env, 1, counts.get("CppCompile", 0), "one translation unit per library")
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
        asserts.true(env, "triton_aot.compile.compile" in action.argv, "runs the compile tool")

        # The variant record and the images it names, side by side; no C from compile actions.
        prefix = "bazel-out/"
        for ext in _COMPILE_OUTPUTS:
            values = _flag_values(action, "out_" + ext)
            asserts.equals(env, 1, len(values), "--out_{} once in {}".format(ext, symbol))
            if values:
                asserts.true(env, values[0].startswith(prefix), values[0])
                asserts.true(env, values[0].endswith("/tests/rules/_triton/add/{}.{}".format(symbol, ext)), values[0])
        for flag in ("out_c", "out_h"):
            asserts.equals(env, [], _flag_values(action, flag), "compile actions write no C: --" + flag)
        asserts.equals(env, sorted([symbol + "." + ext for ext in _COMPILE_OUTPUTS]), _basenames(action.outputs.to_list()))
    return analysistest.end(env)

argv_test = analysistest.make(_argv_test_impl)

# --- link: every record and every image in, one C file and its header out -----------------------

def _link_test_impl(ctx):
    env = analysistest.begin(ctx)
    links = _actions(env, "TritonLink")
    asserts.equals(env, 1, len(links))
    link = links[0]
    inputs = [f for f in link.inputs.to_list() if "/_triton/add/" in f.path]
    for ext in ("json", "cubin", "ptx"):
        asserts.equals(env, 8, len([f for f in inputs if f.extension == ext]), "link inputs: 8 ." + ext)
    asserts.equals(env, ["add.c", "add.h", "add.library.json"], _basenames(link.outputs.to_list()))
    asserts.equals(env, ["add"], _flag_values(link, "name"))
    out_library = _flag_values(link, "out_library")
    asserts.true(env, len(out_library) == 1 and out_library[0].endswith("/tests/rules/add.library.json"), "--out_library: {}".format(out_library))
    out_c = _flag_values(link, "out_c")
    asserts.true(env, len(out_c) == 1 and out_c[0].endswith("/tests/rules/add.c"), "--out_c: {}".format(out_c))
    records = [arg for arg in link.argv if arg.endswith(".json") and not arg.startswith("--")]
    asserts.equals(env, 8, len(records), "every variant record on the command line")
    asserts.true(env, "triton_aot.emit_c.link" in link.argv, "runs the link tool")

    # The C++ compile takes exactly the link tool's C file.
    compiles = _actions(env, "CppCompile")
    asserts.equals(env, 1, len(compiles))
    sources = [f.basename for f in compiles[0].inputs.to_list() if f.extension == "c"]
    asserts.equals(env, ["add.c"], sources)
    return analysistest.end(env)

link_test = analysistest.make(_link_test_impl)

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
    asserts.true(env, "trt_runtime.h" in headers, "the runtime's header travels with the library")
    groups = target[OutputGroupInfo]
    for group, ext in [("ptx", "ptx"), ("ttir", "ttir"), ("ttgir", "ttgir"), ("llir", "llir"), ("cubin", "cubin"), ("sass", "sass"), ("metadata", "json")]:
        files = getattr(groups, group).to_list()
        asserts.equals(env, 8, len(files), "output group " + group)
        for f in files:
            asserts.equals(env, ext, f.extension)
    asserts.equals(env, ["add.c", "add.h"], _basenames(groups.c_sources.to_list()), "c_sources: the one C file and its header")

    # The library's own archive and the runtime's are both linked; -ldl -lpthread travel with
    # the runtime (the code that dlopens the driver), so every user of the library gets them.
    # The library's archive is alwayslink (libadd.lo): linked whole, so that two libraries of
    # one c_name fail the link on their c_name guard instead of one serving both.
    archives = {}
    always = {}
    for linker_input in target[CcInfo].linking_context.linker_inputs.to_list():
        for lib in linker_input.libraries:
            archive = lib.pic_static_library or lib.static_library
            if archive:
                archives[archive.basename] = linker_input.user_link_flags
                always[archive.basename] = lib.alwayslink
    asserts.true(env, "libadd.lo" in archives, "has a static library: {}".format(archives.keys()))
    asserts.true(env, always.get("libadd.lo", False), "the library is alwayslink")
    asserts.true(env, "libruntime.a" in archives, "links the runtime: {}".format(archives.keys()))
    runtime_flags = archives.get("libruntime.a", [])
    asserts.true(env, "-ldl" in runtime_flags, "links libdl for dlopen: {}".format(runtime_flags))
    asserts.true(env, "-lpthread" in runtime_flags, "links libpthread: {}".format(runtime_flags))
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

# --- archive mode: the environment as one archive input plus its launcher ---------------------------

def _archive_toolchain_test_impl(ctx):
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[platform_common.ToolchainInfo].triton

    # The launcher is the executable (a File: an input of every action), not the absolute path.
    asserts.equals(env, "fake_launcher.sh", info.interpreter.basename)
    asserts.equals(env, None, info.interpreter_path)
    inputs = [f.basename for f in info.tool_inputs.to_list()]
    for expected in ["fake_python_env.tar.gz", "fake_launcher.sh", "fingerprint.json", "variant.c.tmpl"]:
        asserts.true(env, expected in inputs, "{} is an input of every Triton action: {}".format(expected, inputs))
    return analysistest.end(env)

archive_toolchain_test = analysistest.make(_archive_toolchain_test_impl)

# --- every SM of the targets table is accepted; embed_ptx embeds the lowest portable one ---------

def _all_targets_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = _compile_actions(env)
    asserts.equals(
        env,
        sorted(["cuda:{}".format(a) for a in CUDA_ARCHS]),
        sorted([_flag_values(a, "target")[0] for a in compiles]),
    )
    with_ptx = [_flag_values(a, "target")[0] for a in compiles if "--embed_ptx" in a.argv]
    portable = [a for a in CUDA_ARCHS if a < ARCH_SPECIFIC_FROM]
    asserts.equals(env, ["cuda:{}".format(min(portable))], with_ptx)
    return analysistest.end(env)

all_targets_test = analysistest.make(_all_targets_test_impl)

# --- signature entries the compile tool reads as types or literals are not constexpr names ---------

def _signature_accepted_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = _compile_actions(env)
    asserts.equals(env, 1, len(compiles))
    asserts.equals(env, ctx.attr.constexprs, _flag_values(compiles[0], "constexprs"))
    return analysistest.end(env)

signature_accepted_test = analysistest.make(
    _signature_accepted_test_impl,
    attrs = {"constexprs": attr.string_list(doc = "The expected --constexprs flag (none: []).")},
)

# (signature, algos' constexprs): analysis passes and only the constexpr names reach --constexprs.
_ACCEPTED_SIGNATURES = [
    # `None` is a literal value, not a constexpr name (it failed as "constexpr 'None' appears twice").
    ("*fp32, *fp32, i32, None, None", {}),
    # Triton's aliases are types, as in the compile tool.
    ("*float32, *fp32, int32, bool, float32, BLOCK", {"BLOCK": 64}),
    ("*fp32, *fp32, i32, None, True, BLOCK", {"BLOCK": 64}),
    # Host tensor descriptors: the commas inside their brackets do not split entries (cuda:90).
    ("tensordesc<fp16[128, 64]>, *fp32, tensordesc<bf16[64,32, 2]>, BLOCK", {"BLOCK": 64}),
]

# --- tensor descriptor block shapes per algo ({CONSTEXPR} placeholders in the signature) ----------

def _tensordesc_placeholders_test_impl(ctx):
    env = analysistest.begin(ctx)
    signatures = sorted([_flag_values(a, "signature")[0] for a in _compile_actions(env)])
    asserts.equals(env, [
        "tensordesc<fp16[128, 64]>, *fp32, i32, BLOCK",
        "tensordesc<fp16[64, 64]>, *fp32, i32, BLOCK",
    ], signatures)
    return analysistest.end(env)

tensordesc_placeholders_test = analysistest.make(_tensordesc_placeholders_test_impl)

# --- hip (AMD) targets ---------------------------------------------------------------------------

def _hip_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = _compile_actions(env)
    asserts.equals(env, 2, len(compiles), "one compile per gfx target")
    asserts.equals(env, ["hip:gfx90a", "hip:gfx942"], sorted([_flag_values(a, "target")[0] for a in compiles]))
    for action in compiles:
        outs = [f.extension for f in action.outputs.to_list()]
        asserts.equals(env, sorted(["json", "hsaco", "ttir", "ttgir", "llir", "amdgcn"]), sorted(outs))
        asserts.equals(env, [], _flag_values(action, "out_cubin"), "no cubin for AMD")
    asserts.equals(env, [], _actions(env, "TritonSass"), "no SASS for AMD")
    groups = analysistest.target_under_test(env)[OutputGroupInfo]
    for group in ["ttir", "ttgir", "llir", "amdgcn", "hsaco", "metadata"]:
        asserts.equals(env, 2, len(getattr(groups, group).to_list()), "output group " + group)
    link = _actions(env, "TritonLink")
    asserts.equals(env, 1, len(link))
    inputs = _basenames(link[0].inputs.to_list())
    for symbol in ["add_hip_a0_s0_gfx90a", "add_hip_a0_s0_gfx942"]:
        asserts.true(env, symbol + ".hsaco" in inputs, "the link step reads " + symbol + ".hsaco")
    return analysistest.end(env)

hip_test = analysistest.make(_hip_test_impl)

# --- the tuned dispatch: link flags, the table as an input, the tuning output group -------------

def _tuning_test_impl(ctx):
    env = analysistest.begin(ctx)
    links = _actions(env, "TritonLink")
    asserts.equals(env, 1, len(links))
    link = links[0]
    asserts.equals(env, ["n"], _flag_values(link, "tuning_key"))
    asserts.equals(env, ["1"], _flag_values(link, "tuning_default_algo"))
    asserts.equals(env, ["//tests/rules:add_tuned"], _flag_values(link, "tuning_label"))
    tables = _flag_values(link, "tuning")
    asserts.true(env, len(tables) == 1 and tables[0].endswith("tests/rules/add_tuned.tuning.json"), "--tuning: {}".format(tables))
    asserts.true(env, "add_tuned.tuning.json" in [f.basename for f in link.inputs.to_list()], "the table is a link input")
    group = analysistest.target_under_test(env)[OutputGroupInfo].tuning.to_list()
    names = [f.basename for f in group]
    asserts.true(env, "libadd_tuned_tune.so" in names, "tuning group: the shared library: {}".format(names))
    asserts.true(env, "add_tuned.tuning.json" in names and "add_kernel.py" in names, "tuning group: table and inputs")
    asserts.equals(env, 2, len([n for n in names if n.endswith(".cubin")]), "tuning group: the cubins (2 algos, 1 target)")
    asserts.true(env, "add_tuned.library.json" in names, "tuning group: the library description (with the rule's tuning settings) for tools/tune")
    asserts.equals(env, ["tests/rules/add_tuned.tuning.json"], _flag_values(link, "tuning_place"), "where tools/tune writes the table")
    return analysistest.end(env)

tuning_test = analysistest.make(_tuning_test_impl)

# --- specialization_algos: the listed patterns compile only their algos ------------------------

def _compiled_symbols(env):
    return sorted([_flag_values(a, "symbol")[0] for a in _compile_actions(env)])

def _specialization_algos_test_impl(ctx):
    env = analysistest.begin(ctx)

    # specialization 0 (all hints) keeps algo 1 only; the generic one (1) has both algos
    asserts.equals(env, ["add_pruned_a0_s1_sm90", "add_pruned_a1_s0_sm90", "add_pruned_a1_s1_sm90"], _compiled_symbols(env))
    return analysistest.end(env)

specialization_algos_test = analysistest.make(_specialization_algos_test_impl)

def _specialization_algos_off_test_impl(ctx):
    env = analysistest.begin(ctx)
    asserts.equals(env, 4, len(_compiled_symbols(env)), "every algo in every specialization (tools/tune)")
    return analysistest.end(env)

specialization_algos_off_test = analysistest.make(
    _specialization_algos_off_test_impl,
    config_settings = {str(Label("//:specialization_algos")): False},
)

def analysis_test_suite(name):
    """Declares every analysis test.

    Args:
      name: the name of the test_suite of them all.
    """
    tests = []

    for test_rule, subject in [
        (actions_test, ":add"),
        (argv_test, ":add"),
        (link_test, ":add"),
        (env_test, ":add"),
        (cc_info_test, ":add"),
        (targets_flag_test, ":add_default_targets"),
        (hub_toolchain_test, ":hub_toolchain"),
        (archive_toolchain_test, ":archive_toolchain"),
        (hip_test, ":add_hip"),
        (tuning_test, ":add_tuned"),
        (specialization_algos_test, ":add_pruned"),
        (specialization_algos_off_test, ":add_pruned"),
    ]:
        test_name = "{}_{}_{}".format(name, len(tests), subject.lstrip(":"))
        test_rule(name = test_name, target_under_test = subject)
        tests.append(test_name)

    for i, (signature, constexprs) in enumerate(_ACCEPTED_SIGNATURES):
        subject = "{}_signature_{}".format(name, i)
        triton_kernel_library(
            name = subject,
            srcs = ["add_kernel.py"],
            algos = [triton_algo(constexprs = constexprs)] if constexprs else [],
            grid = "cdiv(n, 64), 1, 1",
            kernel = "add_kernel",
            signature = signature,
            targets = ["cuda:90"],
            tags = ["manual"],
        )
        test_name = subject + "_test"
        signature_accepted_test(
            name = test_name,
            target_under_test = ":" + subject,
            constexprs = [",".join(["{}={}".format(k, v) for k, v in constexprs.items()])] if constexprs else [],
        )
        tests.append(test_name)

    triton_kernel_library(
        name = name + "_all_targets",
        srcs = ["add_kernel.py"],
        algos = [triton_algo(constexprs = {"BLOCK": 64})],
        embed_ptx = True,
        grid = "cdiv(n, {BLOCK}), 1, 1",
        kernel = "add_kernel",
        signature = "*fp32, *fp32, *fp32, i32, BLOCK",
        targets = ["cuda:{}".format(a) for a in CUDA_ARCHS],
        tags = ["manual"],
    )
    all_targets_test(
        name = name + "_all_targets_test",
        target_under_test = ":" + name + "_all_targets",
    )
    tests.append(name + "_all_targets_test")

    triton_kernel_library(
        name = name + "_tensordesc_placeholders",
        srcs = ["add_kernel.py"],
        algos = [triton_algo(constexprs = {"BLOCK": 64}), triton_algo(constexprs = {"BLOCK": 128})],
        grid = "cdiv(n, {BLOCK}), 1, 1",
        kernel = "add_kernel",
        signature = "tensordesc<fp16[{BLOCK}, 64]>, *fp32, i32, BLOCK",
        targets = ["cuda:90"],
        tags = ["manual"],
    )
    tensordesc_placeholders_test(
        name = name + "_tensordesc_placeholders_test",
        target_under_test = ":" + name + "_tensordesc_placeholders",
    )
    tests.append(name + "_tensordesc_placeholders_test")

    native.test_suite(name = name, tests = tests)
