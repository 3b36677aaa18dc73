"""`@rules_triton_versions`: the extra triton environments that //tests/versions tests (dev only).

tools/setup makes one environment per version it is asked to test (by default the oldest and the
newest supported: venv-triton-3.5 and venv-triton-3.9) and tools/bazel names them in
RULES_TRITON_VERSION_PYTHONS ("3.5=/path/bin/python3,3.9=/path/bin/python3"). This repository
exposes, per version, the interpreter's path (versions.bzl) and the environment's fingerprint
(X.Y/fingerprint.json, the same text every Triton action of that environment would key on),
which the version tests take as data: a reinstalled environment re-runs them.
A version that is not set up is missing from PYTHONS; its test then fails and says so.
"""

_ENV_VAR = "RULES_TRITON_VERSION_PYTHONS"

def _triton_versions_repository_impl(rctx):
    pythons = {}
    problems = {}
    script = rctx.path(Label("//triton_aot/compile:env_fingerprint.py"))
    for item in rctx.os.environ.get(_ENV_VAR, "").split(","):
        item = item.strip()
        if not item:
            continue
        minor, _, path = item.partition("=")
        if not rctx.path(path).exists:
            problems[minor] = "{} (from {}) does not exist".format(path, _ENV_VAR)
            continue
        result = rctx.execute([path, "-I", str(script)], environment = {"PYTHONNOUSERSITE": "1"}, quiet = True)
        if result.return_code != 0:
            problems[minor] = "{} cannot compute its fingerprint: {}".format(path, result.stderr.strip()[-500:])
            continue
        out = json.decode(result.stdout.strip().splitlines()[-1])
        rctx.file(minor + "/fingerprint.json", out["fingerprint"], executable = False)
        for watched in out["watch"]:
            rctx.watch(watched)
        pythons[minor] = path
    rctx.file("versions.bzl", "PYTHONS = {}\nPROBLEMS = {}\n".format(repr(pythons), repr(problems)))
    rctx.file("BUILD.bazel", 'exports_files(glob(["*/fingerprint.json"], allow_empty = True))\n')

_triton_versions_repository = repository_rule(
    implementation = _triton_versions_repository_impl,
    environ = [_ENV_VAR],
    local = True,
    doc = "Exposes the triton environments named by RULES_TRITON_VERSION_PYTHONS.",
)

def _triton_versions_impl(_mctx):
    _triton_versions_repository(name = "rules_triton_versions")

triton_versions = module_extension(
    implementation = _triton_versions_impl,
    environ = [_ENV_VAR],
    doc = "Creates @rules_triton_versions (rules_triton's version-matrix tests; dev dependency).",
)
