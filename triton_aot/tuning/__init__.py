"""Tuning tables for NAME_auto: the tuner run on the GPU machine (tune), empty or seeded
tables (seed), the hint patterns a library's tuning calls need (call_hints) and which algos each
specialization must keep (tuning_reach), a model's layers as tuning calls (model_shapes),
their split over the GPUs of a host (shards) and the tuner's flags that the build machine checks
and packs too (tune_flags). Reads libraries only through their library description
and variant records.
"""
