"""A kernel file that imports a dep that reads a data file at import."""
import needs_data  # noqa: F401
