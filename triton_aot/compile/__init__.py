"""One kernel variant, from the rule's attributes to the variant record and its images
(`python -m triton_aot.compile.compile`, also as a persistent worker), plus the tools that
must import the kernel (disasm, autotune_configs). The only package that imports triton;
it reads core and contract and renders a standalone variant's C through emit_c.
"""
