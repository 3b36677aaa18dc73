"""The concepts every stage shares, and nothing that imports triton: the one error type and
the tools' command-line convention (cli: absl flags, one `error:` line), C names and the C ABI
of an argument (abi, c_syntax), the concept tables that Starlark copies are generated from
(targets, launch_options, reset_to_zero, triton_types), and the grammars of the BUILD
attributes (signature, binding of a signature to kernel parameters, grid).
"""
