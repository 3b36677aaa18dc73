"""A captured launcher's op record, read for its C entry: what the C can run, or one refusal.

The record is `OP` of NAME.launcher.bzl, read by triton_aot.contract.op_record (the one reader
of its keys): the launcher's arguments, and per launch the kernel library, the binding of every
C parameter, the checks, the contiguous inputs, the tensors the launch allocated and the algo
conditions; several launches are steps, with `returns` naming what the launcher hands back.

The C entry runs exactly that: checks, bindings, algo choice, launches in order, allocations
carved from the caller's workspace (or passed by the caller when returned), those the launcher
made with `torch.zeros` / `torch.full` (`fills`) memset on the stream first. What only torch can
run (torch work between the launches, such as a sort or a reduction: a composite record) is
refused as a whole, in one line, so no C entry ever runs part of what the launcher does.
"""

from __future__ import annotations

from triton_aot.contract import op_record
from triton_aot.contract.op_record import LaunchOp, OpArg, OpRecord  # noqa: F401 (re-exported)
from triton_aot.core.errors import UserError

# Argument kinds: tensors, and the scalars C passes by value.
ARG_KINDS = ("Tensor", "float", "int")


class NoCEntry(UserError):
    """The record holds work the C entry cannot run: the launcher gets no C entry."""


def refuse(what: str) -> NoCEntry:
    return NoCEntry(f"the launcher's record has {what}, which its C entry cannot run: this "
                    "launcher has no C entry; call its torch op (launcher_op) instead")


def composite_refusal(record: OpRecord) -> NoCEntry:
    """A launcher that computes with torch (its op is a composite of aten calls and kernel
    launches): refused naming the launcher's line and its first torch call."""
    work = record.composite.torch_work if record.composite else ""
    return NoCEntry(f"{work or 'the launcher'}: the launcher computes with torch besides its "
                    "kernel launches, and a C entry runs no torch: call its torch op "
                    "(launcher_op), or move that torch work into a kernel and capture again")


def read(op: object) -> OpRecord:
    """The record of `op` (the OP dict); NoCEntry when it holds anything the C cannot run."""
    try:
        record = op_record.read(op)
    except op_record.RecordError as e:
        raise refuse(f"a malformed op ({e.message})") from None
    if record.form == "composite":
        raise composite_refusal(record)
    for a in record.args:
        if a.kind not in ARG_KINDS or a.static:
            raise refuse(f"an argument of kind {a.kind!r} ({a.text!r})")
    for i, launch in enumerate(record.launches):
        if launch.entry == "algo":
            raise refuse(f"entry 'algo' (an algo_id argument) in launch {i}")
    return record
