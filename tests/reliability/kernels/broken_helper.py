"""A helper module next to its kernel file (both in the library's srcs) that raises at import."""

SIZES = {"small": 64}["large"]  # line 3


def twice(x):
    return x + x
