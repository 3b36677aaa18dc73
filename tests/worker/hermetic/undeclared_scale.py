"""In no target's srcs: a compile of scale_optional.py must not see it (it would make SCALE 5.0)."""

SCALE = 5.0
