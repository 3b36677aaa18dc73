"""On a GPU machine: the build-time torch.cuda answers for the device's own target, side by side
with what torch.cuda answers on that device (so the table in build_torch_cuda.py is checked
against real hardware, not only against itself).

    python3 tests/gpu_torch_cuda/compare_answers.py [--out results.json]

Needs torch with CUDA and a GPU; triton_aot from this checkout (no triton import needed).
Exit code 1 when an answered value differs from the device's.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import torch  # noqa: E402

from triton_aot.compile import build_torch_cuda  # noqa: E402


def real_answers():
    props = torch.cuda.get_device_properties(0)
    major, minor = torch.cuda.get_device_capability(0)
    return {
        "is_available()": torch.cuda.is_available(),
        "get_device_capability()": (major, minor),
        "get_device_name()": torch.cuda.get_device_name(0),
        "is_bf16_supported()": torch.cuda.is_bf16_supported(),
        "get_device_properties().name": props.name,
        "get_device_properties().major": props.major,
        "get_device_properties().minor": props.minor,
        "get_device_properties().warp_size": getattr(props, "warp_size", 32),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    real = real_answers()
    major, minor = real["get_device_capability()"]
    arch = major * 10 + minor
    table = build_torch_cuda.answers("cuda", arch, 32)
    rows, differs = [], 0
    for key, value in real.items():
        ours = table[key]
        same = (tuple(ours) if isinstance(ours, (list, tuple)) else ours) == \
            (tuple(value) if isinstance(value, (list, tuple)) else value)
        differs += not same
        rows.append({"question": key, "device": value, "build_time": ours, "same": same})
        print(f"{'ok  ' if same else 'DIFF'} torch.cuda.{key}: device {value!r}, build time {ours!r}")
    # Answered differently on purpose: the device's count and torch's compiled-in arch list.
    notes = {"device_count()": torch.cuda.device_count(),
             "get_arch_list()": torch.cuda.get_arch_list(),
             "build_time get_arch_list()": table["get_arch_list()"]}
    print("not compared:", json.dumps(notes))
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "target": f"cuda:{arch}", "rows": rows, "differ": differs, "not_compared": notes}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, sort_keys=True, default=str)
            f.write("\n")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
