"""Shared tile helpers of the repository's kernels."""
