"""C: a variant's launcher (c_variant, for the compile tool's --out_c) and a library's one
C file and header (c_library), rendered from the templates; `python -m
triton_aot.emit_c.link` reads variant records, writes the library's C and its library
description (contract.library).
"""
