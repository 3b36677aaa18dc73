"""The op record (triton_aot.contract.op_record): every committed OP reads back to the same
JSON object, key order included (the capture writes NAME.launcher.bzl from the typed record),
and a malformed record is one line naming the key, for every reader alike."""

import glob
import json
import os

import pytest

from triton_aot.contract import op_record

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_COMMITTED = sorted(glob.glob(os.path.join(_ROOT, "**", "*.launcher.bzl"), recursive=True))


def _op(path):
    scope = {}
    exec(open(path, encoding="utf-8").read(), scope)  # Starlark dict literals are Python
    return scope["OP"]


def test_every_committed_record_is_found():
    assert len(_COMMITTED) >= 15


@pytest.mark.parametrize("path", _COMMITTED, ids=os.path.basename)
def test_committed_records_round_trip(path):
    op = _op(path)
    record = op_record.read(op, path)
    assert json.dumps(record.to_dict()) == json.dumps(op)
    assert record.form in ("launch", "steps", "composite")
    assert len(record.launches) >= 1 and all(l.lib for l in record.launches)


def test_forms_and_fields():
    one = op_record.read({"lib": "k", "args": ["x", "eps: float = 1e-06", "n: static int"],
                          "bind": {"X": "x"}, "outputs": {"Y": "x.shape"}, "fills": {"Y": "0.0"},
                          "algo_choice": [["x.size(0) > 4", "1"]]})
    assert one.form == "launch" and one.returns == ((0, "Y"),)
    assert [(a.name, a.kind, a.static, a.default) for a in one.args] == [
        ("x", "Tensor", False, None), ("eps", "float", False, "1e-06"), ("n", "int", True, None)]
    assert one.launches[0].algo_choice == (("x.size(0) > 4", 1),)
    steps = op_record.read({"args": ["x"], "steps": [{"lib": "a", "args": ["x"]},
                                                     {"lib": "b", "args": ["Y"]}],
                            "returns": [[1, "Z"]]})
    assert steps.form == "steps" and steps.returns == ((1, "Z"),)


@pytest.mark.parametrize("spec, message", [
    ({"lib": "k", "sort": "x"}, "the op: unknown key 'sort' (known: lib, bind"),
    ({"args": ["x"], "steps": [{"lib": "k"}, {"torch": "topk"}]}, "the op: step 1: unknown key 'torch'"),
    ({"lib": "k", "bind": {"n": 3}}, "the op: bind must be a dict of strings"),
    ({"lib": "k", "entry": "fastest"}, "the op: entry must be one of"),
    ({"lib": "k", "algo_choice": [["True", "first"]]}, "algo_choice: ['True', 'first'] is not"),
    ({"args": ["x"], "steps": [{"lib": "k"}], "returns": [[3, "Y"]]}, "returns: step 3 is past"),
    ({"bind": {}}, "the op: no kernel library (lib)"),
    ({"lib": "k", "args": ["x y"]}, "attribute 'args': 'x y' is not 'NAME'"),
    ({"args": [], "composite": {"graph": {}, "launches": []}}, "composite: graph must be a list"),
])
def test_malformed_records_are_one_line(spec, message):
    with pytest.raises(op_record.RecordError) as e:
        op_record.read(spec)
    assert message in e.value.message and "\n" not in e.value.message
