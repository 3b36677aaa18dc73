"""A kernel file that raises while it is imported."""
import triton

raise RuntimeError("configuration missing")
