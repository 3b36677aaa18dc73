"""In no target's srcs: a capture of launch_optional.py must not see it (BLOCK would be 256)."""

BLOCK = 256
