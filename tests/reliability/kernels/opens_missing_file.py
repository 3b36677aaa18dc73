"""A kernel file that reads a file at import which no input of the build holds."""
import os

SIZES = open(os.path.join(os.path.dirname(__file__), "sizes.json")).read()
