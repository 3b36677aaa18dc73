"""`triton_algo`: one algo (constexpr values + launch meta-parameters) of a kernel library."""

def triton_algo(constexprs = {}, num_warps = None, num_stages = None, num_ctas = None, grid = None, launch_pdl = None, launch_cooperative_grid = None, maxnreg = None, targets = None):
    """Describes one algo of a `triton_kernel_library`, like `triton.Config` does for the JIT.

    Clients pick an algo at run time by its index in `algos` (`NAME(stream, ..., algo_id)`).

    Args:
      constexprs: dict of `tl.constexpr` parameter name -> value: an int, bool, float, None,
        a dtype written `"tl.float16"`, or a string constexpr written as a plain string
        (`"leaky_relu"`; letters, digits, spaces and `_.+-`). The names are those the
        library's `signature` writes as identifier entries (every algo sets those) or
        constexprs the signature leaves out after its last entry (their default, or their
        `@triton.heuristics` value, then applies in the algos that do not set them).
      num_warps: warps per program (default: the library's `num_warps`).
      num_stages: software pipelining stages (default: the library's `num_stages`).
      num_ctas: CTAs per cluster (Hopper); > 1 launches through cuLaunchKernelEx.
      grid: this algo's launch grid; default the library's `grid`. `{NAME}` is replaced by the
        value of constexpr NAME, e.g. "cdiv(M, {BLOCK_M}), 1, 1".
      launch_pdl: launch with programmatic dependent launch.
      launch_cooperative_grid: launch as a cooperative grid.
      maxnreg: register cap per thread (16 to 255; Triton's `maxnreg`, the PTX `.maxnreg`
        directive); CUDA targets only.
      targets: the library targets this algo is compiled for (default: all), e.g.
        `["cuda:90"]` for an algo that needs sm_90 (fp8 dots, TMA). On a device whose chosen
        target the algo lacks, `NAME(..., algo_id)` returns CUDA_ERROR_NO_BINARY_FOR_GPU.

    Returns:
      A string (JSON) for the `algos` attribute.
    """
    if type(constexprs) != "dict":
        fail("triton_algo: constexprs must be a dict of name -> value, got {}".format(type(constexprs)))
    values = {}
    for key, value in constexprs.items():
        if value != None and type(value) not in ("int", "bool", "float", "string"):
            fail("triton_algo: constexprs[{}] must be an int, bool, float, None, a string such as \"leaky_relu\" or a dtype such as \"tl.float16\", got {}".format(key, type(value)))
        values[key] = value
    algo = {"constexprs": values}
    for key, value in [
        ("num_warps", num_warps),
        ("num_stages", num_stages),
        ("num_ctas", num_ctas),
        ("grid", grid),
        ("launch_pdl", launch_pdl),
        ("launch_cooperative_grid", launch_cooperative_grid),
        ("maxnreg", maxnreg),
        ("targets", targets),
    ]:
        if value != None:
            algo[key] = value
    return json.encode(algo)
