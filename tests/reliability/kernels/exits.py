"""A kernel file that calls sys.exit() while it is imported."""
import sys

sys.exit(3)
