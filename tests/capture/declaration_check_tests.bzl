"""Analysis tests: every target built from a launcher's declaration carries its check.

A stale committed NAME.launcher.bzl must fail `bazel build` of the kernel libraries the macro
creates and of everything over them (a torch op library, a C entry library, a cc_binary), not
only NAME_declaration_test: each carries, in Bazel's `_validation` output group, the stamp of
NAME_declaration_check, whose TritonDeclarationCheck action compares the capture's output with
the committed copy and fails with one line (declaration_check_test runs that action's script on
a stale and a current copy).
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _carries_check_test_impl(ctx):
    env = analysistest.begin(ctx)
    groups = analysistest.target_under_test(env)[OutputGroupInfo]
    validations = [f.short_path for f in groups._validation.to_list()] if hasattr(groups, "_validation") else []
    for stamp in ctx.attr.stamps:
        asserts.true(env, stamp in validations, "{} not among the validations: {}".format(stamp, validations))
    return analysistest.end(env)

_carries_check_test = analysistest.make(
    _carries_check_test_impl,
    attrs = {"stamps": attr.string_list(doc = "The checks' stamps (short paths) it must carry.")},
)

def _check_action_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = [a for a in analysistest.target_actions(env) if a.mnemonic == "TritonDeclarationCheck"]
    asserts.equals(env, 1, len(actions), "one TritonDeclarationCheck action")
    if actions:
        action = actions[0]
        inputs = sorted([f.short_path for f in action.inputs.to_list()])
        for path in ctx.attr.compared:
            asserts.true(env, path in inputs, "{} is not an input: {}".format(path, inputs))
        asserts.true(env, action.argv[0].endswith("declaration_check.sh"), "runs declaration_check.sh: {}".format(action.argv))

        # the script's arguments: captured, committed, stamp, the message
        asserts.equals(env, ctx.attr.compared, [a.rpartition("/bin/")[2] for a in action.argv[1:3]])
        asserts.equals(env, ctx.attr.message, action.argv[-1])
    return analysistest.end(env)

_check_action_test = analysistest.make(
    _check_action_test_impl,
    attrs = {
        "compared": attr.string_list(doc = "The capture's file and the committed one (short paths)."),
        "message": attr.string(doc = "The one line a stale declaration fails the build with."),
    },
)

def declaration_check_tests(name, checked, carriers):
    """The check's action, and the targets that must carry it; a test_suite `name` of them all.

    Args:
      name: the test_suite's name.
      checked: the triton_launcher_library (in this package) whose check's action is tested.
      carriers: target -> the launcher libraries (in this package) whose checks it must carry.
    """
    package = native.package_name()
    tests = [name + "_action"]
    _check_action_test(
        name = name + "_action",
        target_under_test = ":" + checked + "_declaration_check",
        compared = [
            "{}/_capture/{}.launcher.bzl".format(package, checked),
            "{}/{}.launcher.bzl".format(package, checked),
        ],
        message = ("error: //{0}:{1}: {0}/{1}.launcher.bzl is stale (the launcher, its kernels or the example " +
                   "calls changed); update it: tools/bazel build //{0}:{1}_declaration && " +
                   "cp bazel-bin/{0}/_capture/{1}.launcher.bzl {0}/").format(package, checked),
    )
    for target, launchers in carriers.items():
        test = "{}_{}".format(name, target.lstrip(":"))
        _carries_check_test(
            name = test,
            target_under_test = target,
            stamps = ["{}/{}_declaration_check.ok".format(package, launcher) for launcher in launchers],
        )
        tests.append(test)
    native.test_suite(name = name, tests = tests)
