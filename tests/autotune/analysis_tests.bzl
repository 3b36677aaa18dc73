"""Analysis test of triton_autotune_algos: one TritonAutotuneConfigs action in the Triton
toolchain, the committed file's name and update command passed on."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _generated_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = [a for a in analysistest.target_actions(env) if a.mnemonic == "TritonAutotuneConfigs"]
    asserts.equals(env, 1, len(actions), "one TritonAutotuneConfigs action")
    action = actions[0]
    asserts.true(env, "triton_aot.compile.autotune_configs" in action.argv, "runs the autotune_configs tool")
    for flag in [
        "--kernels=scale_kernel,pruned_kernel",
        "--bzl_name=tuned_algos.bzl",
        "--update_command=bazel run //tests/autotune:tuned_algos.update",
    ]:
        asserts.true(env, flag in action.argv, "passes " + flag)
    asserts.equals(env, ["tuned_algos_generated.bzl"], [f.basename for f in action.outputs.to_list()])
    asserts.true(env, [f for f in action.inputs.to_list() if f.basename == "tuned.py"] != [], "reads the kernel file")
    return analysistest.end(env)

generated_test = analysistest.make(_generated_test_impl)
