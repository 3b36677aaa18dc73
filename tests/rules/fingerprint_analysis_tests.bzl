"""Analysis test: the environment fingerprint is an input of every Triton action.

Without it, a cache shared by machines whose interpreter holds different tritons serves one
compiler's outputs to another: the Python environment lives outside the build, and the
fingerprint file is what puts it into the action keys.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

_TRITON_MNEMONICS = ["TritonCompile", "TritonLink", "TritonSass"]

def _fingerprint_input_test_impl(ctx):
    env = analysistest.begin(ctx)
    seen = {}
    for action in analysistest.target_actions(env):
        if action.mnemonic not in _TRITON_MNEMONICS:
            continue
        seen[action.mnemonic] = True
        fingerprints = [
            f
            for f in action.inputs.to_list()
            if f.basename == "fingerprint.json" and f.owner.workspace_name.endswith("rules_triton_python")
        ]
        asserts.equals(env, 1, len(fingerprints), "{} takes @rules_triton_python//:fingerprint.json as an input".format(action.mnemonic))
    for mnemonic in _TRITON_MNEMONICS:
        asserts.true(env, seen.get(mnemonic, False), "the target has a {} action".format(mnemonic))
    return analysistest.end(env)

fingerprint_input_test = analysistest.make(_fingerprint_input_test_impl)

def fingerprint_analysis_tests(name):
    fingerprint_input_test(name = name + "_inputs", target_under_test = ":add")
    native.test_suite(name = name, tests = [name + "_inputs"])
