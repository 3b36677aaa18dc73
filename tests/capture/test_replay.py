"""The battery's ops replayed against their launchers, bit for bit, on CPU in Triton's
interpreter, at the examples' sizes and at sizes no example used (1, 0, 3, 77, the edges of
every condition): a numerical check of the op records' bindings, grids, algos, allocations,
fills and returns, with no GPU.

The capture and the op's plan at each size (triton_aot.capture.proof.plan_at: the launches the
op makes there, as data) are made here; a child process with TRITON_INTERPRET=1 runs the
launcher on random CPU tensors and the plan's launches on the same tensors, and compares what
each returns and every input afterwards.
"""

import importlib
import inspect
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

_MAX_SIZE = 4097
_MAX_PROGRAMS = 256  # the interpreter runs every program on the CPU, one after another
_POINTS_PER_CALL = 8


def _plans():
    from test_battery import CASES
    import battery_launchers
    from triton_aot.capture import op, proof, tool, tracer
    from triton_aot.capture.examples import FakeInputs
    from triton_aot.compile import build_driver, build_torch_cuda
    from triton_aot.core.errors import UserError

    plans = []
    with build_driver.answering_for("cuda", 90, 32), \
            build_torch_cuda.answering_for("cuda", 90, 32):
        for case, (name, calls, sizes, _, reason) in CASES.items():
            if reason:
                continue
            fn = getattr(battery_launchers, name)
            try:
                _, decl, record = tool.capture_launcher(fn, calls, sizes, name, "//t:" + case)
            except UserError:
                continue  # refused: test_battery checks the line
            if record.form == "composite":
                continue
            for text in calls:
                own, body = tool.split_sizes(text, case)
                used = {n: v for n, v in (sizes | own).items() if n in body}
                guards = [g for l in record.launches for g in l.checks]
                points = [p for p in proof.size_points(used, guards)
                          if all(v <= _MAX_SIZE for v in p.values())][:_POINTS_PER_CALL]
                for point in points:
                    static = proof.static_text(body, point)
                    inputs = FakeInputs({}, case)
                    try:
                        call = tracer.capture_call(fn, inputs, inputs.parse(static, case), case)
                        plan = proof.plan_at(record, decl,
                                             proof._renamed(call, op.renames([call])))
                    except (UserError, proof._Refused):
                        continue  # the launcher fails there, or the op refuses the call
                    programs = sum(l["grid"][0] * l["grid"][1] * l["grid"][2]
                                   for l in plan["launches"])
                    if programs > _MAX_PROGRAMS:
                        continue
                    plans.append({"case": case, "launcher": name, "call": static,
                                  "plan": plan})
    return plans


def test_ops_replay_their_launchers_bit_for_bit_in_the_interpreter(tmp_path):
    pytest.importorskip("triton")
    plans = _plans()
    cases = {p["case"] for p in plans}
    assert len(cases) >= 20 and len(plans) >= 100, (len(cases), len(plans))
    # one plan made wrong on purpose (its first launch's grid halved): the check must see it
    wrong_plan = json.loads(json.dumps(next(p for p in plans if p["case"] == "two_outputs")))
    wrong_plan["case"] = "halved_grid"
    launch = wrong_plan["plan"]["launches"][0]
    launch["grid"][0] = max(launch["grid"][0] // 2, 1)
    path = tmp_path / "plans.json"
    path.write_text(json.dumps(plans + [wrong_plan]), encoding="utf-8")
    root = os.path.dirname(os.path.dirname(HERE))
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--interpreter", str(path)],
        env=dict(os.environ, TRITON_INTERPRET="1",
                 PYTHONPATH=os.pathsep.join([root, HERE] + sys.path)),
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    wrong = {k: v for k, v in results.items() if v != "same"}
    assert list(wrong) == [f"halved_grid {wrong_plan['call']}"], wrong
    sizes = {p["call"] for p in plans}
    assert any("(1" in s or ", 1" in s for s in sizes) and any("(0" in s for s in sizes)
    print(f"{len(results) - 1} replays of {len(cases)} ops: all bit-identical to their launchers")


# --- the child: TRITON_INTERPRET=1 ------------------------------------------------------------

def _factories(torch, seed):
    generator = torch.Generator().manual_seed(seed)
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
              "fp64": torch.float64, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
              "i64": torch.int64, "u8": torch.uint8}

    def factory(dtype):
        def make(*sizes, strides=None, offset=0):
            if strides is None:
                strides, step = [], 1
                for s in reversed(sizes):
                    strides.append(step)
                    step *= max(s, 1)
                strides = tuple(reversed(strides))
            extent = offset + (sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
                               if all(s > 0 for s in sizes) else 0)
            if dtype.is_floating_point:
                buf = torch.randn(max(extent, 1), generator=generator).to(dtype)
            else:
                buf = torch.randint(-50, 50, (max(extent, 1),), generator=generator).to(dtype)
            return buf.as_strided(sizes, strides, offset)
        return make
    return {name: factory(d) for name, d in dtypes.items()}


def _call(torch, fn, text, seed):
    scope = _factories(torch, seed)
    scope["_call"] = lambda *a, **k: (a, k)
    args, kwargs = eval(f"_call({text})", scope)  # the test's own call texts
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return args, kwargs, dict(bound.arguments)


def _replay(torch, plan, named):
    def arg(value_name):
        name = value_name if value_name in named else value_name.removesuffix("_arg")
        return named[name]

    allocs = {}
    for key, spec in plan["allocs"].items():
        t = torch.empty(spec["shape"], dtype=getattr(torch, spec["dtype"]))
        if spec["fill"] is not None:
            t.fill_(float(spec["fill"]))
        allocs[key] = t
    for launch in plan["launches"]:
        kernel = getattr(importlib.import_module(launch["module"]), launch["kernel"])
        values = {}
        for pname in launch["order"]:
            if pname in launch["constexprs"]:
                values[pname] = launch["constexprs"][pname]
                continue
            kind, value = launch["args"].get(pname, ("none", None))
            if kind == "tensor":
                values[pname] = allocs[value] if value in allocs else arg(value.partition(":")[2])
            elif kind == "float" and isinstance(value, str):
                values[pname] = arg(value)
            else:
                values[pname] = value
        kernel[tuple(launch["grid"])](**values, num_warps=launch["num_warps"],
                                      num_stages=launch["num_stages"], **launch["options"])
    return [allocs[r] for r in plan["returns"]]


def _run_child(path):
    import torch
    import battery_launchers
    results = {}
    for item in json.loads(open(path, encoding="utf-8").read()):
        fn = getattr(battery_launchers, item["launcher"])
        key = f"{item['case']} {item['call']}"
        args, kwargs, theirs_named = _call(torch, fn, item["call"], 0)
        inputs = {id(t.untyped_storage()) for t in theirs_named.values()
                  if isinstance(t, torch.Tensor)}
        result = fn(*args, **kwargs)
        items = result if isinstance(result, (tuple, list)) else () if result is None \
            else (result,)
        theirs = [t for t in items if isinstance(t, torch.Tensor)
                  and not any(t.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()
                              for v in theirs_named.values() if isinstance(v, torch.Tensor))]
        _, _, ours_named = _call(torch, fn, item["call"], 0)
        ours = _replay(torch, item["plan"], ours_named)
        del inputs
        if len(ours) != len(theirs):
            results[key] = f"{len(ours)} returned, the launcher {len(theirs)}"
        elif not all(o.shape == t.shape and o.dtype == t.dtype and torch.equal(o, t)
                     for o, t in zip(ours, theirs)):
            results[key] = "returned values differ"
        elif not all(torch.equal(ours_named[n], theirs_named[n]) for n, v in theirs_named.items()
                     if isinstance(v, torch.Tensor)):
            results[key] = "inputs differ afterwards"
        else:
            results[key] = "same"
    print(json.dumps(results))


if __name__ == "__main__" and sys.argv[1:2] == ["--interpreter"]:
    _run_child(sys.argv[2])
