"""An autotuned kernel file that takes `triton` and `tl` from a dep (as vLLM's kernels do), which
switched Triton off with module-object placeholders: its kernel is then a plain function."""
from triton_off_module import tl, triton


@triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass
