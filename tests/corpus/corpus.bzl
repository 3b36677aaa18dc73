"""The kernel corpus: Liger-Kernel's kernels built as the package ships them, unedited.

Each entry names a kernel in the installed `liger-kernel` package (tools/kernel_packages.lock;
nothing of it is copied into this repository) and the configuration Liger-Kernel's own wrapper
launches it with for the sizes in `gpu_args` (BLOCK_SIZE and num_warps from its
`calculate_settings`, the constexpr flags its forward pass sets). One specialization carries the
hints the Triton JIT derives from exactly those arguments (16-byte aligned pointers, integers
divisible by 16, integers equal to 1), so the GPU comparison runs the same code the JIT runs;
the generic one serves every other call.

`gpu_args` drives tests/corpus/run_corpus_gpu.py: one token per run-time kernel argument, in
order. `in:DTYPE[dims]` is a random input tensor, `io:DTYPE[dims]` a random tensor the kernel
writes, `out:DTYPE[dims]` a zeroed output; other tokens are integers or floats. `launch` gives
the launch arguments' values. Every tensor is compared bit for bit with the JIT's.
"""

load("@bazel_skylib//rules:write_file.bzl", "write_file")
load("//rules:defs.bzl", "triton_algo", "triton_kernel_library", "triton_torch_library", "triton_torch_op")

_R = 2048  # rows
_C = 4096  # columns (a 7B model's hidden size): Liger's BLOCK_SIZE 4096, num_warps 8

def _rows(dtype, cols = _C):
    return "{}[{},{}]".format(dtype, _R, cols)

CORPUS = [
    dict(
        name = "rms_norm_fwd",
        module = "liger_kernel.ops.rms_norm",
        kernel = "_rms_norm_forward_kernel",
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, i32, fp32, fp32, casting_mode, elementwise_affine, BLOCK_SIZE",
        constexprs = {"casting_mode": 0, "elementwise_affine": True, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "Y_ptr:16 Y_row_stride:16 X_ptr:16 X_row_stride:16 W_ptr:16 W_row_stride:1 RSTD_ptr:16 RSTD_row_stride:1 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{r} {c} in:{r} {c} in:f32[{c}] 1 out:f32[{n}] 1 {c} 1e-6 0.0",
        launch = [_R],
    ),
    dict(
        name = "rms_norm_bwd",
        module = "liger_kernel.ops.rms_norm",
        kernel = "_rms_norm_backward_kernel",
        # COMPUTE_DW keeps its default (True); X_dtype is a dtype constexpr
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, X_dtype, *fp32, i32, *fp32, i32, *fp32, i32, i32, i32, fp32, i32, casting_mode, elementwise_affine, BLOCK_SIZE",
        constexprs = {"X_dtype": "tl.float32", "casting_mode": 0, "elementwise_affine": True, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "dY_ptr:16 dY_row_stride:16 dX_ptr:16 dX_row_stride:16 X_ptr:16 X_row_stride:16 W_ptr:16 W_row_stride:1 RSTD_ptr:16 RSTD_row_stride:1 dW_ptr:16 dW_row_stride:16 n_rows:16 n_cols:16 rows_per_program:16",
        launch_args = ["programs: i32"],
        grid = "programs",
        gpu_args = "in:{r} {c} out:{r} {c} in:{r} {c} in:f32[{c}] 1 in:f32[{n}] 1 out:f32[128,{c}] {c} {n} {c} 0.0 16",
        launch = [128],
    ),
    dict(
        name = "layer_norm_fwd",
        module = "liger_kernel.ops.layer_norm",
        kernel = "_layer_norm_forward_kernel",
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, i32, fp32, BLOCK_SIZE",
        constexprs = {"BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "Y_ptr:16 Y_row_stride:16 X_ptr:16 X_row_stride:16 W_ptr:16 W_row_stride:1 B_ptr:16 B_row_stride:1 Mean_ptr:16 Mean_row_stride:1 RSTD_ptr:16 RSTD_row_stride:1 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{r} {c} in:{r} {c} in:f32[{c}] 1 in:f32[{c}] 1 out:f32[{n}] 1 out:f32[{n}] 1 {c} 1e-5",
        launch = [_R],
    ),
    dict(
        name = "swiglu_fwd",
        module = "liger_kernel.ops.swiglu",
        kernel = "_swiglu_forward_kernel",
        signature = "*bf16, *bf16, *bf16, i32, fp32, n_cols, BLOCK_SIZE",
        constexprs = {"n_cols": _C, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "a_ptr:16 b_ptr:16 c_ptr:16 stride:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{rb} in:{rb} out:{rb} {c} 1.0",
        launch = [_R],
    ),
    dict(
        name = "swiglu_bwd",
        module = "liger_kernel.ops.swiglu",
        kernel = "_swiglu_backward_kernel",
        signature = "*bf16, *bf16, *bf16, i32, fp32, n_cols, BLOCK_SIZE",
        constexprs = {"n_cols": _C, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "dc_ptr:16 a_ptr:16 b_ptr:16 stride:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{rb} io:{rb} io:{rb} {c} 1.0",
        launch = [_R],
    ),
    dict(
        name = "geglu_fwd",
        module = "liger_kernel.ops.geglu",
        kernel = "_geglu_tanh_forward_kernel",
        signature = "*bf16, *bf16, *bf16, i32, n_cols, BLOCK_SIZE",
        constexprs = {"n_cols": _C, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "a:16 b:16 c:16 stride:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{rb} in:{rb} out:{rb} {c}",
        launch = [_R],
    ),
    dict(
        name = "geglu_bwd",
        module = "liger_kernel.ops.geglu",
        kernel = "_geglu_tanh_backward_kernel",
        signature = "*bf16, *bf16, *bf16, i32, n_cols, BLOCK_SIZE",
        constexprs = {"n_cols": _C, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "dc:16 a:16 b:16 stride:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{rb} io:{rb} io:{rb} {c}",
        launch = [_R],
    ),
    dict(
        name = "softmax_fwd",
        module = "liger_kernel.ops.softmax",
        kernel = "_softmax_single_block_forward_kernel",
        signature = "*fp32, i32, *fp32, i32, i32, BLOCK_SIZE",
        constexprs = {"BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "Y_ptr:16 Y_row_stride:16 X_ptr:16 X_row_stride:16 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{r} {c} in:{r} {c} {c}",
        launch = [_R],
    ),
    dict(
        name = "relu_squared_bwd",
        module = "liger_kernel.ops.relu_squared",
        kernel = "_relu_squared_backward_kernel",
        signature = "*bf16, i32, *bf16, i32, *bf16, i32, n_cols, BLOCK_SIZE",
        constexprs = {"n_cols": _C, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "dX_ptr:16 dX_stride:16 dY_ptr:16 dY_stride:16 X_ptr:16 X_stride:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{rb} {c} in:{rb} {c} in:{rb} {c}",
        launch = [_R],
    ),
    dict(
        name = "kl_div_bwd",
        module = "liger_kernel.ops.kl_div",
        kernel = "_kldiv_kernel_backward",
        # log_target keeps its default (False)
        signature = "*fp32, i32, *fp32, i32, i32, BLOCK_SIZE",
        constexprs = {"BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "target_ptr:16 target_stride:16 new_grads_ptr:16 new_grads_stride:16 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{r} {c} out:{r} {c} {c}",
        launch = [_R],
    ),
    dict(
        name = "relu_squared_fwd",
        module = "liger_kernel.ops.relu_squared",
        kernel = "_relu_squared_forward_kernel",
        signature = "*bf16, i32, *bf16, i32, n_cols, BLOCK_SIZE",
        constexprs = {"n_cols": _C, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "Y_ptr:16 Y_stride:16 X_ptr:16 X_stride:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{rb} {c} in:{rb} {c}",
        launch = [_R],
    ),
    dict(
        name = "poly_norm_fwd",
        module = "liger_kernel.ops.poly_norm",
        kernel = "_poly_norm_forward_kernel",
        signature = "*fp32, i32, *fp32, i32, *fp32, *fp32, *fp32, i32, i32, fp32, BLOCK_SIZE",
        constexprs = {"BLOCK_SIZE": 4096},
        num_warps = 8,
        # RSTD caches three values per row: (n_rows, 3), row stride 3
        hints = "Y_ptr:16 Y_row_stride:16 X_ptr:16 X_row_stride:16 W_ptr:16 B_ptr:16 RSTD_ptr:16 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{r} {c} in:{r} {c} in:f32[3] in:f32[1] out:f32[{n},3] 3 {c} 1e-6",
        launch = [_R],
    ),
    dict(
        name = "fused_add_rms_norm_fwd",
        module = "liger_kernel.ops.fused_add_rms_norm",
        kernel = "_fused_add_rms_norm_forward_kernel",
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, i32, fp32, fp32, casting_mode, BLOCK_SIZE",
        constexprs = {"casting_mode": 0, "BLOCK_SIZE": 4096},
        num_warps = 8,
        hints = "Y_ptr:16 Y_row_stride:16 S_ptr:16 S_row_stride:16 X_ptr:16 X_row_stride:16 R_ptr:16 R_row_stride:16 W_ptr:16 W_row_stride:1 RSTD_ptr:16 RSTD_row_stride:1 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "out:{r} {c} out:{r} {c} in:{r} {c} in:{r} {c} in:f32[{c}] 1 out:f32[{n}] 1 {c} 1e-6 0.0",
        launch = [_R],
    ),
    dict(
        name = "kl_div_fwd",
        module = "liger_kernel.ops.kl_div",
        kernel = "_kldiv_kernel_forward",
        # reduction = "none" (0): one loss per element; log_target keeps its default (False)
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, i32, fp32, BLOCK_SIZE, reduction",
        constexprs = {"BLOCK_SIZE": 4096, "reduction": 0},
        num_warps = 8,
        hints = "y_ptr:16 y_stride:16 gt_ptr:16 gt_stride:16 loss_ptr:16 loss_stride:16 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{r} {c} in:{r} {c} out:{r} {c} {c} 1e-10",
        launch = [_R],
    ),
    dict(
        name = "tv_distance",
        module = "liger_kernel.ops.tvd",
        kernel = "_tv_distance_kernel",
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, *i64, ignore_index, i32, fp32, BLOCK_SIZE, HAS_LABEL, reduction",
        constexprs = {"ignore_index": -100, "BLOCK_SIZE": 4096, "HAS_LABEL": False, "reduction": 0},
        num_warps = 8,
        hints = "p_ptr:16 p_stride:16 q_ptr:16 q_stride:16 loss_ptr:16 loss_stride:16 grads_ptr:16 grads_stride:16 label_ptr:16 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{r} {c} in:{r} {c} out:{r} {c} out:{r} {c} in:i64[1] {c} 1.0",
        launch = [_R],
    ),
    dict(
        name = "jsd",
        module = "liger_kernel.ops.jsd",
        kernel = "_jsd_kernel",
        signature = "*fp32, i32, *fp32, i32, *fp32, i32, *fp32, i32, *i64, beta, i32, ignore_index, i32, BLOCK_SIZE, HAS_LABEL",
        constexprs = {"beta": 0.5, "ignore_index": -100, "BLOCK_SIZE": 4096, "HAS_LABEL": False},
        num_warps = 8,
        hints = "X_ptr:16 X_stride:16 Y_ptr:16 Y_stride:16 loss_ptr:16 loss_stride:16 dX_ptr:16 dX_stride:16 label_ptr:16 n_non_ignore:16 n_cols:16",
        launch_args = ["n_rows: i32"],
        grid = "n_rows",
        gpu_args = "in:{r} {c} in:{r} {c} out:{r} {c} out:{r} {c} in:i64[1] {n} {c}",
        launch = [_R],
    ),
    dict(
        name = "group_norm_fwd",
        module = "liger_kernel.ops.group_norm",
        kernel = "_group_norm_forward_kernel",
        # 8 x 256 channels in 32 groups over 512 positions: hidden_size 4096 per group
        signature = "*fp32, i32, i32, *fp32, i32, i32, *fp32, i32, i32, *fp32, i32, i32, *fp32, *fp32, i32, i32, fp32, BLOCK_SIZE",
        constexprs = {"BLOCK_SIZE": 4096},
        num_warps = 4,
        hints = "Y_ptr:16 Y_row_stride:16 Y_col_stride:16 X_ptr:16 X_row_stride:16 X_col_stride:16 Mean_ptr:16 Mean_row_stride:16 Mean_col_stride:1 RSTD_ptr:16 RSTD_row_stride:16 RSTD_col_stride:1 W_ptr:16 B_ptr:16 hidden_size:16",
        launch_args = ["batch: i32", "groups: i32"],
        grid = "batch, groups",
        gpu_args = "out:f32[8,32,4096] 131072 4096 in:f32[8,32,4096] 131072 4096 out:f32[8,32] 32 1 out:f32[8,32] 32 1 in:f32[256] in:f32[256] 4096 8 1e-6",
        launch = [8, 32],
    ),
]

def _expand(text):
    return text.format(r = _rows("f32"), rb = _rows("bf16"), c = _C, n = _R)

def corpus_kernels(name):
    """Declares the corpus libraries and their manifest.

    One triton_kernel_library per CORPUS entry (cuda:90; the specialization the GPU check uses,
    and a generic one), and NAME (`NAME.json`) describing them for the GPU check.

    Args:
      name: the manifest's target name.
    """
    for entry in CORPUS:
        triton_kernel_library(
            name = entry["name"],
            kernel_module = entry["module"],
            kernel = entry["kernel"],
            signature = entry["signature"],
            algos = [triton_algo(constexprs = entry["constexprs"], num_warps = entry["num_warps"])],
            specializations = [entry["hints"], ""],
            launch_args = entry["launch_args"],
            grid = entry["grid"],
            targets = ["cuda:90"],
        )
    manifest = [dict(entry, gpu_args = _expand(entry["gpu_args"])) for entry in CORPUS]
    write_file(
        name = name,
        out = name + ".json",
        content = [json.encode_indent(manifest, indent = " ")],
    )

# Each kernel's run-time parameters, in order, as the liger-kernel source names them (the op
# generator checks every name against the library's C header, so a wrong one fails the build).
_PARAMS = {
    "rms_norm_fwd": ["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "W_ptr", "W_row_stride", "RSTD_ptr", "RSTD_row_stride", "n_cols", "eps", "offset"],
    "rms_norm_bwd": ["dY_ptr", "dY_row_stride", "dX_ptr", "dX_row_stride", "X_ptr", "X_row_stride", "W_ptr", "W_row_stride", "RSTD_ptr", "RSTD_row_stride", "dW_ptr", "dW_row_stride", "n_rows", "n_cols", "offset", "rows_per_program"],
    "layer_norm_fwd": ["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "W_ptr", "W_row_stride", "B_ptr", "B_row_stride", "Mean_ptr", "Mean_row_stride", "RSTD_ptr", "RSTD_row_stride", "n_cols", "eps"],
    "swiglu_fwd": ["a_ptr", "b_ptr", "c_ptr", "stride", "gate_multiplier"],
    "swiglu_bwd": ["dc_ptr", "a_ptr", "b_ptr", "stride", "gate_multiplier"],
    "geglu_fwd": ["a", "b", "c", "stride"],
    "geglu_bwd": ["dc", "a", "b", "stride"],
    "softmax_fwd": ["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "n_cols"],
    "relu_squared_bwd": ["dX_ptr", "dX_stride", "dY_ptr", "dY_stride", "X_ptr", "X_stride"],
    "kl_div_bwd": ["target_ptr", "target_stride", "new_grads_ptr", "new_grads_stride", "n_cols"],
    "relu_squared_fwd": ["Y_ptr", "Y_stride", "X_ptr", "X_stride"],
    "poly_norm_fwd": ["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "W_ptr", "B_ptr", "RSTD_ptr", "RSTD_row_stride", "n_cols", "eps"],
    "fused_add_rms_norm_fwd": ["Y_ptr", "Y_row_stride", "S_ptr", "S_row_stride", "X_ptr", "X_row_stride", "R_ptr", "R_row_stride", "W_ptr", "W_row_stride", "RSTD_ptr", "RSTD_row_stride", "n_cols", "eps", "offset"],
    "kl_div_fwd": ["y_ptr", "y_stride", "gt_ptr", "gt_stride", "loss_ptr", "loss_stride", "n_cols", "eps"],
    "tv_distance": ["p_ptr", "p_stride", "q_ptr", "q_stride", "loss_ptr", "loss_stride", "grads_ptr", "grads_stride", "label_ptr", "n_cols", "scale"],
    "jsd": ["X_ptr", "X_stride", "Y_ptr", "Y_stride", "loss_ptr", "loss_stride", "dX_ptr", "dX_stride", "label_ptr", "n_non_ignore", "n_cols"],
    "group_norm_fwd": ["Y_ptr", "Y_row_stride", "Y_col_stride", "X_ptr", "X_row_stride", "X_col_stride", "Mean_ptr", "Mean_row_stride", "Mean_col_stride", "RSTD_ptr", "RSTD_row_stride", "RSTD_col_stride", "W_ptr", "B_ptr", "hidden_size", "channels_per_group", "eps"],
}

_SCALARS = ["i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64"]

def _runtime_types(signature):
    types = []
    for part in signature.split(","):
        base = part.split(":")[0].strip()
        if base.startswith("*") or base in _SCALARS:
            types.append(base)
    return types

def corpus_torch_ops(name, namespace):
    """Every corpus kernel as a torch op of NAMESPACE, named like its corpus entry.

    The op mirrors the C API one to one (tensors for pointers, `int`/`float` for scalars, then
    the launch arguments; the tensors the kernel writes, `out:`/`io:` in `gpu_args`, are
    `mutates`), so that bench/torch/cold_start_bench.py calls it with the very arguments of
    the ctypes and JIT modes and compares its outputs with the library's.

    Args:
      name: the triton_torch_library target (`lib<name>.so` and `<name>.py`).
      namespace: the ops' namespace (`torch.ops.NAMESPACE.<entry name>`).
    """
    ops = {}
    for entry in CORPUS:
        params = _PARAMS[entry["name"]]
        types = _runtime_types(entry["signature"])
        tokens = entry["gpu_args"].split(" ")
        if len(params) != len(types) or len(tokens) != len(types):
            fail("{}: {} parameter names, {} run-time types, {} gpu_args".format(entry["name"], len(params), len(types), len(tokens)))
        args, mutates = [], []
        for param, ty, token in zip(params, types, tokens):
            if ty.startswith("*"):
                args.append(param)
                if token.startswith("out:") or token.startswith("io:"):
                    mutates.append(param)
            elif ty.startswith("fp") or ty == "bf16":
                args.append(param + ": float")
            else:
                args.append(param + ": int")
        args += [a.split(":")[0].strip() + ": int" for a in entry["launch_args"]]
        ops[entry["name"]] = triton_torch_op(
            lib = ":" + entry["name"],
            args = args,
            mutates = mutates,
            entry = "default",
        )
    triton_torch_library(
        name = name,
        namespace = namespace,
        ops = ops,
        tags = ["manual"],
    )
