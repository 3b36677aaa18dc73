"""In no target's srcs. A compile that imports it anyway sees it raise, and would blame this file
instead of the missing deps."""

raise RuntimeError("undeclared_helper: imported although no target declares it")
