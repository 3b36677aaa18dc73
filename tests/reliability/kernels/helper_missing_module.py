"""A helper module next to its kernel file that imports a package no dep provides."""

import not_installed_helper_pkg  # noqa: F401  (line 3: the import that fails)


def twice(x):
    return x + x
