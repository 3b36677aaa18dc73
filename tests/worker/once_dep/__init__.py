"""A dep whose import refuses to run twice in one process, as a registry does when a module
registers an op or a class at import (torch.library.define, pydantic-style validators): the
second registration under the same name raises. The mark lives on a module that is never
dropped (sys), so dropping this module and importing it again is caught as well."""

import sys

_MARK = "_rules_triton_test_once_dep_imported"

if getattr(sys, _MARK, False):
    raise RuntimeError("once_dep: imported a second time in one process; a registry refuses "
                       "the second registration of 'once_dep::scale'")
setattr(sys, _MARK, True)

FACTOR = 3.0
