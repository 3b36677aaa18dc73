"""A kernel file that imports a dep whose __init__ raises."""
import broken_dep  # noqa: F401
