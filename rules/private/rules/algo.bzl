"""`triton_algo`: one algo (constexpr values + launch meta-parameters) of a kernel library."""

load("//rules/private/generated:reset_to_zero.bzl", "EXAMPLE_EXTENTS", "EXAMPLE_NAME", "FORMS_TEXT")

def triton_algo(constexprs = {}, num_warps = None, num_stages = None, num_ctas = None, grid = None, launch_pdl = None, launch_cooperative_grid = None, maxnreg = None, enable_fp_fusion = None, targets = None, reset_to_zero = None):
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
      enable_fp_fusion: whether `a * b + c` may be contracted into one `fma` (default True,
        Triton's default). False compiles the algo as a launch with `enable_fp_fusion=False`
        (`kernel[grid](..., enable_fp_fusion=False)`) does: separate multiplies and adds, with
        their own rounding. Set it to match a launcher that passes it, or the library's results
        differ from the launcher's in the last bits.
      targets: the library targets this algo is compiled for (default: all), e.g.
        `["cuda:90"]` for an algo that needs sm_90 (fp8 dots, TMA). On a device whose chosen
        target the algo lacks, `NAME(..., algo_id)` returns CUDA_ERROR_NO_BINARY_FOR_GPU.
      reset_to_zero: memory the launcher zeroes before every launch of this algo, as Triton's
        `@triton.autotune(reset_to_zero = [...])` and split-K configs' `pre_hook =
        init_to_zero("C")` do for kernels that accumulate with `tl.atomic_add`: a dict of pointer
        argument name -> extents, e.g. `{"c_ptr": "M, N, stride_cm"}`. The key is a pointer
        argument of the kernel (`*fp32`, `*fp16`, `*bf16`, `*i8`, ...; not a tensor descriptor,
        a constexpr or a None argument). The value is `"rows, cols, row_stride"` (2-D: `rows`
        rows of `cols` contiguous elements, `row_stride` elements apart) or `"count"` (1-D:
        `count` contiguous elements); the element size is the pointer's type's. Extents use the
        grid's language (integer arguments, `launch_args`, integer literals, `+ - * / % ( )`,
        `cdiv`, `min`, `max`, `{CONSTEXPR}` placeholders filled per algo) except `NUM_SMS`. The
        launcher zeroes each region on the call's stream (cuMemsetD8/D16/D32Async, 2-D
        cuMemsetD2D8/D2D16/D2D32Async: the widest unit the element size, address and pitch
        allow; memset nodes under CUDA-graph capture), then launches; every entry point that
        launches the algo does (`NAME(..., algo_id)`, `NAME_default`, `NAME_auto`). A zero
        extent zeroes nothing; an empty grid still zeroes and launches nothing; a negative
        extent, or `row_stride < cols`, returns CUDA_ERROR_INVALID_VALUE with nothing zeroed or
        launched; a failed memset is returned and nothing is launched. CUDA targets only.

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
    if reset_to_zero != None:
        if type(reset_to_zero) != "dict":
            fail("triton_algo: reset_to_zero must be a dict of pointer argument name -> extents ({}), e.g. {{\"{}\": \"{}\"}}; got {}".format(FORMS_TEXT, EXAMPLE_NAME, EXAMPLE_EXTENTS, type(reset_to_zero)))
        for key, value in reset_to_zero.items():
            if type(key) != "string" or type(value) != "string":
                fail("triton_algo: reset_to_zero must map argument names (strings) to extents (strings such as \"{}\"); got {} -> {}".format(EXAMPLE_EXTENTS, repr(key), repr(value)))
        algo["reset_to_zero"] = reset_to_zero
    for key, value in [
        ("num_warps", num_warps),
        ("num_stages", num_stages),
        ("num_ctas", num_ctas),
        ("grid", grid),
        ("launch_pdl", launch_pdl),
        ("launch_cooperative_grid", launch_cooperative_grid),
        ("maxnreg", maxnreg),
        ("enable_fp_fusion", enable_fp_fusion),
        ("targets", targets),
    ]:
        if value != None:
            algo[key] = value
    return json.encode(algo)
