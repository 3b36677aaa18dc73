"""A launcher file importing a helper next to it whose import raises (broken_helper.py:3)."""
from broken_helper import twice  # noqa: F401  (line 2: the import, not the cause)


def good(x):
    return x
