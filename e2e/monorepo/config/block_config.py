"""Kernel settings kept in a data file, read when the module is imported."""

import json
import os

with open(os.path.join(os.path.dirname(__file__), "block_config.json"), encoding="utf-8") as f:
    SCALE = json.load(f)["scale"]
