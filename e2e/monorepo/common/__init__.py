"""Constants shared by the repository's code."""
