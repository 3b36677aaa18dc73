"""What the PyTorch-caller benchmarks share: statistics, the environment record, the GPU check,
and finding and calling a torch op that a generated module registers.

Nothing heavy is imported at module level: the cold-start benchmark times its own imports, and
every script must be able to say `error: ...` on a machine without torch or a GPU.
"""
from __future__ import annotations

import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def log(tool: str, msg: str) -> None:
    print(f"[{tool} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def fail(tool: str, msg: str, code: int = 2):
    """The one line a user reads when the benchmark cannot run at all."""
    print(f"{tool}: error: {msg}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def med(values):
    return statistics.median(values) if values else None


def median_ci95(values: list) -> tuple:
    """Distribution-free 95% confidence interval of the median (binomial order statistics);
    the range itself when there are too few values for one."""
    v = sorted(values)
    n = len(v)
    if n < 6:
        return (v[0], v[-1]) if v else (None, None)
    half = 0.98 * n ** 0.5  # 1.96 * sqrt(n) / 2
    lo, hi = int(n / 2 - half), int(n / 2 + half + 1)
    return v[max(lo, 0)], v[min(hi, n - 1)]


def import_torch_with_gpu(tool: str):
    """torch, with a CUDA GPU it can use; otherwise one `error:` line and exit 2."""
    try:
        import torch
    except ImportError as e:
        fail(tool, f"cannot import torch ({e}); run this on the GPU machine (python3 with torch "
                   "and triton)")
    if not torch.cuda.is_available():
        fail(tool, f"torch {torch.__version__} sees no CUDA GPU; run this on the GPU machine")
    return torch


def default_out() -> Path:
    return Path(os.environ["OUT"]) if os.environ.get("OUT") else REPO / "bench" / "results"


def environment(torch) -> dict:
    env = {"python": sys.version.split()[0], "platform": platform.platform(),
           "torch": torch.__version__, "torch_cuda": torch.version.cuda}
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001 - recorded, the JIT rows then say why they are missing
        env["triton"] = f"unavailable: {e}"
    p = torch.cuda.get_device_properties(0)
    env.update({"gpu": p.name, "sm": f"{p.major}{p.minor}"})
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        env["driver"] = out.stdout.strip().splitlines()[0] if out.stdout.strip() else "?"
    except (OSError, subprocess.SubprocessError):
        env["driver"] = "?"
    try:
        env["cpu"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                          if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    env["cpus"] = os.cpu_count()
    return env


def pin_to_one_cpu() -> int | None:
    """Pins the calling thread to the last CPU it may run on (CPU 0 takes most interrupts), so
    that a migration does not land in one method's loop."""
    try:
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return cpu
    except (AttributeError, OSError):
        return None


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- torch ops
#
# The op side needs nothing but the path of the module that triton_torch_library generates:
# importing it registers the library's entry points as torch ops. Which ops it registered is read
# from the dispatcher (before/after), and the call is bound from the op's own schema, so neither
# the namespace nor the argument convention is hard-coded here.


def registered_ops(torch) -> set[str]:
    """Every op the dispatcher knows, as 'ns::name' (overload names dropped)."""
    return {n.split(".")[0] for n in torch._C._dispatch_get_all_op_names()}


def import_op_module(torch, path: Path, name: str = "rules_triton_torch_ops"):
    """Imports the generated module; returns (module, the ops its import registered)."""
    before = registered_ops(torch)
    module = load_module(path, name)
    return module, sorted(registered_ops(torch) - before)


def qualified_op_name(new_ops: list[str], wanted: list[str]) -> str:
    """'ns::name' of the one newly registered op whose name is one of `wanted` (tried in
    order)."""
    for w in wanted:
        hits = [o for o in new_ops if o.split("::", 1)[1] == w]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise LookupError(f"several ops are named {w}: {hits}; pass the qualified name")
    raise LookupError(f"no op named {' or '.join(wanted)} among those the module registered: "
                      f"{new_ops or 'none'}")


def pick_op(torch, new_ops: list[str], wanted: list[str], qualified: str | None = None):
    """The op packet (torch.ops.NS.NAME) for one entry point: `qualified` ('ns::name') when
    given, else the one newly registered op named one of `wanted`."""
    ns, _, name = (qualified or qualified_op_name(new_ops, wanted)).partition("::")
    return getattr(getattr(torch.ops, ns), name)


def op_schema(packet):
    overloads = packet.overloads()
    overload = "default" if "default" in overloads else overloads[0]
    return getattr(packet, overload)._schema


def bind_op_args(packet, named: dict, ordered: list) -> tuple[list, dict]:
    """(args, kwargs) for a call of `packet`, from its schema.

    `named` maps the kernel's argument names (and launch arguments) to values; a schema argument
    of the same name (or the same name without a `_ptr` suffix) takes that value. When some
    argument has no such name, every argument is bound by position and kind instead: tensors in
    the order of `ordered`, then scalars in the order of `ordered`. Arguments with a default are
    left to it unless named; positional arguments are used as far as possible (keywords cost
    the call a little more)."""
    schema = op_schema(packet)
    aliases = dict(named)
    for k, v in named.items():
        if k.endswith("_ptr"):
            aliases.setdefault(k[:-4], v)
    args = schema.arguments
    required = [a for a in args if not a.has_default_value()]
    if all(a.name in aliases for a in required):
        out, kwargs = [], {}
        for a in args:
            if a.name not in aliases:
                continue  # keeps its default; what follows goes by keyword
            if kwargs or a.kwarg_only or len(out) < args.index(a):
                kwargs[a.name] = aliases[a.name]
            else:
                out.append(aliases[a.name])
        return out, kwargs
    tensors = [v for v in ordered if hasattr(v, "data_ptr")]
    scalars = [v for v in ordered if not hasattr(v, "data_ptr")]
    out = []
    for a in required:
        kind = str(a.type)
        pool = tensors if "Tensor" in kind else scalars
        if not pool:
            raise TypeError(f"cannot bind {schema}: no value left for {a.name} ({kind})")
        out.append(pool.pop(0))
    if tensors and not any("Tensor" in str(r.type) for r in schema.returns):
        raise TypeError(f"cannot bind {schema}: {len(tensors)} tensor(s) left over")
    return out, {}
