"""Tuning tables for NAME_auto: the tuner run on the GPU machine (tune), empty or seeded
tables (seed), the hint patterns a library's tuning calls need (call_hints) and which algos each
specialization must keep (tuning_reach), a model's layers as tuning calls (model_shapes) and
their split over the GPUs of a host (shards). Reads libraries only through their library description
and variant records.
"""
