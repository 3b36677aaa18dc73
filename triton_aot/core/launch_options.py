"""An algo's launch options: how Triton compiles and launches one configuration (triton.Config's
num_warps, num_stages, num_ctas and maxnreg; the launcher's launch_pdl and
launch_cooperative_grid; the compile option enable_fp_fusion, which a launcher may pass at
launch), with their defaults and the values each may take.

Defined here once. rules/private/generated/launch_options.bzl is generated from this table by
tools/gen_concepts.py: triton_algo's keys and validate.bzl's defaults and checks (values, the
CUDA arch an option needs, CUDA only) read it. The compile tool's flags (compile.py), its checks
(triton_adapter.check_options, CompileOptions) and the record (variant.LaunchConfig) name the
same options; //tools:concepts_current_test holds them to this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchOption:
    name: str
    doc: str
    # The value when an algo does not set it; None for num_warps and num_stages means the
    # library's attribute of that name, for maxnreg that there is none (Triton's default).
    default: int | bool | None
    values: tuple[int, ...] = ()  # the allowed values, when they are few
    low: int | None = None  # else the allowed range
    high: int | None = None
    spelled: str = ""  # the allowed values in words, for messages
    # Set to anything but its default, the option needs a CUDA arch at least this new ...
    min_cuda_arch: int | None = None
    # ... and a CUDA target: the HIP launcher does not support it.
    cuda_only: bool = False

    @property
    def is_bool(self) -> bool:
        return isinstance(self.default, bool)

    def allows(self, value) -> bool:
        if self.is_bool:
            return isinstance(value, bool)
        if value is None:
            return self.default is None
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        if self.values:
            return value in self.values
        return ((self.low is None or value >= self.low) and
                (self.high is None or value <= self.high))


OPTIONS = (
    LaunchOption("num_warps", "warps per program", None, values=(1, 2, 4, 8, 16, 32),
                 spelled="a power of two from 1 to 32"),
    LaunchOption("num_stages", "software pipelining stages", None, low=1,
                 spelled="a positive int"),
    # Thread block clusters (Hopper): > 1 launches through cuLaunchKernelEx.
    LaunchOption("num_ctas", "CTAs per cluster", 1, values=(1, 2, 4, 8, 16),
                 spelled="1, 2, 4, 8 or 16", min_cuda_arch=90, cuda_only=True),
    LaunchOption("launch_cooperative_grid", "launch as a cooperative grid", False,
                 cuda_only=True),
    # Programmatic dependent launch is a Hopper feature.
    LaunchOption("launch_pdl", "launch with programmatic dependent launch", False,
                 min_cuda_arch=90, cuda_only=True),
    # What the register file allows a thread (ptxas .maxnreg).
    LaunchOption("maxnreg", "register cap per thread", None, low=16, high=255,
                 spelled="an int from 16 to 255", cuda_only=True),
    # Whether LLVM may contract a * b + c into one fma (Triton's default, as the JIT's); a
    # launcher that passes enable_fp_fusion=False at launch gets separate mul and add, whose
    # rounding differs, so the algo must say which it is.
    LaunchOption("enable_fp_fusion", "contract a * b + c into fma", True),
)

BY_NAME = {o.name: o for o in OPTIONS}

# The other compile options the JIT takes at launch (`kernel[grid](..., debug=True)`: any field
# of the backend's CUDAOptions / HIPOptions) that the compile tool fixes, at these values: a
# launch that passes one at this value builds what the JIT would, one at another value cannot be
# built (the capture refuses it). The JIT sets debug and instrumentation_mode itself; the rest a
# launcher sets on purpose. Every option neither here nor in OPTIONS is refused at any value.
COMPILED_AS = {
    "debug": False,  # device_assert and overflow checks compiled out
    "sanitize_overflow": True,  # only acts with debug
    "instrumentation_mode": "",
}
MAXNREG_RANGE = (BY_NAME["maxnreg"].low, BY_NAME["maxnreg"].high)
