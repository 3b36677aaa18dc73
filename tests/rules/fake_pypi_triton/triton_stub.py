# Stands in for a rules_python pip hub's `triton` package in the toolchain analysis test.
