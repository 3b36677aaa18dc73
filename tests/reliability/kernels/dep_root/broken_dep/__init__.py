"""A dep whose own __init__ raises (the kernel file is fine)."""

raise RuntimeError("broken_dep is misconfigured")
