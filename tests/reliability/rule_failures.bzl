"""Analysis-failure tests for the rule-attribute cases of the bad-input catalogue.

The one place for tests of inputs triton_kernel_library must refuse: add a case to
catalogue.py's RULE_CASES and run update_catalogue.py. Every case of rule_cases.bzl (generated from catalogue.py) declares a triton_kernel_library with
one attribute wrong and a test that expects its analysis to fail with a message containing every
expected fragment (the culprit attribute and the fix). A case refused at build (`at_build`: the
grammar of signature entries, what the targets table says of a target) passes analysis instead,
and its test checks that the library's first Triton action carries the wrong value to the
compile tool, whose message catalogue_test checks.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("//rules:defs.bzl", "triton_algo", "triton_kernel_library")
load(":rule_cases.bzl", "RULE_CASES")

def _rule_failure_test_impl(ctx):
    env = analysistest.begin(ctx)
    for fragment in ctx.attr.expected:
        asserts.expect_failure(env, fragment)
    return analysistest.end(env)

def _refused_at_build_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = analysistest.target_actions(env)

    # The import check when the library has one, else its one compile: the first to run.
    first = [a for a in actions if a.mnemonic == "TritonImport"] or [a for a in actions if a.mnemonic == "TritonCompile"]
    asserts.true(env, len(first) >= 1, "no Triton action")
    if first:
        for flag in ctx.attr.flags:
            asserts.true(env, flag in first[0].argv, "{} lacks {} (argv: {})".format(first[0].mnemonic, flag, first[0].argv))
    return analysistest.end(env)

def _refused_in_action_test_impl(ctx):
    """Checks that the library's one Triton action is TritonRefuse, printing one line.

    The line is `error: LABEL: attribute 'ATTR': ...`, with every fragment, no traceback.
    """
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    actions = analysistest.target_actions(env)
    refuse = [a for a in actions if a.mnemonic == "TritonRefuse"]
    asserts.equals(env, 1, len(refuse), "one TritonRefuse action")
    others = [a.mnemonic for a in actions if a.mnemonic.startswith("Triton") and a.mnemonic != "TritonRefuse"]
    asserts.equals(env, [], others, "a refused library declares no other Triton action")
    texts = [a.content for a in actions if a.mnemonic == "FileWrite" and a.outputs.to_list()[0].basename == "refusal.txt"]
    asserts.equals(env, 1, len(texts), "the refusal's message file")
    if texts:
        text = texts[0]
        head = "error: //{}:{}: attribute '".format(target.label.package, target.label.name)
        asserts.true(env, text.startswith(head), "{} does not start with {}".format(repr(text), repr(head)))
        asserts.true(env, text.endswith("\n") and text.count("\n") == 1, "not one line: " + repr(text))
        asserts.true(env, "Traceback" not in text, text)
        for fragment in ctx.attr.expected:
            asserts.true(env, fragment in text, "missing {} in {}".format(repr(fragment), repr(text)))

    # every file the library gives its users is the refusal's one output (one failed input
    # for whatever uses them, so Bazel shows the message once)
    files = target.files.to_list() if texts else []
    asserts.equals(env, [refuse[0].outputs.to_list()[0]] if refuse else [], files)
    return analysistest.end(env)

_refused_in_action_test = analysistest.make(
    _refused_in_action_test_impl,
    attrs = {"expected": attr.string_list(doc = "Fragments the refusal's line must contain.")},
)

_refused_at_build_test = analysistest.make(
    _refused_at_build_test_impl,
    attrs = {"flags": attr.string_list(doc = "Arguments the first Triton action must have.")},
)

rule_failure_test = analysistest.make(
    _rule_failure_test_impl,
    expect_failure = True,
    attrs = {"expected": attr.string_list(doc = "Fragments the failure message must contain.")},
)

# A library that analyses fine; each case overrides some of these.
_GOOD = dict(
    srcs = ["kernels/kernels.py"],
    kernel = "copy_kernel",
    signature = "*fp32, *fp32, i32, BLOCK",
    grid = "cdiv(n, {BLOCK})",
    targets = ["cuda:80"],
)

def rule_failure_tests(name):
    """One analysis-failure test per rule case, plus a test_suite `name` of them all.

    Also declares `<name>_good`, the unmodified library, and a test that it analyses cleanly
    (so that every failure comes from the case's own attribute).

    Args:
      name: the name of the test_suite.
    """
    tests = []
    good = dict(_GOOD)
    good["algos"] = [triton_algo(constexprs = {"BLOCK": 64})]
    triton_kernel_library(name = name + "_good", tags = ["manual"], **good)
    _good_analysis_test(name = name + "_good_test", target_under_test = ":" + name + "_good")
    tests.append(name + "_good_test")

    # Constexpr values of every documented kind (int, bool, float, None, dtype, string) pass
    # analysis and reach --constexprs in Python's spelling: the checks that keep code out of
    # --constexprs and the grid must not refuse them. EXTRA is not in the signature (a constexpr
    # it leaves out): the compile tool, which has the kernel, checks it.
    values = dict(good)
    values["signature"] = "*fp32, *fp32, i32, BLOCK, DTYPE, SCALE, FLAG"
    values["algos"] = [triton_algo(constexprs = {
        "BLOCK": 64,
        "DTYPE": "tl.float16",
        "SCALE": 0.5,
        "FLAG": True,
        "ACT": "leaky_relu",
        "QUOTED": "'relu'",
        "BF": "triton.language.bfloat16",
        "EXTRA": None,
    })]
    triton_kernel_library(name = name + "_values", tags = ["manual"], **values)
    _constexpr_values_test(name = name + "_values_test", target_under_test = ":" + name + "_values")
    tests.append(name + "_values_test")
    for case in RULE_CASES:
        attrs = dict(good)
        attrs.update(case.attrs)
        subject = case.id + "_subject"
        triton_kernel_library(name = subject, tags = ["manual"], **attrs)
        if case.in_action:
            _refused_in_action_test(
                name = case.id + "_test",
                target_under_test = ":" + subject,
                expected = case.expected,
            )
        elif case.at_build:
            _refused_at_build_test(
                name = case.id + "_test",
                target_under_test = ":" + subject,
                flags = case.at_build,
            )
        else:
            rule_failure_test(
                name = case.id + "_test",
                target_under_test = ":" + subject,
                expected = case.expected,
            )
        tests.append(case.id + "_test")
    native.test_suite(name = name, tests = tests)

def _good_analysis_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = [a for a in analysistest.target_actions(env) if a.mnemonic == "TritonCompile"]
    asserts.equals(env, 1, len(compiles), "the good library has one variant")
    return analysistest.end(env)

_good_analysis_test = analysistest.make(_good_analysis_test_impl)

def _constexpr_values_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = [a for a in analysistest.target_actions(env) if a.mnemonic == "TritonCompile"]
    asserts.equals(env, 1, len(compiles))
    flags = [arg for arg in compiles[0].argv if arg.startswith("--constexprs=")]
    asserts.equals(env, ["--constexprs=ACT='leaky_relu',BF=tl.bfloat16,BLOCK=64,DTYPE=tl.float16,EXTRA=None,FLAG=True,QUOTED='relu',SCALE=0.5"], flags)
    return analysistest.end(env)

_constexpr_values_test = analysistest.make(_constexpr_values_test_impl)
