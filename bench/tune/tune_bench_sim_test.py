"""bench/tune/tune_bench.py's GPU path end to end on the CPU: CPU torch behind a proxy that
drops device="cuda" and whose torch.cuda is a simulated GPU timeline (events, graphs,
busy-waits), a fake triton (jit, autotune, Config), fake packed libraries whose C API computes
through the same tensors. Every method's host launch cost differs; the run must come out valid,
with the very kernel timed the same on both sides. The simulation runs in a child process: it
replaces the torch and triton modules."""

import importlib.util
import inspect
import json
import subprocess
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fake_gpu  # noqa: E402

MATMUL_INPUTS = '''
KEY = ("M", "N", "K")
SHAPES = [(1, 1024, 4096)]
DTYPES = {"matmul_tuned": "float16"}
def make_args(torch, dtype, M, N, K):
    a = torch.randn((M, K), device="cuda", dtype=dtype) / K ** 0.5
    b = torch.randn((K, N), device="cuda", dtype=dtype)
    c = torch.empty((M, N), device="cuda", dtype=dtype)
    return [a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1)]
'''
RMSNORM_INPUTS = '''
KEY = ("n_rows", "n_cols")
SHAPES = [(1, 4096)]
DTYPES = {"rmsnorm_tuned": "float16"}
def make_args(torch, dtype, n_rows, n_cols):
    x = torch.randn((n_rows, n_cols), device="cuda", dtype=dtype)
    w = torch.randn((n_cols,), device="cuda", dtype=dtype)
    y = torch.empty((n_rows, n_cols), device="cuda", dtype=dtype)
    return [y, x, w, x.stride(0), y.stride(0), n_rows, n_cols, 1e-6]
def reference(torch, x, w):
    return torch.nn.functional.rms_norm(x.float(), (x.shape[-1],), w.float(), eps=1e-6)
'''
KERNELS = '''
import triton
@triton.jit
def matmul_tuned_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                        stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_K=1,
                        PERSISTENT=False, TMA=False):
    pass
@triton.jit
def rmsnorm_kernel(y_ptr, x_ptr, w_ptr, x_row_stride, y_row_stride, n_rows, n_cols, eps, BLOCK):
    pass
'''
ALGOS = {"matmul_tuned": [{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8},
                          {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "GROUP_M": 8,
                           "SPLIT_K": 4},
                          {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                           "PERSISTENT": True, "TMA": True},
                          {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}],
         "rmsnorm_tuned": [{"BLOCK": 256}, {"BLOCK": 1024}, {"BLOCK": 4096}]}
HOST_US = {"auto": 3.0, "jit": 25.0, "baseline": 8.0}  # each launch path's own host cost


def gpu_us(kernel: str, args) -> float:
    size = args[3] * args[4] * args[5] if kernel == "matmul_tuned_kernel" else args[5] * args[6]
    return 3.0 + size / 2e6


def simulate(tmp: Path) -> dict:
    import torch as real_torch

    real_torch.Tensor.cuda = lambda self, *a, **k: self
    gpu = fake_gpu.Gpu()
    queue = gpu.queue

    def factory(fn):
        def make(*a, **k):
            k.pop("device", None)
            return fn(*a, **k)
        return make

    def matmul(a, b, out=None):
        queue(gpu_us("matmul_tuned_kernel", [a, b, out, a.shape[0], b.shape[1], a.shape[1]]) * 0.9,
              HOST_US["baseline"])
        return real_torch.matmul(a, b, out=out)

    def rms_norm(x, shape, w, eps=None):
        queue(gpu_us("rmsnorm_kernel", [0] * 5 + list(x.shape)) * 1.1, HOST_US["baseline"])
        return real_torch.nn.functional.rms_norm(x, shape, w, eps=eps)

    class Forward(types.ModuleType):  # the real module's attributes, some replaced
        def __init__(self, name, real, **replaced):
            super().__init__(name)
            self._real = real
            self.__dict__.update(replaced)

        def __getattr__(self, name):
            return getattr(self._real, name)

    cuda = Forward(
        "torch.cuda", real_torch.cuda, **fake_gpu.cuda(
            gpu, current_stream=lambda: types.SimpleNamespace(cuda_stream=1234),
            get_device_capability=lambda d=None: (9, 0), get_device_name=lambda d=None: "Sim",
            get_device_properties=lambda d: types.SimpleNamespace(multi_processor_count=132)))
    torch = Forward(
        "torch", real_torch, randn=factory(real_torch.randn), empty=factory(real_torch.empty),
        matmul=matmul, cuda=cuda, compile=lambda fn, dynamic=None: fn,
        nn=types.SimpleNamespace(functional=types.SimpleNamespace(rms_norm=rms_norm)),
        _dynamo=types.SimpleNamespace(config=types.SimpleNamespace(recompile_limit=8)))
    sys.modules["torch"] = torch

    def compute(kernel, args):
        if kernel == "matmul_tuned_kernel":
            args[2].copy_(args[0].float() @ args[1].float())
        else:
            args[0].copy_(real_torch.nn.functional.rms_norm(
                args[1].float(), (args[6],), args[2].float(), eps=args[7]))
        return gpu_us(kernel, args)

    class Config:
        def __init__(self, kwargs, num_warps=4, num_stages=3, pre_hook=None):
            self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages
            self.pre_hook = pre_hook

    class JIT:
        def __init__(self, fn):
            self.name, self.arg_names = fn.__name__, list(inspect.signature(fn).parameters)

        def __getitem__(self, grid):
            def run(*args, num_warps=4, num_stages=3, **kw):
                g = grid(dict(kw)) if callable(grid) else grid
                assert all(isinstance(v, int) and v > 0 for v in g), g
                queue(compute(self.name, args), HOST_US["jit"])
            return run

        def warmup(self, *a, grid, num_warps, num_stages, **kw):
            pass

    class Autotuner:  # picks algo 0 or 1 by the key; the library picks by the shape's sum
        def __init__(self, fn, configs, key):
            self.fn, self.configs, self.key, self.cache = fn, configs, key, {}

        def __getitem__(self, grid):
            def run(*args):
                nargs = dict(zip(self.fn.arg_names, args))
                k = tuple(nargs[n] for n in self.key)
                self.best_config = cfg = self.cache.setdefault(k, self.configs[sum(k[:2]) % 2])
                if cfg.pre_hook:
                    cfg.pre_hook(nargs)
                self.fn[grid](*args, num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                              **cfg.kwargs)
            return run

    triton = types.ModuleType("triton")
    triton.jit, triton.Config, triton.__version__ = JIT, Config, "sim"
    triton.cdiv = lambda a, b: -(-a // b)
    triton.autotune = lambda configs, key, do_bench: (lambda fn: Autotuner(fn, configs, key))
    triton.set_allocator = lambda alloc: None
    sys.modules["triton"] = triton

    spec = importlib.util.spec_from_file_location("tune_bench", HERE / "tune_bench.py")
    tb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tb)
    from triton_aot.contract import hint_patterns
    from triton_aot.tuning import call_hints, tune

    (tmp / "kernels.py").write_text(KERNELS)
    tb.Matmul.kernel_file = tb.RmsNorm.kernel_file = tmp / "kernels.py"
    zeroed = []

    def memset(torch_, c):  # the driver's memset, on the timeline
        zeroed.append(c.shape)
        c.zero_()
        queue(1.0, 2.0)
    tb.memset_like_library = memset
    tensors = {}

    def c_values(args):
        tensors.update({a.data_ptr(): a for a in args if hasattr(a, "data_ptr")})
        return [a.data_ptr() if hasattr(a, "data_ptr") else a for a in args]

    def fake_pack(name, inputs_text):
        (tmp / f"{name}.py").write_text(inputs_text)
        inputs = call_hints.load_inputs(tmp / f"{name}.py")
        algos = ALGOS[name]
        recs = {i: types.SimpleNamespace(constexprs={k: repr(v) for k, v in kw.items()},
                                         launch=types.SimpleNamespace(num_warps=4, num_stages=3))
                for i, kw in enumerate(algos)}
        kernel = "matmul_tuned_kernel" if name.startswith("matmul") else "rmsnorm_kernel"

        def tensors_of(cargs):
            if kernel == "rmsnorm_kernel":
                return [tensors[p] for p in cargs[:3]] + list(cargs[3:])
            a, b, c, M, N, K, sam, sak, sbk, sbn = cargs[:10]
            return [real_torch.as_strided(tensors[a], (M, K), (sam, sak)),
                    real_torch.as_strided(tensors[b], (K, N), (sbk, sbn)), tensors[c], M, N, K]

        class Fn:
            argtypes = [None] * 14

            def __call__(self, stream, *cargs):
                *cargs, algo = cargs
                if algo == len(algos) - 1:
                    return 801  # CUDA_ERROR_NOT_SUPPORTED
                if "SPLIT_K" in algos[algo]:
                    queue(1.0, 0.0)
                queue(compute(kernel, tensors_of(cargs)), HOST_US["auto"])
                return 0

        class AutoAlgo:
            def __call__(self, sm, *cargs):
                return sum(cargs[3:5] if kernel == "matmul_tuned_kernel" else cargs[5:7]) % 2

        fn, auto_algo = Fn(), AutoAlgo()
        lib = types.SimpleNamespace(
            fn=fn, infos=[str(a) for a in algos],
            auto=lambda stream, *cargs: fn(stream, *cargs, auto_algo(90, *cargs)),
            lib=types.SimpleNamespace(**{f"{name}_auto_algo": auto_algo}))
        # no description: pack_hint_patterns, its one reader here, is replaced below
        return tune.Pack(tmp / name, {"so": "lib.so"}, name, tuple(inputs.KEY), recs, inputs, lib,
                         None)

    packs = {"matmul_tuned": fake_pack("matmul_tuned", MATMUL_INPUTS),
             "rmsnorm_tuned": fake_pack("rmsnorm_tuned", RMSNORM_INPUTS)}
    tune.open_pack = lambda pack: packs[Path(pack).name]
    tune.pack_hint_patterns = lambda pack: [()]

    class EveryAlgo:  # a library with every algo in every pattern (nothing pruned)
        def __init__(self, name):
            self.algos = set(range(len(ALGOS[name])))

        def get(self, pattern, default=None):
            return self.algos
    tb.algos_of_pattern = lambda pack, name: EveryAlgo(name)
    tune.c_values = c_values
    hint_patterns.of_call = lambda record, values: ()

    warmed = [tb._warm_one((str(tmp / "matmul_tuned"), (16, 17, 1), "nt", 1)),
              tb._warm_one((str(tmp / "rmsnorm_tuned"), (16, 17), None, 0))]
    args = types.SimpleNamespace(reps=2, rounds=2, direct=1, no_compile=False,
                                 busy=tb.busy_cycles_for(torch, tb.BUSY_WAIT_US))
    res = {"format": tb.FORMAT, "seed": tb.EVAL_SEED, "reps": 2, "rounds": 2, "leak_check": {},
           "environment": {"gpu": "Sim", "sm": 90, "torch": "cpu", "triton": "sim",
                           "date": "now"},
           "rows": [], "direct": [], "algos": {}, "seconds": 0, "jit_cache_warmup_seconds": 0}
    for name, pack in packs.items():
        # small shapes of every stratum: the CPU computes every launch's result
        entries = [e for e in tb.plan(tb.adapter(name), pack.inputs)
                   if math_prod(e["shape"]) < 5e6][:6]
        res["leak_check"][name] = tb.leak_check(entries, pack.inputs)
        tb.bench_library(tmp / name, entries, torch, triton, args, res, time.monotonic() + 600,
                         time.monotonic())
    res["summary"] = tb.summarize(res["rows"], res["direct"])
    tb.write_results(res, tmp / "out", "sim")
    res["warmed"], res["zeroed"] = warmed, len(zeroed)
    return res


def math_prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def test_the_gpu_path_on_a_simulated_gpu(tmp_path):
    import pytest
    pytest.importorskip("torch")
    p = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads((tmp_path / "result.json").read_text())
    s = res["summary"]
    assert s["errors"] == 0 and s["valid"], s
    rows = [r for r in res["rows"] if "auto_us" in r]
    assert {r["stratum"] for r in rows} == {"llm", "random-nt", "random-nn", "random"}
    assert all(r["auto_ok"] and r["jit_ok"] and not r["uncaptured"] for r in rows)
    # the JIT's 25 us host launch never shows: where both run one kernel, one time
    same = [r for r in rows if r["same_kernel"]]
    assert same and all(abs(r["jit_over_auto"] - 1) < 1e-6 for r in same)
    assert {r["library"] for r in same} == {"matmul_tuned", "rmsnorm_tuned"}
    assert all("compiled_us" in r for r in rows if r["library"] == "rmsnorm_tuned")
    # every algo directly, the unsupported last one skipped; split-K zeroed C like the library
    direct = res["direct"]
    assert len(direct) == 4 + 3 and sum("skipped" in q for q in direct) == 2
    assert all(q["agree"] and abs(q["jit_over_library"] - 1) < 1e-6
               for q in direct if "skipped" not in q)
    assert res["zeroed"] > 0 and len(res["warmed"]) == 2
    assert "PASS" in (tmp_path / "out" / "sim.md").read_text()


if __name__ == "__main__":
    out = Path(sys.argv[1])
    sys.path.insert(0, str(HERE.parents[1]))
    result = simulate(out)
    (out / "result.json").write_text(json.dumps(result))
