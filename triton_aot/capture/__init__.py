"""Capture: a kernel declaration taken from the launcher its author wrote and a few example calls.

- `examples`: the example calls' fake inputs (sizes named as dynamic become ShapeEnv symbols);
- `tracer`: runs the launcher on them with no GPU and records every `kernel[grid](...)`;
- `record`: the typed record of what was captured (one per launch of one example call);
- `declaration`: the records of all example calls merged into `triton_kernel_library`
  attributes, rendered as a .bzl the BUILD file loads and as explicit BUILD text;
- `tool`: the command line (`python3 -m triton_aot.capture.tool`), run by a build action.
"""
