import json, sys, traceback
from triton_aot.compile import build_driver, build_torch_cuda
from triton_aot.capture import tool
from triton_aot.core.errors import UserError
import battery_launchers as B

CASES = [
 ("two_slices", ["fp32(n), fp32(n)"], {"n": 1000}),
 ("offset_slice", ["fp32(n)"], {"n": 1000}),
 ("returned_flat_view", ["fp32(rows, 64)"], {"rows": 100}),
 ("returned_transpose", ["fp32(rows, 64)"], {"rows": 100}),
 ("transposed_input", ["fp32(rows, 64)"], {"rows": 100}),
 ("flattened_input", ["fp32(rows, 64)"], {"rows": 100}),
 ("input_column_slice", ["fp32(rows, 64)"], {"rows": 100}),
 ("in_place_return_input", ["fp32(n)"], {"n": 1000}),
 ("in_place_return_input_view", ["fp32(n)"], {"n": 1000}),
 ("in_place_return_none", ["fp32(n)"], {"n": 1000}),
 ("same_tensor_twice", ["fp32(n)"], {"n": 1000}),
 ("out_and_none", ["fp32(n)"], {"n": 1000}),
 ("same_output_twice", ["fp32(n)"], {"n": 1000}),
 ("dummy_buffer", ["fp32(n)"], {"n": 1000}),
 ("out_argument_slice", ["fp32(n), fp32(2 * n)"], {"n": 1000}),
 ("out_argument_offset", ["fp32(n), fp32(2 * n)"], {"n": 1000}),
 ("two_outputs", ["fp32(n)"], {"n": 1000}),
 ("zeros_then_kernel", ["fp16(n)"], {"n": 1000}),
 ("full_then_kernel", ["fp16(n)"], {"n": 1000}),
 ("copy", ["fp32(1)"], {}),
 ("copy", ["fp32(0)"], {}),
 ("copy", ["fp32(size)", "fp32(1)"], {"size": 1000}),("copy", ["fp32(size)", "fp32(0)"], {"size": 1000}),("rows_of_3d", ["fp32(batch, seq, 64)", "fp32(batch, 1, 64)"], {"batch": 4, "seq": 8}),("rows_of_3d", ["fp32(batch, 1, 64)"], {"batch": 4}),("rows_of_3d", ["fp32(1, seq, 64)"], {"seq": 4}),
 ("row_sums", ["fp32(rows, 1)"], {"rows": 100}),
 ("size_only_in_grid", ["fp32(rows, 64)"], {"rows": 100}),
 ("other_tensors_sizes", ["fp32(n), fp32(n)"], {"n": 1000}),
 ("other_tensors_sizes", ["fp32(n), fp32(m)"], {"n": 1000, "m": 1000}),
 ("rows_from_other", ["fp32(rows, 64), fp32(rows)"], {"rows": 100}),
 ("next_pow2_block", ["fp32(rows, cols)"], {"rows": 100, "cols": 50}),
 ("next_pow2_block", ["fp32(rows, 50)"], {"rows": 100}),
 ("rows_of_3d", ["fp32(batch, seq, 64)", "fp32(batch, 1, 64)", "fp32(1, seq, 64)"], {"batch": 4, "seq": 8}),
 ("rows_of_3d", ["fp32(batch, seq, 64)"], {"batch": 4, "seq": 8}),
 ("copy", ["fp16(size)", "bf16(size)"], {"size": 1000}),
 ("chained", ["fp32(n)"], {"n": 1000}),
 ("by_threshold", ["[n=1024] fp32(n)", "[n=8192] fp32(n)"], {}),
 ("by_threshold", ["fp32(n)"], {"n": 1024}),
 ("float_and_int", ["fp32(n), 0.5, 3"], {"n": 1000}),
 ("keyword_only", ["fp32(n), factor=0.5"], {"n": 1000}),
 ("keyword_only_tensor", ["fp32(n), out=fp32(n)"], {"n": 1000}),
 ("lambda_grid", ["fp32(n)"], {"n": 1000}),
 ("early_return_empty", ["fp32(n)"], {"n": 1000}),
]
sel = sys.argv[1:]
with build_driver.answering_for("cuda", 90, 32), build_torch_cuda.answering_for("cuda", 90, 32):
    for name, calls, sizes in CASES:
        if sel and name not in sel: continue
        print("=====", name, calls, sizes)
        try:
            c, d, r = tool.capture_launcher(getattr(B, name), calls, sizes, name, "//t:b")
            print(json.dumps(r.to_dict(), indent=1))
        except UserError as e:
            print("REFUSED:", e.message)
        except Exception as e:
            print("CRASH:", type(e).__name__, e)
            traceback.print_exc(limit=3)
