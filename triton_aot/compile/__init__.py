"""One kernel variant, from the rule's attributes to the variant record and its images
(`python -m triton_aot.compile.compile`, also as a persistent worker), plus the tools that
must import the kernel (disasm, autotune_configs). It imports triton (as capture/ does, which
runs launchers under Triton's JIT); it reads core and contract and renders a standalone
variant's C through emit_c.
"""
