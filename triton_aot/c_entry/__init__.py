"""A captured launcher's whole call as one C function over DLPack tensors (`python -m
triton_aot.c_entry.entry`): from the launcher's op record (`record`, the record its torch op is
made from) and the library descriptions of its kernel libraries, the C source and header of
`NAME(stream, tensors..., outputs..., workspace, workspace_bytes)` and
`NAME_workspace_size(...)`; the record's expressions in C (`expr`).
"""
