"""A dep that reads a data file at import, which its py_library does not list."""
import os

with open(os.path.join(os.path.dirname(__file__), "table.json")) as f:
    TABLE = f.read()
