"""What one stage hands the next, as typed records with one reader each: the variant record
a compile action writes and the link reads (variant, read back by record_reader), and the
library description the link writes for the torch ops and the tuner (library: C functions,
their parameters with C names and types, variants with specialization index, hints and
symbol, algos, tuning), with the pieces both sides share: hint patterns and the tuning table
format and lookup (tuning_table). No triton, no C rendering.
"""
