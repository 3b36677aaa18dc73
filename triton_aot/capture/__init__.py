"""Capture: a kernel declaration taken from the launcher its author wrote and a few example calls.

Contract: in, a launcher (a Python function that runs `kernel[grid](...)`) and example calls; out,
a declaration (`NAME.launcher.bzl`: triton_kernel_library attributes and a triton_torch_op) that
the BUILD file loads, so the stages after it see only what an explicit declaration gives them.
Like compile/, it imports triton (the launcher runs under Triton's JIT, with the build-time
driver) and the kernel files; no other stage imports it.

- `examples`: the example calls' fake inputs (sizes named as dynamic become ShapeEnv symbols);
- `tracer`: runs the launcher on them with no GPU and records every `kernel[grid](...)`;
- `record`: the typed record of what was captured (one per launch of one example call);
- `declaration`: the records of all example calls merged into `triton_kernel_library`
  attributes, rendered as a .bzl the BUILD file loads and as explicit BUILD text;
- `tool`: the command line (`python3 -m triton_aot.capture.tool`), run by a build action.
"""
