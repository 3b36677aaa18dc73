"""The forms of an algo's reset_to_zero regions, for triton_algo and validate.bzl.

Generated from triton_aot/core/reset_to_zero.py by tools/gen_concepts.py: do not edit.
//tools:concepts_current_test fails when this file is stale.
"""

# How many extents a region may have.
EXTENT_COUNTS = [
    1,
    3,
    4,
]

# The forms, as messages name them.
FORMS_TEXT = "'count' (1-D), 'rows, cols, row_stride' (2-D, in elements) or 'rows, cols, row_stride, col_stride' (a strided matrix, either stride may be the unit one)"

# A region as messages show one: its pointer argument ...
EXAMPLE_NAME = "c_ptr"

# ... and its extents.
EXAMPLE_EXTENTS = "M, N, stride_cm"
