"""The GPU suites: what `tools/gpu pack SUITE` builds and copies into .gpu/SUITE/, and what
`tools/gpu run SUITE` runs on the GPU machine (python3, torch, triton, nvcc, g++; no Bazel, no
network). Pure data: tools/gpu reads SUITES and GROUPS; its CPU test checks every entry.

A suite:
  doc        one line, for `tools/gpu list`
  workspace  the Bazel workspace it builds in: "." (the repository root) or "examples"; a
             `copy` entry may name another
  flags      extra Bazel flags for its builds (suites with the same workspace and flags build
             together, in one Bazel call)
  build      targets to build besides those named in `copy` (whose default outputs they are not)
  copy       what goes into .gpu/SUITE/, each entry one of
               {"target": LABEL or [LABEL...], "group": OUTPUT_GROUP, "glob": PATTERN(S),
                "exclude": [NAME_PATTERN...], "to": SUBFOLDER}   built files ("{name}" in `to`
                                                                  is the target's name)
               {"query": CQUERY, "group": ..., ...}               the same over a query's targets
               {"src": GLOB, "to": SUBFOLDER}                     files of this checkout
               {"wheel": DISTRIBUTION, "lock": FILE, "to": ...}   a locked wheel, unpacked
               {"tuning": LABEL}                                  a tuning bundle (pack.json),
                                                                  into .gpu/SUITE/<c_name>/
                                                                  (without `run`: the tuning
                                                                  of each bundle)
  needs      suites packed with it and present when it runs (their folders are read by its run)
  run        the steps on the GPU machine, in order, from the repository root; each
               {"name": ..., "cmd": [ARGV...], "cwd": optional, "env": optional}
             placeholders: {gpu} the .gpu folder, {dir} .gpu/SUITE, {repo} the checkout,
             {out} $OUT when set, else the suite's `out` (relative to the checkout)
             exit code 0 passes, 77 skips (no GPU, no driver), anything else fails
  budget_mib the most the packed folder may weigh (the device run carries at most 64 MiB)
  archive    True: the files travel as one xz archive beside the manifest (CONTENT.tar.xz, which
             the budget weighs), unpacked on the GPU machine before the suite's first step
A suite with neither `copy` nor `needs` is run-only: its pack is the manifest alone.
"""

# The example kernels whose variant records the examples suite packs (tests/gpu reads them).
_EXAMPLE_KERNELS = ["//kernels:" + k for k in ["add", "big_smem", "matmul", "scalars", "scale", "softmax"]]

# The example libraries with a tuning_key, as tuning bundles.
_TUNED = [{"tuning": "//kernels:" + k} for k in ["matmul_tuned", "matmul_tuned_bf16", "rmsnorm_tuned"]]

# A library's kernel_params.json (its import check) is not a variant record.
_RECORDS = {"glob": "*.json", "exclude": ["kernel_params.json"]}

SUITES = {
    "examples": {
        "doc": "every example kernel via ctypes against torch, the example app, the C/C++ API tests",
        "workspace": "examples",
        "copy": [
            {"target": "//app:example_kernels", "glob": "libexample_kernels.so", "to": "lib"},
            {"target": ["//app:app", "//tests:api_test", "//tests:so_test"], "glob": "{name}", "to": "bin"},
            dict(_RECORDS, target = _EXAMPLE_KERNELS, group = "metadata", to = "metadata/{name}"),
            {"src": "tests/gpu/*.py", "to": "tests"},
        ],
        "run": [
            {"name": "examples", "cmd": ["python3", "{dir}/tests/run_all.py", "--gpu-dir", "{dir}", "--require-gpu"]},
        ],
        "budget_mib": 30,
    },
    "dispatch": {
        "doc": "which matmul variant runs, read through a recording libcuda shim",
        "workspace": ".",
        "copy": [
            {"target": ["//tests/gpu_dispatch:libcuda.so.1", "//tests/gpu_dispatch:variant_choice"], "glob": "{name}", "to": ""},
            {"target": "//tests/gpu_dispatch:matmul_cubins", "glob": "*.cubin", "to": "cubins"},
        ],
        "run": [
            {"name": "variant_choice", "cmd": ["bash", "tests/gpu_dispatch/run.sh"], "env": {"RULES_TRITON_DISPATCH_DIR": "{dir}"}},
        ],
        "budget_mib": 10,
    },
    "reliability": {
        "doc": "two CUcontexts; compute-sanitizer memcheck/racecheck over them and every example",
        "workspace": ".",
        "copy": [
            {"target": "//tests/gpu_reliability:two_contexts", "glob": "two_contexts", "to": ""},
            dict(_RECORDS, target = "//tests/gpu_reliability:rel_add", group = "metadata", to = "metadata"),
        ],
        "needs": ["examples"],
        "run": [
            {"name": "reliability", "cmd": ["bash", "tests/gpu_reliability/run.sh", "{dir}", "{gpu}/examples"]},
        ],
        "budget_mib": 4,
    },
    "ptx": {
        "doc": "a cuda:80 library with PTX runs through the driver's JIT; one without reports NO_BINARY",
        "workspace": ".",
        "copy": [
            {"target": "//tests/gpu_ptx:ptx_fallback", "glob": "ptx_fallback", "to": ""},
        ],
        "run": [
            {"name": "ptx_fallback", "cmd": ["bash", "tests/gpu_ptx/run.sh"], "env": {"RULES_TRITON_PTX_DIR": "{dir}"}},
        ],
        "budget_mib": 4,
    },
    "torch": {
        "doc": "the triton_torch_library test ops against torch: eager, torch.compile, streams",
        "workspace": ".",
        "copy": [
            {"target": ["//tests/torch_ops:example_ops", "//tests/torch_ops:scale_ops"], "glob": ["{name}.py", "lib{name}.so"], "to": ""},
            {"src": "tests/torch_ops/run_gpu.py", "to": ""},
        ],
        "run": [
            {"name": "torch_ops", "cmd": ["python3", "run_gpu.py"], "cwd": "{dir}"},
        ],
        "budget_mib": 16,
    },
    "block": {
        "doc": "the transformer block of torch ops: eager, torch.compile, AOTInductor vs torch",
        "workspace": "examples",
        "copy": [
            {"target": "//transformer_block:block_ops", "glob": ["block_ops.py", "libblock_ops.so"], "to": "transformer_block"},
            {"src": "examples/transformer_block/block.py", "to": "transformer_block"},
            {"src": "examples/transformer_block/run_gpu.py", "to": ""},
        ],
        "run": [
            {"name": "block", "cmd": ["python3", "{dir}/run_gpu.py"]},
        ],
        "budget_mib": 16,
    },
    "captured": {
        "doc": "the ops captured from launchers (Liger's wrappers, ours, ours and Liger's KL divergence that compute with torch: composites) against those launchers on the JIT: eager, torch.compile(fullgraph=True) and an AOTInductor package, at the example sizes and two unseen ones",
        "workspace": ".",
        "copy": [
            {"target": ["//tests/capture:liger_ops", "//tests/capture:serving_ops", "//tests/capture:torch_work_ops", "//tests/capture:composite_ops", "//tests/capture:liger_composite_ops"], "glob": ["{name}.py", "lib{name}.so"], "to": ""},
            {"src": "tests/capture/serving_kernels.py", "to": "launchers"},
            # our launchers of the torch-work patterns, importable as tests.capture...
            {"src": "tests/capture/torch_work_launchers.py", "to": "launchers/tests/capture"},
            {"src": "tests/capture/dep/kernels.py", "to": "launchers/tests/capture/dep"},
            {"src": "tests/capture/run_gpu.py", "to": ""},
            {"src": "tests/capture/gpu_checks.py", "to": ""},
            # the launchers' own source for the JIT side: the GPU machine has no network
            {"wheel": "liger-kernel", "lock": "tools/kernel_packages.lock", "to": "site"},
        ],
        "out": "tests/capture/results",
        "run": [
            {"name": "captured", "cmd": ["python3", "{dir}/run_gpu.py"], "env": {"OUT": "{out}"}},
        ],
        "budget_mib": 32,
    },
    "c_entry": {
        "doc": "the launchers' C entries over DLPack (no torch) vs their torch ops and the JIT; host overhead; memcheck",
        "workspace": ".",
        "copy": [
            {"target": "//tests/capture:c_entries", "glob": "libcaptured_c_entries.so", "to": ""},
            {"target": "//tests/capture:c_entry_gpu", "glob": "c_entry_gpu", "to": ""},
            {"src": "tests/capture/run_c_entry_gpu.py", "to": ""},
            # the examples' transformer block through its C entries, built as a user would
            {"workspace": "examples", "target": "//transformer_block:block_c", "glob": "block_c", "to": ""},
        ],
        # the torch ops, our launchers and Liger's package for the comparisons
        "needs": ["captured"],
        "out": "tests/capture/results",
        "run": [
            {"name": "c_entry", "cmd": ["python3", "{dir}/run_c_entry_gpu.py"], "env": {"OUT": "{out}", "CAPTURED_DIR": "{gpu}/captured"}},
            {"name": "c_entry_overhead", "cmd": ["{dir}/c_entry_gpu", "--iterations", "4000", "--json", "{out}/c_entry_overhead.json"]},
            {"name": "c_entry_memcheck", "cmd": ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "3", "{dir}/c_entry_gpu", "--iterations", "20"]},
            {"name": "block_c", "cmd": ["{dir}/block_c"]},
            {"name": "block_c_unseen_seq", "cmd": ["{dir}/block_c", "77"]},
        ],
        "budget_mib": 8,
    },
    "corpus": {
        "doc": "the Liger-Kernel corpus: every kernel against the Triton JIT (output, cubin, time)",
        "workspace": ".",
        "build": ["//tests/corpus:all"],
        "copy": [
            {"target": "//tests/corpus:corpus_kernels", "glob": "libcorpus_kernels.so", "to": ""},
            {"target": "//tests/corpus:corpus_manifest", "glob": "corpus_manifest.json", "to": ""},
            {"query": "kind(triton_kernel_library, //tests/corpus:all)", "group": "cubin", "glob": "*.cubin", "to": "cubins"},
            # the same kernel source for the JIT side: the GPU machine has no network
            {"wheel": "liger-kernel", "lock": "tools/kernel_packages.lock", "to": "site"},
        ],
        "out": "tests/corpus/results",
        "run": [
            {"name": "corpus", "cmd": ["python3", "tests/corpus/run_corpus_gpu.py", "--gpu-dir", "{dir}", "--out", "{out}"]},
        ],
        "budget_mib": 40,
    },
    "bench": {
        "doc": "benchmark: launch overhead (raw cuLaunchKernel, C API, NAME_auto), sizes, matmul",
        "workspace": ".",
        "copy": [
            {"target": [
                "//bench/gpu:launch_bench_so",
                "//bench/gpu:launch_bench",
                "//bench/gpu:tiny1_so",
                "//bench/gpu:tiny8_so",
                "//bench/gpu:tiny1_floor_so",
            ], "glob": ["*.so", "launch_bench"], "to": ""},
            {"target": "//bench/gpu:tiny1", "group": "cubin", "glob": "*.cubin", "to": "tiny"},
            dict(_RECORDS, target = ["//bench/gpu:tiny1", "//bench/gpu:tiny8"], group = "metadata", to = "tiny"),
            {"src": "bench/gpu/tiny.py", "to": ""},
            {"src": "bench/gpu/gpu_bench.py", "to": ""},
            # the example matmul and every example variant's record, built as a user would
            {"workspace": "examples", "target": "//app:example_kernels", "glob": "libexample_kernels.so", "to": "matmul"},
            {"src": "examples/kernels/matmul.py", "to": "matmul"},
            dict(_RECORDS, workspace = "examples", query = "kind(triton_kernel_library, //kernels/...)", group = "metadata", to = "matmul/metadata"),
        ],
        "out": "bench/results",
        "run": [
            {"name": "gpu_bench", "cmd": ["python3", "{dir}/gpu_bench.py", "--bench-dir", "{dir}", "--out", "{out}"]},
        ],
        "budget_mib": 16,
    },
    "torchbench": {
        "doc": "benchmark: PyTorch callers (per-call overhead, cold start over the corpus)",
        "workspace": ".",
        "copy": [
            {"target": "//bench/gpu:tiny1_so", "glob": "libtiny1.so", "to": "overhead"},
            {"src": "bench/gpu/tiny.py", "to": "overhead"},
            {"target": "//bench/torch:tiny1_torch", "glob": ["*.py", "*.so"], "to": "ops/tiny1"},
            {"target": "//tests/corpus:corpus_torch", "glob": ["*.py", "*.so"], "to": "ops/corpus"},
        ],
        "needs": ["corpus"],
        "out": "bench/results",
        "run": [
            {"name": "torchbench", "cmd": ["bash", "bench/torch/run_gpu.sh"], "env": {"OUT": "{out}"}},
        ],
        "budget_mib": 8,
    },
    "tune": {
        "doc": "tuning bundles of the example tuned libraries; run = retune (writes their tables)",
        "workspace": "examples",
        # A stale table must not stop its own retuning (the bundle links without it), and the
        # tuning times every algo in every specialization, not just the table's portfolios.
        "flags": ["--@rules_triton//:tuning_stale_ok", "--@rules_triton//:specialization_algos=false"],
        "copy": _TUNED,
        # no `run`: one `sh {dir}/<c_name>/tune.sh` per bundle (the tuning command with the flags it
        # was packed with), which writes the library's table in the checkout (commit it)
        "archive": True,  # about 150 MiB of cubins, 20 MiB as xz
        "budget_mib": 48,
    },
    "tuned": {
        "doc": "the same bundles as users build the libraries (each pattern pruned to its portfolios)",
        "workspace": "examples",
        "flags": ["--@rules_triton//:tuning_stale_ok", "--@rules_triton//:specialization_algos"],
        "copy": _TUNED,
        "run": [],  # read by tune_bench
        "archive": True,  # about 85 MiB (each bundle's cubins and its tuning library)
        "budget_mib": 48,
    },
    "tuned_choice": {
        "doc": "NAME_auto launches the cubin of its table's choice (tune's bundles, dispatch's shim)",
        "needs": ["tune", "dispatch"],
        "out": "tests/gpu_tune/results",
        "run": [
            {"name": "tuned_choice", "cmd": ["bash", "tests/gpu_tune/run.sh", "{gpu}/tune/matmul_tuned", "{gpu}/tune/matmul_tuned_bf16"], "env": {"RULES_TRITON_DISPATCH_DIR": "{gpu}/dispatch"}},
        ],
    },
    "every_algo": {
        "doc": "every algo of the tuned matmuls on layouts the sweep never makes",
        "needs": ["tune"],
        "out": "tests/gpu_tune/results",
        "run": [
            {"name": "every_algo", "cmd": ["python3", "tests/gpu_tune/every_algo.py", "{gpu}/tune/matmul_tuned", "{gpu}/tune/matmul_tuned_bf16", "--out", "{out}"]},
        ],
    },
    "tune_bench": {
        "doc": "benchmark: the tuned matmul and rmsnorm against cuBLAS, torch and the autotuned JIT",
        "needs": ["tuned"],
        "out": "bench/results",
        "run": [
            {"name": "tune_bench:matmul", "cmd": ["python3", "bench/tune/tune_bench.py", "{gpu}/tuned/matmul_tuned", "{gpu}/tuned/matmul_tuned_bf16", "--out", "{out}"]},
            {"name": "tune_bench:rmsnorm", "cmd": ["python3", "bench/tune/tune_bench.py", "{gpu}/tuned/rmsnorm_tuned", "--stem", "tune_rmsnorm", "--out", "{out}"]},
        ],
    },
    "tune_heldout": {
        "doc": "benchmark: NAME_auto on layers of models the tables never saw vs the JIT, the per-shape oracle and cuBLAS (~6 min)",
        "needs": ["tuned"],
        "out": "bench/results",
        "run": [
            {"name": "tune_heldout", "cmd": ["python3", "bench/tune/tune_bench.py", "{gpu}/tuned/matmul_tuned", "{gpu}/tuned/matmul_tuned_bf16", "--held_out", "--stem", "tune_heldout", "--budget_s", "200", "--out", "{out}"]},
        ],
    },
    "tune_fresh": {
        "doc": "benchmark: tune_heldout on a second set of models (FRESH_LAYERS) and shapes of a seed of their own, which no choice of the selection looked at before the waves (~3 min)",
        "needs": ["tuned"],
        "out": "bench/results",
        "run": [
            {"name": "tune_fresh", "cmd": ["python3", "bench/tune/tune_bench.py", "{gpu}/tuned/matmul_tuned", "{gpu}/tuned/matmul_tuned_bf16", "--held_out", "--held_out_layers", "fresh", "--stem", "tune_fresh", "--budget_s", "200", "--out", "{out}"]},
        ],
    },
    "model_tune": {
        "doc": "benchmark: retune for a new 7B-class model (Gemma-7B, 7 layers x 20 batch sizes x 2 dtypes) on the host's GPUs, then its ratios at untuned batch sizes (~6-8 min on 1 H200)",
        "needs": ["tune"],
        "out": "bench/results",
        "run": [
            {"name": "model_tune", "cmd": ["python3", "bench/tune/model_tune_bench.py", "{gpu}/tune/matmul_tuned", "{gpu}/tune/matmul_tuned_bf16", "--model_config", "bench/tune/models/gemma-7b.config.json", "--out", "{out}"]},
        ],
    },
    "model_retune": {
        "doc": "a user's retuning for a new model (Gemma-7B, both dtypes): the bundles packed with the model flags as `tools/tune //kernels:matmul_tuned //kernels:matmul_tuned_bf16 --model_config=... --batch=1:8192 --missing_only` does, each bundle's tune.sh run as printed (its wall time in the summary); the tables go to the results",
        "workspace": "examples",
        "flags": ["--@rules_triton//:tuning_stale_ok", "--@rules_triton//:specialization_algos=false"],
        "tune_flags": ["--model_config=bench/tune/models/gemma-7b.config.json", "--batch=1:8192", "--missing_only"],
        "copy": _TUNED[:2],
        "run": [
            {"name": "tune.sh:" + b, "cmd": ["sh", "{dir}/" + b + "/tune.sh", "--out={out}/" + b + ".gemma-7b.tuning.json"]}
            for b in ["matmul_tuned", "matmul_tuned_bf16"]
        ],
        "archive": True,
        "budget_mib": 32,
    },
    # Run-only suites: they build on the GPU machine from this checkout or use Triton's JIT; `pack`
    # writes just their manifest.
    "launch_checks": {
        "doc": "launch features (n_rows, persistent, scratch, host descriptors) against the JIT",
        "out": "tests/gpu_launch/results",
        "run": [
            {"name": "launch_checks", "cmd": ["python3", "tests/gpu_launch/run_launch_checks.py", "--out", "{out}"]},
        ],
    },
    "headroom": {
        "doc": "benchmark: the best of 138 matmul configs per Linear-layout shape against cuBLAS",
        "out": "bench/results",
        "run": [
            {"name": "headroom", "cmd": ["python3", "bench/tune/headroom.py", "--out", "{out}"]},
        ],
    },
}

# Names for several suites at once: `tools/gpu pack tests` packs what the GPU test run needs.
GROUPS = {
    "tests": ["examples", "dispatch", "reliability", "ptx"],
}
