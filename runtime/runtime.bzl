"""The cc_library of one backend's runtime: its table and hooks over the shared core."""

load("@rules_cc//cc:cc_library.bzl", "cc_library")

# The core that every backend's runtime compiles (trt_core.inc is included by its .c file).
CORE_HDRS = [
    "trt_core.h",
    "trt_grid.h",
    "trt_slots.h",
]

def trt_runtime_library(name, src, hdrs, deps = [], **kwargs):
    """One backend's runtime: one translation unit, compiled once per build.

    Args:
      name: the target.
      src: the backend's .c file (its tables and hooks; it includes trt_core.inc).
      hdrs: the backend's own headers (the core's are added).
      deps: e.g. the backend's API headers.
      **kwargs: passed to cc_library.
    """
    cc_library(
        name = name,
        srcs = [src],
        hdrs = CORE_HDRS + hdrs,
        # The core's code, included once by each backend's .c file.
        textual_hdrs = ["trt_core.inc"],
        # Optimised in every compilation mode: this is the launch path of every kernel library
        # (and the smaller code), like the generated C, which the rule compiles at -O2 too.
        copts = ["-O2"],
        # Generated C does `#include "trt_runtime.h"` (or "trt_hip_runtime.h").
        includes = ["."],
        # The driver is opened at run time (dlopen), never linked.
        linkopts = [
            "-ldl",
            "-lpthread",
        ],
        # Always the static archive: its symbols are hidden (nothing but the generated API is
        # ever exported), so a test's dynamic-mode libruntime.so could not be linked against.
        linkstatic = True,
        deps = deps,
        **kwargs
    )
