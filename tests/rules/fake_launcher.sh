#!/bin/sh
# Stands in for @rules_triton_python_archive//:launcher.sh in analysis tests; never run.
exit 1
