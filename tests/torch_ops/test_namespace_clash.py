"""Two triton_torch_library targets of one namespace imported in one process (reliability
catalogue case torch_namespace_clash_at_import): the second import is refused naming both
libraries, the attribute and the fix, and the first library's ops stay as they were."""

import pytest
import torch

MESSAGE = ("//tests/torch_ops:clashing_ops: attribute 'namespace': 'rules_triton_aligned' (ops "
           "rules_triton_aligned::add) is already registered in this process by "
           "//tests/torch_ops:aligned_ops")
FIX = "give //tests/torch_ops:clashing_ops another namespace"


def test_second_library_of_a_namespace_is_refused_naming_both():
    from tests.torch_ops import aligned_ops
    with pytest.raises(ImportError) as info:
        from tests.torch_ops import clashing_ops  # noqa: F401
    message = str(info.value)
    assert MESSAGE in message and FIX in message, message
    assert "\n" not in message
    # the first library's op is untouched
    assert str(torch.ops.rules_triton_aligned.add.default._schema) == \
        "rules_triton_aligned::add(Tensor x, Tensor y) -> Tensor"
    assert aligned_ops.LABEL == "//tests/torch_ops:aligned_ops"
