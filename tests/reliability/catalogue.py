"""The bad-input catalogue: every way a user can get rules_triton's inputs wrong, with the message
that must come back.

Each case is data: where the mistake is made (`layer`), which tool sees it (`tool`), the input,
and the fragments the message must contain: `culprit` (names the attribute / flag / entry / file /
token that is wrong) and `fix` (says what to do). The runners are

  test_catalogue.py      compile and link cases: `python -m triton_aot.compile.compile|link` as
                         subprocesses; exit code 1, one `error: ` message with every fragment,
                         no Python traceback (and one traceback each with --verbose);
  rule_failures.bzl      rule cases: analysis-failure tests (bazel_skylib analysistest) of a
                         triton_kernel_library with the case's attributes, over rule_cases.bzl.

`update_catalogue.py` writes CATALOGUE.md and rule_cases.bzl from this file; `catalogue_test`
fails when they are stale. `needs_fix` marks cases whose expected message needs a product change
(described there); their tests fail until that change is made.

Placeholders in compile/link inputs: {K} = tests/reliability/kernels, {OUT} = a fresh temporary
folder (outputs), {TMP} = a fresh temporary folder (copied kernel files).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

from triton_aot.core import reset_to_zero, targets

# The target cases follow the targets table (triton_aot/core/targets.py), as the rule and the tool do.
OLDEST_SM = targets.CUDA_ARCHS[0]
TOO_OLD_SM = OLDEST_SM - 10  # older than any supported triton compiles for
NO_TRITON_SM = 99  # newer than any supported triton compiles for
assert TOO_OLD_SM not in targets.CUDA_ARCHS and NO_TRITON_SM not in targets.CUDA_ARCHS
NO_TRITON_GFX = "gfx908"  # an AMD arch (CDNA1) triton does not compile for
assert NO_TRITON_GFX not in targets.HIP_ARCHS

LAYERS = ("rule attribute", "compile flag", "link flag", "signature", "grid", "kernel",
          "link input", "launch call", "launcher", "tune flag")
TOOLS = ("compile", "link", "rule", "runtime", "capture", "autotune", "torch", "bazel test",
         "c_entry", "tune", "tune bundle")


@dataclass(frozen=True)
class Case:
    id: str
    layer: str
    tool: str
    input: str  # what is wrong, in one line (CATALOGUE.md)
    culprit: tuple  # fragments naming the culprit
    fix: tuple  # fragments saying what to do
    # compile: flag overrides over COMPILE_BASE (None drops a flag); extra: raw argv appended
    flags: dict = field(default_factory=dict)
    extra: tuple = ()
    copy_as: Optional[str] = None  # compile: copy kernels/kernels.py to {TMP}/<name> and use it
    # link: variant specs (see link_metadata in test_catalogue.py) and link flag overrides
    variants: tuple = ()
    # rule: Starlark attribute overrides over rule_failures.bzl's good library
    attrs: str = ""
    # rule: refused at build, not analysis: by the compile tool in the library's first action
    # (its import check, or its one compile), which `flags` (over COMPILE_BASE) reproduce;
    # rule_failures.bzl checks that the action carries them, catalogue_test runs the tool
    at_build: bool = False
    # rule: refused by the library's one TritonRefuse action (rules/private/refusal.bzl), which
    # prints the message as its one line (a fail() in analysis prints a Starlark traceback
    # first); rule_failures.bzl checks the action and its line
    in_action: bool = False
    # runtime: the descriptor arguments of one call of RUNTIME_LIB (base offset from a 16-byte
    # aligned address, shape0, shape1, stride0, stride1), against the fake driver
    call: str = ""
    needs_fix: str = ""  # the product change the expected message waits for ("" = none)


# ----------------------------------------------------------------------------- compile tool

# A good invocation: every compile case changes one thing.
COMPILE_BASE = {
    "kernel_path": "{K}/kernels.py",
    "kernel_name": "copy_kernel",
    "signature": "*fp32, *fp32, i32, BLOCK",
    "constexprs": "BLOCK=64",
    "grid": "cdiv(n, 64)",
    "num_warps": "4",
    "num_stages": "3",
    "target": "cuda:80",
    "symbol": "copy_sm80",
    "out_json": "{OUT}/v.json",
    "out_c": "{OUT}/v.c",
    "out_h": "{OUT}/v.h",
}
# scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK): alpha is an fp32 scalar.
SCALE = {"kernel_name": "scale_kernel", "signature": "*fp32, *fp32, fp32, i32, 64",
         "constexprs": None}

_GRID_ALLOWED = "grid entries may only use integer arguments"

COMPILE_CASES = [
    # --- signature -----------------------------------------------------------------------
    Case("sig_wrong_count", "signature", "compile",
         "one entry too many: `*fp32, *fp32, i32, BLOCK, 8`",
         ("--signature has 5 entries", "'copy_kernel' has 4 parameters",
          "(x_ptr, out_ptr, n, BLOCK: tl.constexpr)"),
         ("give exactly one entry per parameter",),
         flags={"signature": "*fp32, *fp32, i32, BLOCK, 8"}),
    Case("sig_one_entry_short", "signature", "compile",
         "one entry short: `*fp32, i32, BLOCK` (the entries after the gap shift by one)",
         ("--signature: an entry is missing", "3 entries for the 4 parameters of 'copy_kernel'",
          "entry 3, 'BLOCK', lines up with 'n'"),
         ("add the missing entry",),
         flags={"signature": "*fp32, i32, BLOCK"}),
    Case("sig_unknown_type", "signature", "compile",
         "unknown type `int33`",
         ("--signature entry 3", "unknown type 'int33'"), ("use i1, i8, i16, i32",),
         flags={"signature": "*fp32, *fp32, int33, BLOCK"}),
    Case("sig_unknown_pointer_type", "signature", "compile",
         "unknown pointer element type `*fp23`",
         ("--signature entry 2", "unknown pointer element type 'fp23'"), ("use *T with T one of",),
         flags={"signature": "*fp32, *fp23, i32, BLOCK"}),
    Case("sig_hint_on_float", "signature", "compile",
         "hint on a float scalar: `fp32:16`",
         ("--signature entry 3 ('fp32:16')", "fp32 cannot take a hint"),
         ("hints apply to pointers and integer types",),
         flags=dict(SCALE, signature="*fp32, *fp32, fp32:16, i32, 64")),
    Case("sig_hint_value", "signature", "compile",
         "hint that does not exist: `*fp32:8`",
         ("--signature entry 1 ('*fp32:8')", "hint :8 is not supported"),
         ("only :16 (divisible by 16) and :1 (equal to 1) exist",),
         flags={"signature": "*fp32:8, *fp32, i32, BLOCK"}),
    Case("sig_pointer_hint_one", "signature", "compile",
         "`:1` on a pointer: `*fp32:1`",
         ("--signature entry 1 ('*fp32:1')", "pointer *fp32"), ("can only take the :16 hint",),
         flags={"signature": "*fp32:1, *fp32, i32, BLOCK"}),
    Case("sig_value_for_runtime_arg", "signature", "compile",
         "a constant for a runtime argument: `7` for `n`",
         ("parameter 'n'", "'n' is not tl.constexpr"),
         ("give a type such as i32", "declare it `n: tl.constexpr`"),
         flags={"signature": "*fp32, *fp32, 7, BLOCK"}),
    Case("sig_type_for_constexpr", "signature", "compile",
         "a type for a tl.constexpr parameter: `i32` for `BLOCK`",
         ("parameter 'BLOCK'", "'BLOCK' is tl.constexpr"),
         ("give its value (e.g. 128)", "--constexprs=BLOCK=VALUE"),
         flags={"signature": "*fp32, *fp32, i32, i32"}),
    Case("sig_wrong_constexpr_name", "signature", "compile",
         "constexpr entry that is not the parameter's name: `BLK` for `BLOCK`",
         ("parameter 'BLOCK'", "'BLK' is neither a type nor the parameter's name"),
         ("write BLOCK (value from --constexprs)",),
         flags={"signature": "*fp32, *fp32, i32, BLK"}),
    Case("sig_empty_entry", "signature", "compile",
         "trailing comma: `*fp32, *fp32, i32, BLOCK,`",
         ("--signature: entry 5 is empty",), ("separate entries with single commas",),
         flags={"signature": "*fp32, *fp32, i32, BLOCK,"}),
    Case("sig_fp8_scalar", "signature", "compile",
         "fp8 scalar argument: `fp8e5`",
         ("--signature entry 3 ('fp8e5')",), ("can only be a pointer element type (*fp8e5)",),
         flags={"signature": "*fp32, *fp32, fp8e5, BLOCK"}),
    Case("sig_string_injection", "signature", "compile",
         "C code in a string constexpr: `'x\"; abort(); \"'`",
         ("--signature entry 4", "string constant"),
         ("must be quoted and contain only letters, digits, spaces and _.+-",),
         flags={"signature": "*fp32, *fp32, i32, 'x\"; abort(); \"'", "constexprs": None}),
    Case("sig_annotation_mismatch", "signature", "compile",
         "signature type disagrees with the kernel's annotation (`n: tl.int64`, entry `i32`)",
         ("parameter 'n'", "the kernel annotates 'n' as i64 but the signature says i32"),
         ("make them agree",),
         flags={"kernel_name": "wide_kernel", "signature": "*i64, i32", "constexprs": None,
                "grid": "1"}),
    Case("sig_int_too_big", "signature", "compile",
         "constexpr literal beyond 64 bits",
         ("--signature entry 4", "integer constant 99999999999999999999999"),
         ("does not fit in 64 bits",),
         flags={"signature": "*fp32, *fp32, i32, 99999999999999999999999", "constexprs": None}),
    Case("sig_empty", "signature", "compile",
         "empty signature",
         ("--signature is empty",), ("give one entry per kernel parameter",),
         flags={"signature": " "}),
    # --- compile flags: --constexprs ----------------------------------------------------------
    Case("constexpr_not_a_value", "compile flag", "compile",
         "constexpr value that is no literal: `BLOCK=abc`",
         ("--constexprs: BLOCK='abc' is not a value",),
         ("use an integer, float, True/False, None, tl.<dtype> or a quoted string",),
         flags={"constexprs": "BLOCK=abc"}),
    Case("constexpr_duplicate", "compile flag", "compile",
         "duplicate specialization of a constexpr: `BLOCK=64,BLOCK=32`",
         ("--constexprs: 'BLOCK' is given twice",), ("is given twice",),
         flags={"constexprs": "BLOCK=64,BLOCK=32"}),
    Case("constexpr_in_two_places", "compile flag", "compile",
         "constexpr set in --signature (`64`) and in --constexprs",
         ("--constexprs: 'BLOCK' already has the value 64 in --signature",),
         ("give it in one place only",),
         flags={"signature": "*fp32, *fp32, i32, 64"}),
    Case("constexpr_unknown_param", "compile flag", "compile",
         "constexpr for a parameter the kernel does not have: `BLOK=3` (from an algo that sets "
         "it: the rule leaves names the signature does not list to this check)",
         ("--constexprs: 'BLOK' is not a parameter of 'copy_kernel'",),
         ("its parameters are (x_ptr, out_ptr, n, BLOCK: tl.constexpr)",
          "remove it from the algo's constexprs (triton_algo(constexprs = ...) in `algos`)"),
         flags={"constexprs": "BLOCK=64,BLOK=3"}),
    Case("constexpr_missing", "compile flag", "compile",
         "constexpr named in the signature but given no value",
         ("parameter 'BLOCK'", "BLOCK has no value"), ("pass --constexprs=BLOCK=VALUE",),
         flags={"constexprs": None}),
    Case("constexpr_for_runtime_arg", "compile flag", "compile",
         "constexpr value for a runtime argument: `n=3`",
         ("--constexprs: 'n' is not tl.constexpr in 'copy_kernel'",),
         ("remove it from --constexprs",),
         flags={"constexprs": "BLOCK=64,n=3"}),
    Case("constexpr_bad_dtype", "compile flag", "compile",
         "unknown dtype: `tl.float17`",
         ("--constexprs: BLOCK", "unknown dtype 'tl.float17'"), ("use one of: tl.bfloat16",),
         flags={"constexprs": "BLOCK=tl.float17"}),
    Case("constexpr_not_finite", "compile flag", "compile",
         "float constexpr that overflows: `1e999`",
         ("--constexprs: BLOCK", "float constant 1e999"), ("is not finite",),
         flags={"constexprs": "BLOCK=1e999"}),
    # --- compile flags: --hints ----------------------------------------------------------------
    Case("hints_conflicting", "compile flag", "compile",
         "conflicting specialization: `n:16 n:1`",
         ("--hints: 'n' is given twice with different hints",), ("give each parameter one hint",),
         flags={"hints": "n:16 n:1"}),
    Case("hints_contradict_signature", "compile flag", "compile",
         "hint that contradicts the signature's: `i32:16` and `--hints=n:1`",
         ("--hints: n:1 contradicts the signature's i32:16",), ("keep only one",),
         flags={"signature": "*fp32, *fp32, i32:16, BLOCK", "hints": "n:1"}),
    Case("hints_on_float", "compile flag", "compile",
         "hint on a float argument: `--hints=alpha:16`",
         ("--hints alpha:16", "fp32 cannot take a hint"),
         ("hints apply to pointers and integer types",),
         flags=dict(SCALE, hints="alpha:16")),
    Case("hints_on_constexpr", "compile flag", "compile",
         "hint on a constexpr: `--hints=BLOCK:16`",
         ("--hints: 'BLOCK' is tl.constexpr",),
         ("hints apply to pointer and integer arguments only",),
         flags={"hints": "BLOCK:16"}),
    Case("hints_unknown_param", "compile flag", "compile",
         "hint for a parameter the kernel does not have: `m:16`",
         ("--hints: 'm' is not a parameter of 'copy_kernel'",), ("its parameters are (x_ptr",),
         flags={"hints": "m:16"}),
    Case("hints_syntax", "compile flag", "compile",
         "hint written as `n=16`",
         ("--hints: cannot parse 'n=16'",), ("write NAME:16 or NAME:1",),
         flags={"hints": "n=16"}),
    # --- compile flags: the rest ---------------------------------------------------------------
    Case("target_arch_suffix", "compile flag", "compile",
         "`--target=cuda:90a`",
         ("--target: 'cuda:90a'",), ("write cuda:90",),
         flags={"target": "cuda:90a"}),
    Case("target_not_cuda", "compile flag", "compile",
         "`--target=sm_90`",
         ("--target: 'sm_90' is not a CUDA target",), ("write cuda:SM, e.g. cuda:80",),
         flags={"target": "sm_90"}),
    Case("target_unsupported", "compile flag", "compile",
         f"`--target=cuda:{NO_TRITON_SM}` (no ptxas support)",
         (f"--target: 'cuda:{NO_TRITON_SM}'", f"cannot compile for sm_{NO_TRITON_SM}"),
         (f"use one of cuda:{OLDEST_SM}",),
         flags={"target": f"cuda:{NO_TRITON_SM}"}),
    Case("target_too_old", "compile flag", "compile",
         f"`--target=cuda:{TOO_OLD_SM}` (older than any supported triton compiles for)",
         (f"--target: 'cuda:{TOO_OLD_SM}': no supported triton compiles for sm_{TOO_OLD_SM}",),
         (f"use cuda:{OLDEST_SM} or newer",),
         flags={"target": f"cuda:{TOO_OLD_SM}"}),
    Case("num_warps_not_pow2", "compile flag", "compile",
         "`--num_warps=3`",
         ("--num_warps: 3 is not a power of two",), ("use e.g. 4 or 8",),
         flags={"num_warps": "3"}),
    Case("num_warps_not_int", "compile flag", "compile",
         "`--num_warps=four`",
         ("flag --num_warps=four",), ("see `python -m triton_aot.compile.compile --help`",),
         flags={"num_warps": "four"}),
    Case("num_stages_zero", "compile flag", "compile",
         "`--num_stages=0`",
         ("--num_stages: 0 is less than 1",), ("use e.g. 3",),
         flags={"num_stages": "0"}),
    Case("num_ctas_old_target", "compile flag", "compile",
         "`--num_ctas=2` for cuda:80",
         ("--num_ctas: num_ctas=2 needs sm_90 or newer but --target is cuda:80",),
         ("use --num_ctas=1 or a cuda:90+ target",),
         extra=("--num_ctas=2",)),
    Case("pdl_old_target", "compile flag", "compile",
         "`--launch_pdl` for cuda:80",
         ("--launch_pdl: programmatic dependent launch needs sm_90",),
         ("drop --launch_pdl or use a cuda:90+ target",),
         extra=("--launch_pdl",)),
    Case("symbol_not_identifier", "compile flag", "compile",
         "`--symbol=1copy`",
         ("--symbol: '1copy' is not a valid C identifier",),
         ("use letters, digits and _ (not starting with a digit)",),
         flags={"symbol": "1copy"}),
    Case("missing_flags", "compile flag", "compile",
         "no --signature, --grid, --target",
         ("missing required flag(s): --signature, --grid, --target",), ("missing required flag",),
         flags={"signature": None, "grid": None, "target": None}),
    Case("unknown_flag", "compile flag", "compile",
         "misspelt flag `--out_jsn`",
         ("Unknown command line flag 'out_jsn'",), ("--help",),
         extra=("--out_jsn={OUT}/x.json",)),
    Case("positional_argument", "compile flag", "compile",
         "a stray positional argument",
         ("unexpected positional argument 'kernels.py'",), ("all inputs are flags",),
         extra=("kernels.py",)),
    Case("no_outputs", "compile flag", "compile",
         "no --out_* flag",
         ("no output requested",), ("pass at least one of --out_c",),
         flags={"out_json": None, "out_c": None, "out_h": None}),
    Case("import_path_missing", "compile flag", "compile",
         "`--import_path` that does not exist",
         ("--import_path: '{TMP}/nowhere' is not a directory",), ("is not a directory",),
         extra=("--import_path={TMP}/nowhere",)),
    # --- grid ----------------------------------------------------------------------------------
    Case("grid_injection", "grid", "compile",
         "code injected through the grid: `n); system(\"rm -rf /\"); (1`",
         ("--grid: character ';' is not allowed", "column 3"), (_GRID_ALLOWED,),
         flags={"grid": 'n); system("rm -rf /"); (1'}),
    Case("grid_preprocessor", "grid", "compile",
         "preprocessor directive in the grid: `n\\n#include <stdlib.h>`",
         ("--grid: character '#' is not allowed",), (_GRID_ALLOWED,),
         flags={"grid": "n\n#include <stdlib.h>"}),
    Case("grid_comment", "grid", "compile",
         "C comment in the grid: `n /* 1 */`",
         ("--grid: expected a number, an argument name, cdiv(, min(, max( or (", "token '*'"),
         (_GRID_ALLOWED,),
         flags={"grid": "n /* 1 */"}),
    Case("grid_names_constexpr", "grid", "compile",
         "grid naming a constexpr: `cdiv(n, BLOCK)`",
         ("--grid: 'BLOCK' is a tl.constexpr (= 64)",), ("write its value 64 instead",),
         flags={"grid": "cdiv(n, BLOCK)"}),
    Case("grid_placeholder_at_tool", "grid", "compile",
         "rule-style `{BLOCK}` placeholder given to the tool",
         ("--grid: character '{' is not allowed",), (_GRID_ALLOWED,),
         flags={"grid": "cdiv(n, {BLOCK})"}),
    Case("grid_unknown_name", "grid", "compile",
         "grid naming an unknown name: `cdiv(N, 64)`",
         ("--grid: unknown name 'N'",), ("the kernel's integer arguments are n",),
         flags={"grid": "cdiv(N, 64)"}),
    Case("grid_float_param", "grid", "compile",
         "grid using a float argument: `cdiv(n, 64) * alpha`",
         ("--grid: 'alpha' is a floating-point argument (fp32)",),
         ("grids can only use integer arguments",),
         flags=dict(SCALE, grid="cdiv(n, 64) * alpha")),
    Case("grid_pointer_param", "grid", "compile",
         "grid using a pointer: `x_ptr`",
         ("--grid: 'x_ptr' is a pointer argument (*fp32)",),
         ("grids can only use integer arguments",),
         flags={"grid": "x_ptr"}),
    Case("grid_call", "grid", "compile",
         "grid calling a function other than cdiv, min, max: `pow(n, 1)`",
         ("--grid: function 'pow' is not allowed",),
         ("the functions are cdiv(a, b), min(a, b) and max(a, b)",),
         flags={"grid": "pow(n, 1)"}),
    Case("grid_undeclared_launch_arg", "grid", "compile",
         "row-wise grid over a size the kernel does not take, not declared: `n_rows`",
         ("--grid: unknown name 'n_rows'",),
         ("must be declared as a launch argument (launch_args / --launch_args)",),
         flags={"grid": "n_rows"}),
    Case("grid_num_sms_hip", "grid", "compile",
         "`NUM_SMS` in the grid of a hip target",
         ("--grid: NUM_SMS is not supported for hip targets yet",),
         ("write the grid without it",),
         flags={"grid": "min(NUM_SMS, n)", "target": "hip:gfx942", "symbol": "copy_gfx942",
                "out_c": None, "out_h": None}),
    Case("launch_arg_is_kernel_arg", "compile flag", "compile",
         "`--launch_args='n: i32'` naming a kernel argument",
         ("--launch_args: 'n' is already a parameter of the kernel",),
         ("use the kernel's argument in the grid, or rename the launch argument",),
         flags={"launch_args": "n: i32"}),
    Case("launch_arg_float", "compile flag", "compile",
         "`--launch_args='scale: fp32'` (not an integer)",
         ("--launch_args: 'scale' has type 'fp32'",), ("launch arguments are integers",),
         flags={"launch_args": "scale: fp32"}),
    Case("launch_arg_malformed", "compile flag", "compile",
         "`--launch_args='n_rows'` without a type",
         ("--launch_args: entry 'n_rows' is not 'name: type'",),
         ("--launch_args='n_rows: i32, n_cols: i64'",),
         flags={"launch_args": "n_rows"}),
    Case("launch_arg_reserved", "compile flag", "compile",
         "`--launch_args='stream: i64'` (the C API's own parameter)",
         ("--launch_args: 'stream' is a parameter of the C API itself",),
         ("rename the launch argument",),
         flags={"launch_args": "stream: i64"}),
    Case("launch_arg_device_attribute", "compile flag", "compile",
         "`--launch_args='NUM_SMS: i32'` (a device attribute's name)",
         ("--launch_args: 'NUM_SMS' is a device attribute",), ("rename the launch argument",),
         flags={"launch_args": "NUM_SMS: i32"}),
    Case("algo_targets_exclude_target", "compile flag", "compile",
         "`--algo_targets=cuda:90` with `--target=cuda:80`",
         ("--algo_targets: --target cuda:80 is not one of cuda:90",),
         ("compile a restricted algo only for the targets it lists",),
         flags={"algo_targets": "cuda:90"}),
    Case("maxnreg_out_of_range", "compile flag", "compile",
         "`--maxnreg=8`",
         ("--maxnreg: 8 is not a register count from 16 to 255",), ("use e.g. 128",),
         flags={"maxnreg": "8"}),
    Case("maxnreg_hip", "compile flag", "compile",
         "`--maxnreg=128` for a hip target",
         ("--maxnreg", "does not support --maxnreg (target hip:gfx942)"),
         ("drop --maxnreg for hip targets",),
         flags={"maxnreg": "128", "target": "hip:gfx942", "symbol": "copy_gfx942",
                "out_c": None, "out_h": None}),
    Case("grid_too_many", "grid", "compile",
         "four grid dimensions",
         ("--grid has 4 entries",), ("give 1 to 3 (missing ones are 1)",),
         flags={"grid": "n, 1, 1, 1"}),
    Case("grid_octal", "grid", "compile",
         "literal with a leading zero: `010`",
         ("--grid: integer literals must not have leading zeros", "token '010'"),
         ("C would read them as octal",),
         flags={"grid": "010"}),
    Case("grid_floor_division", "grid", "compile",
         "Python floor division: `n // 64`",
         ("--grid: '//' is not allowed",), ("use / (C integer division)",),
         flags={"grid": "n // 64"}),
    Case("grid_too_deep", "grid", "compile",
         "40 nested parentheses",
         ("--grid: expression nested deeper than 32 levels",), (_GRID_ALLOWED,),
         flags={"grid": "(" * 40 + "n" + ")" * 40}),
    Case("grid_literal_too_big", "grid", "compile",
         "literal beyond int64: `99999999999999999999`",
         ("--grid: integer literal does not fit in int64_t",), (_GRID_ALLOWED,),
         flags={"grid": "99999999999999999999"}),
    Case("grid_empty", "grid", "compile",
         "empty grid",
         ("--grid is empty",), ("give 1 to 3 comma-separated expressions",),
         flags={"grid": "  "}),
    # --- kernel --------------------------------------------------------------------------------
    Case("kernel_syntax_error", "kernel", "compile",
         "kernel file with a Python syntax error",
         ("--kernel_path: importing syntax_error.py failed", "SyntaxError",
          "(syntax_error.py:7)"), ("fix the kernel file",),
         flags={"kernel_path": "{K}/syntax_error.py", "kernel_name": "broken_kernel",
                "signature": "*fp32, i32", "constexprs": None}),
    Case("kernel_import_fails", "kernel", "compile",
         "kernel file importing a module that does not exist",
         ("--kernel_path: importing import_error.py failed", "ModuleNotFoundError",
          "(import_error.py:4)"), ("pass --import_path=DIR for the folder that holds",),
         flags={"kernel_path": "{K}/import_error.py", "kernel_name": "never_kernel",
                "signature": "*fp32", "constexprs": None, "grid": "1"}),
    Case("kernel_import_fails_in_a_rule", "kernel", "compile",
         "kernel file importing a module no dep provides, compiled by a rule",
         ("//kernels:never: attribute 'deps': importing import_error.py failed",
          "ModuleNotFoundError", "(import_error.py:4)"),
         ("add the py_library that provides", "to deps", "kernel_module"),
         flags={"kernel_path": "{K}/import_error.py", "kernel_name": "never_kernel",
                "signature": "*fp32", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:never"}),
    Case("kernel_import_fails_in_a_dep", "kernel", "compile",
         "kernel file importing a dep whose own `__init__` raises, compiled by a rule",
         ("//kernels:k: attribute 'deps': importing imports_broken_dep.py failed",
          "RuntimeError: broken_dep is misconfigured",
          "(raised in broken_dep/__init__.py:3)"),
         ("the cause is in broken_dep/__init__.py (module 'broken_dep')",
          "not in the kernel file", "the py_library in deps that provides it"),
         flags={"kernel_path": "{K}/imports_broken_dep.py", "kernel_name": "k",
                "signature": "*fp32", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:k"},
         extra=("--import_path={K}/dep_root",)),
    Case("kernel_import_fails_in_a_helper_of_srcs", "kernel", "compile",
         "a helper module next to the kernel file (in srcs) whose import raises, compiled by a rule",
         ("//kernels:k: attribute 'srcs': importing imports_broken_helper.py failed",
          "KeyError: 'large' (raised in broken_helper.py:3, which imports_broken_helper.py "
          "imports)"),
         ("the cause is in broken_helper.py, not in imports_broken_helper.py",
          "fix broken_helper.py:3"),
         flags={"kernel_path": "{K}/imports_broken_helper.py", "kernel_name": "k",
                "signature": "*fp32", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:k"}),
    Case("kernel_import_fails_in_a_helper_import", "kernel", "compile",
         "a helper module next to the kernel file (in srcs) imports a package no dep provides, "
         "compiled by a rule: the helper's line, not the kernel file's `import` line",
         ("//kernels:k: attribute 'deps': importing imports_helper_missing_module.py failed",
          "No module named 'not_installed_helper_pkg' (helper_missing_module.py:3, which "
          "imports_helper_missing_module.py imports)"),
         ("add the py_library that provides 'not_installed_helper_pkg' to deps",),
         flags={"kernel_path": "{K}/imports_helper_missing_module.py", "kernel_name": "k",
                "signature": "*fp32", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:k"}),
    Case("kernel_import_misses_a_data_file", "kernel", "compile",
         "a dep that opens a file at import which no py_library lists, compiled by a rule",
         ("//kernels:k: attribute 'deps': importing imports_needs_data.py failed",
          "FileNotFoundError", "(raised in needs_data/__init__.py:4)"),
         ("needs_data/__init__.py opens 'table.json' at import",
          "list the file in the `data` of the py_library that provides 'needs_data' (in deps)"),
         flags={"kernel_path": "{K}/imports_needs_data.py", "kernel_name": "k",
                "signature": "*fp32", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:k"},
         extra=("--import_path={K}/dep_root",)),
    Case("kernel_file_opens_a_missing_file", "kernel", "compile",
         "a kernel file that opens a file at import which no input holds, compiled by a rule",
         ("//kernels:k: attribute 'deps': importing opens_missing_file.py failed",
          "FileNotFoundError", "(opens_missing_file.py:4)"),
         ("opens_missing_file.py opens 'sizes.json' at import",
          "list the file in the `data` of a py_library in deps"),
         flags={"kernel_path": "{K}/opens_missing_file.py", "kernel_name": "k",
                "signature": "*fp32", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:k"}),
    Case("kernel_triton_switched_off_by_a_dep", "kernel", "compile",
         "a dep that binds a placeholder for `triton` at import (vLLM without its .dist-info), "
         "compiled by a rule",
         ("//kernels:ssd: attribute 'deps': 'ssd_kernel' is not a @triton.jit function in "
          "triton_switched_off.py", "`triton` is not Triton but TritonPlaceholder from "
          "'triton_off'"),
         ("The cause is in that dep, not in the kernel file", ".dist-info"),
         flags={"kernel_path": "{K}/triton_switched_off.py", "kernel_name": "ssd_kernel",
                "signature": "*fp32, i32, 64", "constexprs": None, "grid": "1",
                "bazel_target": "//kernels:ssd"},
         extra=("--import_path={K}/dep_root",)),
    Case("kernel_unknown_name_in_a_rule", "kernel", "compile",
         "`kernel` that the file does not define, compiled by a rule: the attribute, no flag",
         ("//kernels:copy: attribute 'kernel': 'copy_kernl' is not defined in kernels.py",),
         ("the @triton.jit functions there are: calls_missing, copy_kernel",),
         flags={"kernel_name": "copy_kernl", "bazel_target": "//kernels:copy"}),
    Case("sig_type_for_constexpr_in_a_rule", "signature", "compile",
         "a type for a tl.constexpr parameter, compiled by a rule: the attributes, no flags",
         ("//kernels:copy: attribute 'signature': entry 4 (parameter 'BLOCK')",
          "'BLOCK' is tl.constexpr"),
         ("pass BLOCK=VALUE in attribute 'algos'",),
         flags={"signature": "*fp32, *fp32, i32, i32", "bazel_target": "//kernels:copy"}),
    Case("env_fingerprint_unreadable", "compile flag", "compile",
         "--env_fingerprint naming a file that does not exist",
         ("--env_fingerprint: cannot read",), ("pass the toolchain's fingerprint file",),
         flags={"env_fingerprint": "{K}/no_fingerprint.json"}),
    Case("kernel_import_raises", "kernel", "compile",
         "kernel file raising at import",
         ("importing import_raises.py failed", "RuntimeError: configuration missing",
          "(import_raises.py:4)"), ("fix the kernel file",),
         flags={"kernel_path": "{K}/import_raises.py", "kernel_name": "k",
                "signature": "*fp32", "constexprs": None, "grid": "1"}),
    Case("kernel_sys_exit", "kernel", "compile",
         "kernel file calling sys.exit() at import",
         ("importing exits.py failed", "SystemExit: 3", "(exits.py:4)"),
         ("fix the kernel file",),
         flags={"kernel_path": "{K}/exits.py", "kernel_name": "k", "signature": "*fp32",
                "constexprs": None, "grid": "1"}),
    Case("kernel_missing_file", "kernel", "compile",
         "--kernel_path that does not exist",
         ("--kernel_path: '{K}/nope.py' is not a file",),
         ("give the path of the Python file that defines the kernel",),
         flags={"kernel_path": "{K}/nope.py"}),
    Case("kernel_unknown_name", "kernel", "compile",
         "--kernel_name that the file does not define: `copy_kernl`",
         ("--kernel_name: 'copy_kernl' is not defined in kernels.py",),
         ("the @triton.jit functions there are: calls_missing, copy_kernel",),
         flags={"kernel_name": "copy_kernl"}),
    Case("kernel_not_jit", "kernel", "compile",
         "--kernel_name of a plain Python function",
         ("--kernel_name: 'plain_function' is not a @triton.jit function in kernels.py",),
         ("the @triton.jit functions there are",),
         flags={"kernel_name": "plain_function", "signature": "i32", "constexprs": None,
                "grid": "1"}),
    Case("kernel_float_block", "kernel", "compile",
         "wrong constexpr type: a float block size `BLOCK=64.0`",
         ("kernels.py:11:", "tl.arange(0, BLOCK)"),
         ("arange's arguments must be of type tl.constexpr",),
         flags={"constexprs": "BLOCK=64.0"}),
    Case("kernel_float_block_in_a_rule", "kernel", "compile",
         "a kernel that does not compile with an algo's values, compiled by a rule",
         ("//kernels:copy: attribute 'kernel': kernels.py:11:", "tl.arange(0, BLOCK)"),
         ("arange's arguments must be of type tl.constexpr",),
         flags={"constexprs": "BLOCK=64.0", "bazel_target": "//kernels:copy"}),
    Case("kernel_block_not_pow2", "kernel", "compile",
         "block size that is not a power of two: `BLOCK=100`",
         ("kernels.py:11:", "tl.arange(0, BLOCK)"), ("arange's range must be a power of 2",),
         flags={"constexprs": "BLOCK=100"}),
    Case("kernel_string_block", "kernel", "compile",
         "wrong constexpr type: a string block size `BLOCK='abc'`",
         ("kernels.py:11:", "BLOCK='abc'"), ("'str' object has no attribute",),
         flags={"constexprs": "BLOCK='abc'"},
         needs_fix="triton_aot/compiler.py _describe_failure: name the constexpr values in the "
                   "context, e.g. \"(compiling kernel 'copy_kernel' from kernels.py for cuda:80 "
                   "with BLOCK='abc')\"; Triton's own message (an AttributeError) does not say "
                   "which value was wrong"),
    Case("kernel_undefined_helper", "kernel", "compile",
         "kernel calling an undefined function",
         ("kernels.py:35:", "helper_that_does_not_exist is not defined"),
         ("helper_that_does_not_exist(n)",),
         flags={"kernel_name": "calls_missing", "signature": "*i32, i32", "constexprs": None,
                "grid": "1"}),
    Case("kernel_param_not_c_identifier", "kernel", "compile",
         "kernel parameter whose name is not ASCII: `nä` (names C cannot use as they are, "
         "such as `CU_SEQLENS` or `int`, are renamed in the generated C instead)",
         ("kernel parameter 'nä' is not a valid C identifier",),
         ("use ASCII letters, digits and _ in parameter names",),
         flags={"kernel_name": "non_ascii_kernel", "signature": "*i32, i32", "constexprs": None,
                "grid": "1"}),
    Case("kernel_shadows_module", "kernel", "compile",
         "kernel file named like a Python module: `json.py`",
         ("--kernel_path: the kernel file 'json.py' shadows the Python module 'json'",),
         ("rename the kernel file",),
         copy_as="json.py"),
    # (a file name that is no module name, `my-kernels.py`, is not refused: it imports as
    # `my_kernels`; tests/compile/test_real_kernel_files.py)
    # --- kernel files as written: omitted trailing parameters, defaults, None, heuristics -
    Case("sig_unquoted_string", "signature", "compile",
         "a string constexpr written without quotes in the signature: `relu`",
         ("parameter 'BLOCK'", "'relu' is neither a type nor the parameter's name"),
         ("a string is quoted: 'relu'",),
         flags={"signature": "*fp32, *fp32, i32, relu", "constexprs": None}),
    Case("sig_omitted_constexpr_no_value", "signature", "compile",
         "signature that stops before a tl.constexpr without a default, which no algo sets",
         ("--signature has 3 entries for the 4 parameters of 'copy_kernel'",
          "the omitted 'BLOCK' is a tl.constexpr without a default"),
         ("give it an entry, or set it in every algo's constexprs (--constexprs=BLOCK=VALUE)",),
         flags={"signature": "*fp32, *fp32, i32", "constexprs": None}),
    Case("sig_omitted_runtime_arg", "signature", "compile",
         "signature that stops before a run-time argument whose default is not None (`eps=1e-6`)",
         ("the omitted 'eps' is not tl.constexpr and has no default None",),
         ("give it an entry (its type, e.g. i32, or None)",),
         flags={"kernel_name": "defaults_kernel", "signature": "*fp32, *fp32, i32",
                "constexprs": None}),
    Case("sig_default_not_a_value", "signature", "compile",
         "an omitted constexpr whose Python default is no constexpr value (a tuple)",
         ("the omitted 'TABLE' has the default (1, 2) (tuple)",),
         ("set TABLE in the algo's constexprs or give its value in --signature",),
         flags={"kernel_name": "defaults_kernel", "signature": "*fp32, *fp32, i32, fp32, None",
                "constexprs": None}),
    Case("constexpr_not_constexpr_param", "compile flag", "compile",
         "an algo's constexprs setting a run-time argument the signature leaves out",
         ("--constexprs: 'bias_ptr' is not tl.constexpr in 'defaults_kernel'",),
         ("remove it from the algo's constexprs",),
         flags={"kernel_name": "defaults_kernel", "signature": "*fp32, *fp32, i32, fp32",
                "constexprs": "bias_ptr=None"}),
    Case("heuristic_needs_runtime_value", "kernel", "compile",
         "@triton.heuristics `EVEN = n % BLOCK == 0` that the variant's hints (n:16) do not "
         "decide for BLOCK=64",
         ("@triton.heuristics value 'EVEN' of kernel 'even_kernel' needs the run-time value "
          "((n % 64) == 0)", "hints (n:16)"),
         ("set EVEN in the algo's constexprs",
          "or give every specialization a hint that decides it"),
         flags={"kernel_name": "even_kernel", "signature": "*fp32, *fp32, i32",
                "hints": "n:16"}),
    Case("heuristic_sets_argument", "kernel", "compile",
         "@triton.heuristics that sets a run-time argument (`n`)",
         ("@triton.heuristics value 'n' of kernel 'sets_argument_kernel'",
          "'n' is a run-time argument"),
         ("a heuristic may only set a tl.constexpr parameter or num_warps",),
         flags={"kernel_name": "sets_argument_kernel"}),
]


# ----------------------------------------------------------------------------- link tool

# Variant specs for link cases: keyword arguments of tests/link/harness.variant() plus
#   args: a key of LINK_ARGS; set: top-level metadata keys to replace; arg_set: {index: {key:
#   value}} (value None deletes the key); text: raw file content instead of JSON.
LINK_ARGS = {
    "copy": [("x_ptr", "*fp32", 16), ("out_ptr", "*fp32", 16), ("n", "i32", None),
             ("BLOCK", "constexpr", 64)],
    "copy_fp16": [("x_ptr", "*fp16", 16), ("out_ptr", "*fp16", 16), ("n", "i32", None),
                  ("BLOCK", "constexpr", 64)],
    "copy_generic": [("x_ptr", "*fp32", None), ("out_ptr", "*fp32", None), ("n", "i32", None),
                     ("BLOCK", "constexpr", 64)],
    "desc": [("in_desc", "tensordesc<fp32[64]>", None), ("out_desc", "tensordesc<fp32[64]>", None)],
}
LINK_BASE = {"name": "copy", "out_c": "{OUT}/copy.c", "out_h": "{OUT}/copy.h"}


def _v(symbol, **kw):
    spec = {"symbol": symbol, "kernel_name": "copy_kernel", "args": "copy", "algo_index": 0}
    spec.update(kw)
    return spec


_LINK_MESSAGE_FIX = (
    "triton_aot/emit_c/link.py build_plan/_order_algos: end these messages with what to do: "
    "different argument lists -> \"; every variant of a library must come from the same "
    "--signature\"; duplicate variants -> \"; remove one, or give them different hints\"; "
    "duplicate symbol -> \"; give each variant its own --symbol\"; algo_index gap -> \"; number "
    "the algos 0..N-1 without gaps\"; shared algo_index -> \"; give each algo its own algo_index\"")
_LINK_MALFORMED_FIX = (
    "triton_aot/emit_c/link.py load_variant: check the shape of the metadata (args: list of objects "
    "with a str 'name' and 'type' or constexpr=true; target: an object; num_warps/num_stages: "
    "ints) and raise LinkError(f\"{path}: malformed variant metadata: <what>; regenerate it with "
    "triton_aot.compile.compile\"); and in main() catch any other Exception like triton_aot.compile.compile "
    "does (\"error: internal error in triton_aot.emit_c.link: ... (rerun with --verbose ...)\")")
_LINK_WRITE_FIX = (
    "triton_aot/emit_c/link.py link(): wrap the output writes in try/except OSError and raise "
    "LinkError(f\"--out_c/--out_h: cannot write {path}: {e.strerror}\")")

# A record's target and i32 type, as the compile tool writes them (core/target.py's and
# core/arg_type.py's JSON forms).
def _target(arch: int) -> dict:
    return {"backend": "cuda", "arch": arch, "warp_size": 32}


_I32 = {"kind": "scalar", "name": "i32"}

LINK_CASES = [
    Case("link_restricted_algo_lacks_declared_target", "link input", "link",
         "an algo declared for sm_80 and sm_90 (--algo_targets) with no sm_80 variant",
         ("algo 'BLOCK=64 num_warps=8 num_stages=3 targets=cuda:80,cuda:90' has no variant for "
          "sm_80",), ("compile every algo for every target",),
         variants=(_v("copy_a0_sm80", arch=80), _v("copy_a0_sm90"),
                   _v("copy_a1_sm90", algo_index=1, num_warps=8,
                      set={"algo_targets": [_target(80), _target(90)]}))),
    Case("link_restricted_algo_unknown_target", "link input", "link",
         "an algo declared for a target the library has no variant for",
         ("declares target cuda:100", "has no variant for it"),
         ("compile the algo for every target it declares",),
         variants=(_v("copy_a0_sm90"),
                   _v("copy_a1_sm90", algo_index=1, num_warps=8,
                      set={"algo_targets": [_target(90), _target(100)]}))),
    Case("link_launch_args_disagree", "link input", "link",
         "two variants of one library with different launch arguments",
         ("different launch arguments", "copy_a0_sm90 (v0.json) has (n_rows: i32)",
          "copy_a1_sm90 (v1.json) has ()"), ("same --launch_args",),
         variants=(_v("copy_a0_sm90", set={"launch_args": [
             {"name": "n_rows", "type": _I32, "ctype": "int32_t"}]}),
                   _v("copy_a1_sm90", algo_index=1, num_warps=8))),
    Case("link_launch_arg_clash", "link input", "link",
         "a record whose launch argument is also a kernel argument",
         ("launch argument 'n' clashes with a kernel argument",), ("regenerate it with triton_aot.compile.compile",),
         variants=(_v("copy_sm90", set={"launch_args": [
             {"name": "n", "type": _I32, "ctype": "int32_t"}]}),)),
    Case("link_args_disagree", "link input", "link",
         "two algos of one library whose argument lists disagree (`*fp32` vs `*fp16`)",
         ("different argument lists", "copy_a0_sm90 (v0.json)", "copy_a1_sm90 (v1.json)",
          "x_ptr: *fp16"), ("same --signature",),
         variants=(_v("copy_a0_sm90"), _v("copy_a1_sm90", args="copy_fp16", algo_index=1,
                                           num_warps=8)),
         needs_fix=_LINK_MESSAGE_FIX),
    Case("link_duplicate_variants", "link input", "link",
         "two variants with the same algo, target and hints",
         ("duplicate variants: copy_s0_sm90 (v0.json) and copy_s1_sm90 (v1.json)",
          "same algo, target sm_90 and hints"), ("remove one",),
         variants=(_v("copy_s0_sm90"), _v("copy_s1_sm90")),
         needs_fix=_LINK_MESSAGE_FIX),
    Case("link_duplicate_symbol", "link input", "link",
         "two variants with the same C symbol",
         ("duplicate symbol 'copy_sm90'", "v0.json", "v1.json"), ("its own --symbol",),
         variants=(_v("copy_sm90"), _v("copy_sm90", args="copy_generic")),
         needs_fix=_LINK_MESSAGE_FIX),
    Case("link_mixed_kernels", "link input", "link",
         "variants of two different kernels in one library",
         ("mixed kernel names", "(v0.json) is 'copy_kernel'", "(v1.json) is 'scale_kernel'"),
         ("link each kernel separately",),
         variants=(_v("copy_sm90"), _v("scale_sm90", kernel_name="scale_kernel"))),
    Case("link_missing_target", "link input", "link",
         "an algo compiled for sm_80 only while the library has sm_90 too",
         ("has no variant for sm_90", "copy_a1_sm80 (v2.json) is its sm_80 variant"),
         ("compile every algo for every target",),
         variants=(_v("copy_a0_sm80", arch=80), _v("copy_a0_sm90"),
                   _v("copy_a1_sm80", arch=80, algo_index=1, num_warps=8))),
    Case("link_missing_specialization", "link input", "link",
         "a specialization present for sm_90 and missing for sm_80",
         ("copy_s1_sm90 (v2.json) has no sm_80 counterpart with the same hints",),
         ("compile every specialization for every target",),
         variants=(_v("copy_s0_sm80", arch=80), _v("copy_s0_sm90"),
                   _v("copy_s1_sm90", args="copy_generic"))),
    Case("link_algo_index_gap", "link input", "link",
         "algo_index 0 and 2, no 1",
         ("algo_index values [0, 2] are not 0..1",), ("without gaps",),
         variants=(_v("copy_a0_sm90"), _v("copy_a2_sm90", algo_index=2, num_warps=8)),
         needs_fix=_LINK_MESSAGE_FIX),
    Case("link_algo_index_shared", "link input", "link",
         "two different algos with algo_index 0",
         ("two algos share algo_index 0", "copy_a0_sm90 (v0.json)", "copy_b0_sm90 (v1.json)"),
         ("its own algo_index",),
         variants=(_v("copy_a0_sm90"), _v("copy_b0_sm90", num_warps=8)),
         needs_fix=_LINK_MESSAGE_FIX),
    Case("link_algo_index_partial", "link input", "link",
         "one algo with an algo_index, one without",
         ("copy_a0_sm90 (v0.json) has an algo_index but copy_a1_sm90 (v1.json) has none",),
         ("give every algo an index or none",),
         variants=(_v("copy_a0_sm90"), _v("copy_a1_sm90", algo_index=None, num_warps=8))),
    Case("link_not_json", "link input", "link",
         "an input that is not JSON",
         ("v0.json is not valid JSON",), ("Expecting",),
         variants=({"text": "{not json"},)),
    Case("link_not_variant", "link input", "link",
         "a JSON file that is not variant metadata",
         ("v0.json is not a rules_triton.variant.v3 variant metadata file",),
         ("pass the --out_json files of triton_aot.compile.compile",),
         variants=({"text": "{\"format\": \"something else\"}"},)),
    Case("link_malformed_args", "link input", "link",
         "variant metadata whose argument lacks its name",
         ("v0.json", "malformed variant metadata"), ("regenerate it with triton_aot.compile.compile",),
         variants=(_v("copy_sm90", arg_set={0: {"name": None}}),),
         needs_fix=_LINK_MALFORMED_FIX),
    Case("link_malformed_target", "link input", "link",
         "variant metadata whose target is a string",
         ("v0.json", "malformed variant metadata"), ("regenerate it with triton_aot.compile.compile",),
         variants=(_v("copy_sm90", set={"target": "cuda:90"}),),
         needs_fix=_LINK_MALFORMED_FIX),
    Case("link_missing_input", "link input", "link",
         "an input file that does not exist",
         ("cannot read {OUT}/missing.json",), ("No such file or directory",),
         extra=("{OUT}/missing.json",)),
    Case("link_no_inputs", "link flag", "link",
         "no metadata files",
         ("no variant metadata files given",), ("no variant metadata files given",)),
    Case("link_name_missing", "link flag", "link",
         "no --name",
         ("--name is required",), ("--name is required",),
         variants=(_v("copy_sm90"),), flags={"name": None}),
    Case("link_name_not_identifier", "link flag", "link",
         "`--name=my-lib`",
         ("--name 'my-lib' is not a valid C identifier",), ("is not a valid C identifier",),
         variants=(_v("copy_sm90"),), flags={"name": "my-lib"}),
    Case("link_name_reserved", "link flag", "link",
         "`--name=int` (a C keyword)",
         ("--name 'int' is a reserved C/C++ name",), ("rename it",),
         variants=(_v("copy_sm90"),), flags={"name": "int"}),
    Case("link_ptx_fallback_without_ptx", "link flag", "link",
         "`--embed_ptx_fallback` but no variant embeds PTX",
         ("--embed_ptx_fallback needs a target whose variants were compiled with --embed_ptx",),
         ("--embed_ptx",),
         variants=(_v("copy_sm90"),), extra=("--embed_ptx_fallback",)),
    Case("link_tuning_stale", "link input", "link",
         "a tuning table whose algos changed since it was tuned (`tuning` in the rule)",
         ("--tuning {K}/copy_stale.tuning.json is stale",
          "algo 0 is now 'BLOCK=64 num_warps=4 num_stages=3' but was tuned as "
          "'BLOCK=128 num_warps=4 num_stages=3'"),
         ("retune: tools/tune //pkg:copy",),
         variants=(_v("copy_sm90"),),
         extra=("--tuning={K}/copy_stale.tuning.json", "--tuning_key=n",
                "--tuning_label=//pkg:copy")),
    Case("link_tuning_key_not_integer", "link flag", "link",
         "`--tuning_key=x_ptr` (`tuning_key` in the rule): a pointer argument",
         ("--tuning_key: 'x_ptr' is not an integer argument of the C API",), ("use some of n",),
         variants=(_v("copy_sm90"),), extra=("--tuning_key=x_ptr",)),
    Case("link_tuning_without_key", "link flag", "link",
         "`--tuning` without `--tuning_key` (a table but no `tuning_key` in the rule)",
         ("--tuning needs --tuning_key",), ("e.g. --tuning_key=M,N,K",),
         variants=(_v("copy_sm90"),), extra=("--tuning={K}/copy_stale.tuning.json",)),
    Case("link_out_unwritable", "link flag", "link",
         "--out_c in a folder that does not exist",
         ("--out_c", "{OUT}/no/such/dir/copy.c"), ("cannot write",),
         variants=(_v("copy_sm90"),), flags={"out_c": "{OUT}/no/such/dir/copy.c"},
         needs_fix=_LINK_WRITE_FIX),
]


# ----------------------------------------------------------------------------- rule attributes

# The rule cases refused at build: the subject's label, which the tool's message names.
def _rule_subject(case_id: str) -> str:
    return f"//tests/reliability:{case_id}_subject"


def _at_build(case_id: str, **flags) -> dict:
    """The compile tool's flags for a rule case refused at build: the good library's one
    compile (COMPILE_BASE), with `flags` changed, as the subject's action runs it."""
    return dict(flags, bazel_target=_rule_subject(case_id))


def _import_check(case_id: str, **flags) -> dict:
    """As _at_build, for a library of several variants: its one import check (--out_params
    alone, every target in --library_targets)."""
    none = dict.fromkeys(("out_json", "out_c", "out_h", "grid", "symbol", "num_warps",
                          "num_stages"))
    return dict(none, out_params="{OUT}/params.json", **_at_build(case_id, **flags))


RULE_CASES = [
    Case("rule_signature_empty", "rule attribute", "rule",
         "`signature = \"\"`",
         ("attribute 'signature': is empty",), ("give one entry per kernel parameter",),
         attrs='signature = ""'),
    Case("rule_signature_empty_entry", "rule attribute", "rule",
         "`signature = \"*fp32, , i32, BLOCK\"`",
         ("attribute 'signature': entry 2 is empty in '*fp32, , i32, BLOCK'",),
         ("separate entries with single commas",),
         attrs='signature = "*fp32, , i32, BLOCK"', at_build=True,
         flags=_at_build("rule_signature_empty_entry", signature="*fp32, , i32, BLOCK")),
    Case("rule_signature_constexpr_twice", "rule attribute", "rule",
         "the same constexpr name twice in the signature",
         ("attribute 'signature': entry 3 (parameter 'n'): unknown type 'BLOCK'",),
         ("use i1, i8",),
         attrs='signature = "*fp32, *fp32, BLOCK, BLOCK"', at_build=True,
         flags=_at_build("rule_signature_constexpr_twice", signature="*fp32, *fp32, BLOCK, BLOCK")),
    Case("rule_kernel_not_identifier", "rule attribute", "rule",
         "`kernel = \"copy-kernel\"`",
         ("attribute 'kernel': 'copy-kernel' is not a C identifier",),
         ("letters, digits and '_'",),
         attrs='kernel = "copy-kernel"'),
    Case("rule_kernel_src_ambiguous", "rule attribute", "rule",
         "two .py files in srcs and no kernel_src",
         ("attribute 'kernel_src': srcs has 2 .py files",),
         ("set kernel_src to the one that defines 'copy_kernel'",),
         attrs='srcs = ["kernels/kernels.py", "kernels/exits.py"]'),
    Case("rule_targets_not_a_target", "rule attribute", "rule",
         "`targets = [\"CUDA:90\"]`",
         ("attribute 'targets': 'CUDA:90' is not a target",), ('write "cuda:<sm>"',),
         attrs='targets = ["CUDA:90"]'),
    Case("rule_targets_mixed_backends", "rule attribute", "rule",
         "`targets = [\"cuda:90\", \"hip:gfx942\"]`: CUDA and HIP in one library",
         ("attribute 'targets': mixes CUDA and HIP targets ('cuda:90' and 'hip:gfx942')",),
         ("make one library per backend",),
         attrs='targets = ["cuda:90", "hip:gfx942"]'),
    Case("rule_targets_hip_not_gfx", "rule attribute", "rule",
         "`targets = [\"hip:mi300\"]`: a HIP target that is no gfx arch",
         ("attribute 'targets': 'hip:mi300' is not an AMD target",),
         ("write hip:gfxNNN, e.g. hip:gfx90a",),
         attrs='targets = ["hip:mi300"]', at_build=True,
         flags=_at_build("rule_targets_hip_not_gfx", target="hip:mi300")),
    Case("rule_targets_arch_suffix", "rule attribute", "rule",
         "`targets = [\"cuda:90a\"]` (accepted by analysis, refused by the compile tool)",
         ("attribute 'targets': 'cuda:90a'",), ("write cuda:90",),
         attrs='targets = ["cuda:90a"]', at_build=True,
         flags=_at_build("rule_targets_arch_suffix", target="cuda:90a")),
    Case("rule_targets_arch_suffix_second", "rule attribute", "rule",
         "`targets = [\"cuda:80\", \"cuda:90a\"]`: a wrong target after a good one, refused once "
         "by the library's import check (--library_targets), before any variant compiles",
         ("attribute 'targets': 'cuda:90a'",), ("write cuda:90",),
         attrs='targets = ["cuda:80", "cuda:90a"]', at_build=True,
         flags=_import_check("rule_targets_arch_suffix_second", target="cuda:80",
                             library_targets="cuda:80,cuda:90a")),
    Case("rule_targets_duplicate_spelling", "rule attribute", "rule",
         "the same target twice",
         ("attribute 'targets': 'cuda:80' is listed twice",), ("listed twice",),
         attrs='targets = ["cuda:80", "cuda:90", "cuda:80"]'),
    Case("rule_specializations_empty", "rule attribute", "rule",
         "`specializations = []`",
         ("attribute 'specializations': is empty",), ('use [""] for one generic variant',),
         attrs="specializations = []"),
    Case("rule_specializations_duplicate", "rule attribute", "rule",
         "duplicate specializations: `[\"\", \" \"]` (both generic)",
         ("attribute 'specializations': entries 0 and 1 give the same hints",), ("remove one",),
         attrs='specializations = ["", " "]'),
    Case("rule_specializations_conflicting", "rule attribute", "rule",
         "conflicting specialization: `\"x_ptr:16 n:16 n:1\"` (refused by the compile tool)",
         ("attribute 'specializations': 'n' is given twice with different hints (:16 and :1)",),
         ("give each parameter one hint",),
         attrs='specializations = ["x_ptr:16 n:16 n:1"]', at_build=True,
         flags=_at_build("rule_specializations_conflicting", hints="x_ptr:16 n:16 n:1")),
    Case("rule_specializations_syntax", "rule attribute", "rule",
         "hint written as `x_ptr=16` (refused by the compile tool)",
         ("attribute 'specializations': cannot parse 'x_ptr=16'",),
         ("write NAME:16 or NAME:1",),
         attrs='specializations = ["x_ptr=16"]', at_build=True,
         flags=_at_build("rule_specializations_syntax", hints="x_ptr=16")),
    Case("rule_specialization_algos_unknown_pattern", "rule attribute", "rule",
         "`specialization_algos` names a pattern the library does not specialise on",
         ("attribute 'specialization_algos': 'y_ptr:16' is not one of the specializations",),
         ("regenerate the .tuning_hints.bzl", "or list the pattern in specializations"),
         attrs='specializations = ["x_ptr:16", ""], specialization_algos = {"y_ptr:16": ["0"]}'),
    Case("rule_specialization_algos_generic", "rule attribute", "rule",
         "`specialization_algos` lists the generic pattern",
         ("attribute 'specialization_algos': lists the generic pattern ('')",),
         ("remove that entry",),
         attrs='specialization_algos = {"": ["0"]}'),
    Case("rule_specialization_algos_index", "rule attribute", "rule",
         "`specialization_algos` keeps an algo index the library does not have",
         ("attribute 'specialization_algos': 'x_ptr:16': '1' is not an algo index (0..0)",),
         ("is not an algo index",),
         attrs='specializations = ["x_ptr:16", ""], specialization_algos = {"x_ptr:16": ["1"]}'),
    Case("rule_algos_missing", "rule attribute", "rule",
         "no algos although the signature names a constexpr",
         ("attribute 'signature': entry 4 (parameter 'BLOCK'): BLOCK has no value",),
         ("pass BLOCK=VALUE in attribute 'algos'",),
         attrs='algos = [], grid = "cdiv(n, 64)"', at_build=True,
         flags=_at_build("rule_algos_missing", constexprs=None)),
    Case("rule_algo_constexpr_type", "rule attribute", "rule",
         "constexpr value of the wrong type: a list",
         ("attribute 'algos': algos[0]: constexpr 'BLOCK' has value [64]",),
         ("use an int, bool, float, None, a string such as",),
         attrs="algos = ['{\"constexprs\": {\"BLOCK\": [64]}}']"),
    Case("rule_algo_unknown_key", "rule attribute", "rule",
         "misspelt algo key `num_warp`",
         ("attribute 'algos': algos[0]: unknown key 'num_warp'",),
         ("known: constexprs, num_warps",),
         attrs="algos = ['{\"constexprs\": {\"BLOCK\": 64}, \"num_warp\": 4}']"),
    Case("rule_algo_num_stages", "rule attribute", "rule",
         "`num_stages = 0` in an algo",
         ("attribute 'algos': algos[0]: num_stages",), ("must be a positive int, got 0",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, num_stages = 0)]'),
    Case("rule_algo_grid_placeholder", "rule attribute", "rule",
         "an algo's grid naming a constexpr the algo does not set: `{BLOCK_M}`",
         ("attribute 'algos': algos[0]: grid 'cdiv(n, {BLOCK_M})' has a {NAME} placeholder",),
         ("not one of this algo's constexprs (BLOCK)",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, grid = "cdiv(n, {BLOCK_M})")]'),
    Case("rule_algo_constexpr_comma", "rule attribute", "rule",
         "constexpr string that smuggles another flag: `\"64,n=3\"`",
         ("attribute 'algos': algos[0]: constexpr 'BLOCK'", "'64,n=3' is not a value"),
         ("a string constexpr holds only letters, digits, spaces and _.+-",
          'write it as a plain string, e.g. \"leaky_relu\"'),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": "64,n=3"})]'),
    Case("rule_grid_injection_via_constexpr", "rule attribute", "rule",
         "code injected into the grid through a constexpr string placeholder",
         ("attribute 'algos': algos[0]: constexpr 'BLOCK'", "is not a value"),
         ('a dtype is written \"tl.float16\"',),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": "64); system(\\"rm -rf /\\"); (1"})]'),
    Case("rule_algo_constexpr_not_a_name", "rule attribute", "rule",
         "an algo's constexprs key that is no parameter name: `\"BLOCK SIZE\"`",
         ("attribute 'algos': algos[0]: 'BLOCK SIZE' is not a parameter name",),
         ("constexprs maps tl.constexpr parameter names to values",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64, "BLOCK SIZE": 64})]'),
]

# Moved here from tests/rules/analysis_tests.bzl (one place for rule-failure tests); each keeps
# the fragment that test asserted as its culprit.
# --- real kernel files: the build-time driver, kernels from installed modules ---------------
COMPILE_CASES += [
    Case("kernel_device_query_at_import", "kernel", "compile",
         "kernel file reading the SM count from the driver at import (as Triton's softmax "
         "tutorial does)",
         ("--kernel_path: device_query.py:5 calls "
          "triton.runtime.driver.active.utils.get_device_properties", "needs a GPU"),
         ("Move the call into the function that launches the kernel", "NUM_SMS in the grid"),
         flags={"kernel_path": "{K}/device_query.py", "kernel_name": "k", "signature": "*fp32",
                "constexprs": None, "grid": "1"}),
    Case("kernel_module_not_installed", "compile flag", "compile",
         "`--kernel_module` naming a package the environment lacks",
         ("--kernel_module: no module named 'no_such_kernels'",),
         ("install its package where the toolchain's interpreter sees it",
          "add the py_library that provides it to deps"),
         flags={"kernel_path": None, "kernel_name": "k", "signature": "*fp32",
                "constexprs": None, "grid": "1"},
         extra=("--kernel_module=no_such_kernels.ops.norm",)),
    Case("kernel_module_not_dotted_name", "compile flag", "compile",
         "`--kernel_module=liger-kernel.ops.rms_norm` (the distribution's name, not the module's)",
         ("--kernel_module: 'liger-kernel.ops.rms_norm' is not a dotted module name",),
         ("write it as in an import statement",),
         flags={"kernel_path": None}, extra=("--kernel_module=liger-kernel.ops.rms_norm",)),
    Case("kernel_module_and_path", "compile flag", "compile",
         "both `--kernel_path` and `--kernel_module`",
         ("--kernel_module: given together with --kernel_path",), ("pass one of them",),
         extra=("--kernel_module=liger_kernel.ops.rms_norm",)),
]

RULE_CASES += [
    Case("rule_kernel_module_with_srcs", "rule attribute", "rule",
         "`kernel_module` and `srcs` both given",
         ("attribute 'kernel_module': given together with srcs",),
         ("the kernel comes either from a file (srcs) or from a module (kernel_module)",),
         attrs='kernel_module = "liger_kernel.ops.rms_norm"'),
    Case("rule_kernel_module_not_dotted_name", "rule attribute", "rule",
         "`kernel_module = \"liger-kernel.ops\"`",
         ("attribute 'kernel_module': 'liger-kernel.ops' is not a dotted module name",),
         ("write it as in an import statement",),
         attrs='srcs = [], kernel_module = "liger-kernel.ops"'),
    Case("rule_no_kernel_source", "rule attribute", "rule",
         "neither `srcs` nor `kernel_module`",
         ("attribute 'srcs': no .py file",),
         ("list the file that defines 'copy_kernel' in srcs", "kernel_module"),
         attrs="srcs = []"),
]

RULE_CASES += [
    Case("rule_launch_args_no_type", "rule attribute", "rule",
         "`launch_args = [\"n_rows\"]`",
         ("attribute 'launch_args': entry 'n_rows' is not 'name: type'",),
         ('launch_args = [\"n_rows: i32\"]',),
         attrs='launch_args = ["n_rows"]'),
    Case("rule_launch_args_float", "rule attribute", "rule",
         "`launch_args = [\"scale: fp32\"]`",
         ("attribute 'launch_args': 'scale' has type 'fp32'",), ("launch arguments are integers",),
         attrs='launch_args = ["scale: fp32"]'),
    Case("rule_algo_target_not_in_library", "rule attribute", "rule",
         "`triton_algo(targets = [\"cuda:90\"])` in a library whose targets are cuda:80",
         ("attribute 'algos': algos[0]: target 'cuda:90' is not one of the library's targets "
          "(cuda:80)",), ("an algo's targets restrict the library's",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, targets = ["cuda:90"])]'),
    Case("rule_algo_maxnreg", "rule attribute", "rule",
         "`triton_algo(maxnreg = 300)`",
         ("attribute 'algos': algos[0]: maxnreg must be an int from 16 to 255, got 300",),
         ("from 16 to 255",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, maxnreg = 300)]'),
    Case("rule_algo_num_ctas", "rule attribute", "rule",
         "`triton_algo(num_ctas = 3)`",
         ("attribute 'algos': algos[0]: num_ctas must be 1, 2, 4, 8 or 16, got 3",),
         ("1, 2, 4, 8 or 16",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, num_ctas = 3)]'),
    Case("rule_algo_pdl_old_target", "rule attribute", "rule",
         "`triton_algo(launch_pdl = True)` in a library for `cuda:80`",
         ("attribute 'algos': algos[0]: launch_pdl = True needs cuda:90 or newer, but the algo "
          "is built for 'cuda:80'",),
         ('restrict the algo with targets = ["cuda:90"], or drop launch_pdl',),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, launch_pdl = True)]'),
    Case("rule_algo_maxnreg_hip", "rule attribute", "rule",
         "`triton_algo(maxnreg = 128)` in a hip library",
         ("attribute 'algos': algos[0]: maxnreg is CUDA only, but the algo is built for "
          "'hip:gfx942'",),
         ("drop maxnreg for hip targets",),
         attrs='targets = ["hip:gfx942"], '
               'algos = [triton_algo(constexprs = {"BLOCK": 64}, maxnreg = 128)]'),
    Case("rule_targets_sm_spelling", "rule attribute", "rule",
         "`targets = [\"sm_90\"]`",
         ("attribute 'targets': 'sm_90' is not a target",), ('write "cuda:<sm>"',),
         attrs='targets = ["sm_90"]'),
    Case("rule_targets_too_old", "rule attribute", "rule",
         f"`targets = [\"cuda:{TOO_OLD_SM}\"]` (older than any supported triton compiles for)",
         (f"attribute 'targets': 'cuda:{TOO_OLD_SM}': no supported triton compiles for "
          f"sm_{TOO_OLD_SM}",),
         (f"use cuda:{OLDEST_SM} or newer",),
         attrs=f'targets = ["cuda:{TOO_OLD_SM}"]', at_build=True,
         flags=_at_build("rule_targets_too_old", target=f"cuda:{TOO_OLD_SM}")),
    Case("rule_targets_no_triton", "rule attribute", "rule",
         f"`targets = [\"cuda:{NO_TRITON_SM}\"]` (no supported triton compiles for it)",
         (f"attribute 'targets': 'cuda:{NO_TRITON_SM}'", f"cannot compile for sm_{NO_TRITON_SM}",
          f"no supported triton compiles for sm_{NO_TRITON_SM}"),
         (f"use one of cuda:{OLDEST_SM}",),
         attrs=f'targets = ["cuda:{NO_TRITON_SM}"]', at_build=True,
         flags=_at_build("rule_targets_no_triton", target=f"cuda:{NO_TRITON_SM}")),
    Case("rule_targets_hip_no_triton", "rule attribute", "rule",
         f"`targets = [\"hip:{NO_TRITON_GFX}\"]` (an AMD arch triton does not compile for)",
         (f"attribute 'targets': 'hip:{NO_TRITON_GFX}': not an AMD arch rules_triton "
          "compiles for",),
         (f"use one of hip:{sorted(targets.HIP_ARCHS)[0]}",),
         attrs=f'targets = ["hip:{NO_TRITON_GFX}"]', at_build=True,
         flags=_at_build("rule_targets_hip_no_triton", target=f"hip:{NO_TRITON_GFX}")),
    Case("rule_embed_ptx_arch_specific_only", "rule attribute", "rule",
         "`embed_ptx = True` with only arch-specific targets (`cuda:90`)",
         ("attribute 'embed_ptx': every target is cuda:90 or newer",),
         ("add a target below cuda:90 to carry the PTX",),
         attrs='embed_ptx = True, targets = ["cuda:90"]'),
    Case("rule_targets_duplicate", "rule attribute", "rule",
         "`targets = [\"cuda:90\", \"cuda:90\"]`",
         ("attribute 'targets': 'cuda:90' is listed twice",), ("listed twice",),
         attrs='targets = ["cuda:90", "cuda:90"]'),
    Case("rule_specializations_bad_hint", "rule attribute", "rule",
         "hint `:8` (only :16 and :1 exist; refused by the compile tool)",
         ("attribute 'specializations': 'x_ptr:8' is not a hint",),
         ("write NAME:16", "or NAME:1"),
         attrs='specializations = ["x_ptr:8"]', at_build=True,
         flags=_at_build("rule_specializations_bad_hint", hints="x_ptr:8")),
    Case("rule_specializations_same_hints", "rule attribute", "rule",
         "the same hints twice, in another order and separator",
         ("attribute 'specializations': entries 0 and 1 give the same hints",), ("remove one",),
         attrs='specializations = ["x_ptr:16 n:16", "n:16, x_ptr:16"]'),
    Case("rule_algo_missing_constexpr", "rule attribute", "rule",
         "an algo that does not set the signature's constexpr",
         ("attribute 'signature': entry 4 (parameter 'BLOCK'): BLOCK has no value",),
         ("pass BLOCK=VALUE in attribute 'algos'",),
         attrs='algos = [triton_algo(num_warps = 4)], grid = "cdiv(n, 64)"', at_build=True,
         flags=_at_build("rule_algo_missing_constexpr", constexprs=None)),
    Case("rule_grid_placeholder", "rule attribute", "rule",
         "the library's grid naming a constexpr no algo sets: `{BLOCK_M}`",
         ("has a {NAME} placeholder that is not one of this algo's constexprs",),
         ("(BLOCK)",),
         attrs='grid = "cdiv(n, {BLOCK_M}), 1, 1"'),
    Case("rule_c_name_not_identifier", "rule attribute", "rule",
         "`c_name = \"my-kernel\"`",
         ("attribute 'c_name': 'my-kernel' is not a C identifier",),
         ("letters, digits and '_'",),
         attrs='c_name = "my-kernel"'),
    Case("rule_algos_duplicate", "rule attribute", "rule",
         "the same algo twice",
         ("attribute 'algos': algos[0] and algos[1] are the same algo",), ("remove one",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}), '
               'triton_algo(constexprs = {"BLOCK": 64})]'),
    Case("rule_algo_num_warps", "rule attribute", "rule",
         "`num_warps = 3` in an algo",
         ("attribute 'algos': algos[0]: num_warps must be a power of two from 1 to 32, got 3",),
         ("power of two",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 64}, num_warps = 3)]'),
    Case("rule_grid_missing", "rule attribute", "rule",
         "no grid on the library or the algo",
         ("attribute 'grid': no grid",), ("set 'grid' on the library or on algos[0]",),
         attrs='grid = ""'),
    Case("rule_algo_not_triton_algo", "rule attribute", "rule",
         "`algos = [\"BLOCK=64\"]` instead of triton_algo(...)",
         ("attribute 'algos': algos[0] is not a triton_algo(...) value",), ("BLOCK=64",),
         attrs='algos = ["BLOCK=64"]'),
    # Analysis-time type names come from triton_aot/core/triton_types.py
    # (rules/private/generated/triton_types.bzl): `f32` is no Triton type there, so it is a constexpr name, and the message says both.
    Case("rule_signature_unknown_type_f32", "rule attribute", "rule",
         "`f32` for fp32 in the signature (no Triton type is spelt f32)",
         ("attribute 'signature': entry 3 (parameter 'n'): unknown type 'f32'",),
         ("fp32",),
         attrs='signature = "*fp32, *fp32, f32, BLOCK"', at_build=True,
         flags=_at_build("rule_signature_unknown_type_f32", signature="*fp32, *fp32, f32, BLOCK")),
]

# ----------------------------------------------------------------------------- host tensor descriptors

_DESC = {"kernel_name": "desc_copy_kernel", "constexprs": None, "grid": "1",
         "signature": "tensordesc<fp32[64]>, tensordesc<fp32[64]>", "target": "cuda:90",
         "symbol": "desc_copy"}
_TENSORDESC_FORM = "write tensordesc<DTYPE[B0, B1, ...]>"

COMPILE_CASES += [
    Case("sig_tensordesc_malformed", "signature", "compile",
         "a tensor descriptor without its block shape: `tensordesc<fp32>`",
         ("--signature entry 1 ('tensordesc<fp32>')", "cannot parse the tensor descriptor"),
         (_TENSORDESC_FORM, "e.g. tensordesc<fp16[128, 64]>"),
         flags=dict(_DESC, signature="tensordesc<fp32>, tensordesc<fp32[64]>")),
    Case("sig_tensordesc_unclosed", "signature", "compile",
         "an unclosed block shape: `tensordesc<fp16[128, 64>` (the comma stays inside)",
         ("--signature: entry 1 ('tensordesc<fp16[128') opens a '<' or '[' that is never "
          "closed",), ("close it, e.g. tensordesc<fp16[128, 64]>",),
         flags=dict(_DESC, signature="tensordesc<fp16[128, 64>, tensordesc<fp32[64]>")),
    Case("sig_tensordesc_block_not_pow2", "signature", "compile",
         "a block size that is not a power of two: `tensordesc<fp32[48]>`",
         ("--signature entry 2", "block size 48 is not a power of two"), (_TENSORDESC_FORM,),
         flags=dict(_DESC, signature="tensordesc<fp32[64]>, tensordesc<fp32[48]>")),
    Case("sig_tensordesc_dtype", "signature", "compile",
         "a bool tensor descriptor: `tensordesc<i1[64]>`",
         ("--signature entry 1", "element type 'i1' cannot be a tensor descriptor's"),
         ("DTYPE one of i8, i16",),
         flags=dict(_DESC, signature="tensordesc<i1[64]>, tensordesc<fp32[64]>")),
    Case("sig_tensordesc_hint", "signature", "compile",
         "a hint on a tensor descriptor: `tensordesc<fp32[64]>:16`",
         ("--signature entry 1", "a tensor descriptor takes no hint"),
         ("checks its base and strides for TMA's 16-byte alignment itself",),
         flags=dict(_DESC, signature="tensordesc<fp32[64]>:16, tensordesc<fp32[64]>")),
    Case("tensordesc_below_sm90", "compile flag", "compile",
         "host tensor descriptors compiled for `--target=cuda:80` (no TMA)",
         ("--target: cuda:80 has no TMA", "in_desc, out_desc are host tensor descriptors"),
         ("compile it for cuda:90 or newer",),
         flags=dict(_DESC, target="cuda:80", symbol="desc_copy_sm80")),
    Case("tensordesc_c_name_clash", "signature", "compile",
         "descriptor `x` next to a parameter named `x_base` (the descriptor's C base pointer)",
         ("tensor descriptor 'x' becomes the C parameter 'x_base'",
          "clashes with parameter 'x_base'"), ("rename one of them",),
         flags=dict(_DESC, kernel_name="desc_clash_kernel",
                    signature="tensordesc<fp32[64]>, *fp32")),
]

LINK_CASES += [
    Case("link_tensordesc_without_tma", "link input", "link",
         "a record whose tensor descriptor has no TMA encoding (`tma` missing)",
         ("argument 'in_desc': 'tma' must be an object",),
         ("regenerate it with triton_aot.compile.compile",),
         variants=(_v("desc_sm90", args="desc", kernel_name="desc_copy_kernel",
                      arg_set={0: {"tma": None}}),)),
]

RULE_CASES += [
    Case("rule_tensordesc_malformed", "rule attribute", "rule",
         "`signature = \"tensordesc<fp32>, ...\"` (no block shape)",
         ("attribute 'signature': entry 1 ('tensordesc<fp32>')",
          "cannot parse the tensor descriptor"),
         (_TENSORDESC_FORM,),
         attrs='signature = "tensordesc<fp32>, *fp32, i32, BLOCK"', at_build=True,
         flags=_at_build("rule_tensordesc_malformed",
                         signature="tensordesc<fp32>, *fp32, i32, BLOCK")),
    Case("rule_tensordesc_block_not_pow2", "rule attribute", "rule",
         "`signature = \"tensordesc<fp16[128, 48]>, ...\"`",
         ("attribute 'signature': entry 1", "block size 48 is not a power of two"),
         (_TENSORDESC_FORM,),
         attrs='signature = "tensordesc<fp16[128, 48]>, *fp32, i32, BLOCK"', at_build=True,
         flags=_at_build("rule_tensordesc_block_not_pow2",
                         signature="tensordesc<fp16[128, 48]>, *fp32, i32, BLOCK")),
    Case("rule_tensordesc_placeholder_unknown", "rule attribute", "rule",
         "a block-size placeholder `{BM}` that no algo sets",
         ("attribute 'signature'", "has a {NAME} placeholder that is not one of algos[0]'s "
          "constexprs (BLOCK)"), ("may name a constexpr of the signature that every algo sets",),
         attrs='signature = "tensordesc<fp32[{BM}]>, *fp32, i32, BLOCK", targets = ["cuda:90"]'),
    Case("rule_tensordesc_below_sm90", "rule attribute", "rule",
         "a tensor descriptor in the signature and `targets = [\"cuda:80\", \"cuda:90\"]`",
         ("attribute 'targets': cuda:80 has no TMA",
          "x_ptr is a host tensor descriptor"),
         ("build the library for cuda:90 or newer only", "or pass plain pointers"),
         attrs='signature = "tensordesc<fp32[64]>, *fp32, i32, BLOCK", '
               'targets = ["cuda:80", "cuda:90"]', at_build=True,
         flags=_import_check("rule_tensordesc_below_sm90", target="cuda:80",
                             library_targets="cuda:80,cuda:90",
                             signature="tensordesc<fp32[64]>, *fp32, i32, BLOCK")),
]

# runtime: one call of a library with `x_desc: tensordesc<fp16[64, 64]>` (box [64, 64]) and
# `n: i32`, over the fake CUDA driver; the call must return the status the culprit names and
# launch nothing (test_catalogue.py prints "returned STATUS; L launches, E encodes").
_REFUSED = ("returned CUDA_ERROR_INVALID_VALUE", "0 launches, 0 encodes")
RUNTIME_CASES = [
    Case("runtime_tensordesc_misaligned_base", "launch call", "runtime",
         "descriptor base 8 bytes past a 16-byte boundary",
         _REFUSED[:1], _REFUSED[1:], call="8 256 256 256 1"),
    Case("runtime_tensordesc_stride_not_16_bytes", "launch call", "runtime",
         "row stride of 100 fp16 (200 bytes, not a multiple of 16)",
         _REFUSED[:1], _REFUSED[1:], call="0 256 100 100 1"),
    Case("runtime_tensordesc_last_stride", "launch call", "runtime",
         "last dimension not contiguous (last stride 2)",
         _REFUSED[:1], _REFUSED[1:], call="0 256 128 256 2"),
    Case("runtime_tensordesc_empty_dimension", "launch call", "runtime",
         "a dimension of 0",
         _REFUSED[:1], _REFUSED[1:], call="0 0 256 256 1"),
    Case("runtime_tensordesc_dimension_beyond_int32", "launch call", "runtime",
         "a dimension of 2^31 (the kernel gets the shape as int32)",
         _REFUSED[:1], _REFUSED[1:], call="0 2147483648 64 64 1"),
]

# --- reset_to_zero (Triton's split-K pre_hook=init_to_zero): regions zeroed before the launch --
_RTZ_FORMS = "give " + reset_to_zero.FORMS_TEXT
COMPILE_CASES += [
    Case("reset_to_zero_unknown_argument", "compile flag", "compile",
         "`--reset_to_zero='c_ptr=n'` naming no argument of the kernel",
         ("--reset_to_zero: c_ptr: 'c_ptr' is not an argument of the kernel",),
         ("the kernel's pointer arguments: x_ptr, out_ptr",),
         extra=("--reset_to_zero=c_ptr=n",)),
    Case("reset_to_zero_not_a_pointer", "compile flag", "compile",
         "`--reset_to_zero='n=n'` naming an integer argument",
         ("--reset_to_zero: n: 'n' is a scalar argument (i32), not a pointer",),
         ("reset_to_zero zeroes the memory a pointer argument",),
         extra=("--reset_to_zero=n=n",)),
    Case("reset_to_zero_constexpr", "compile flag", "compile",
         "`--reset_to_zero='BLOCK=64'` naming a constexpr",
         ("--reset_to_zero: BLOCK: 'BLOCK' is a tl.constexpr, not a pointer",),
         ("reset_to_zero zeroes the memory a pointer argument",),
         extra=("--reset_to_zero=BLOCK=64",)),
    Case("reset_to_zero_two_extents", "compile flag", "compile",
         "`--reset_to_zero='out_ptr=n, n'`: two extents (1-D is one, 2-D three, a strided matrix four)",
         ("--reset_to_zero: out_ptr: 'n, n' has 2 expressions",), (_RTZ_FORMS,),
         extra=("--reset_to_zero=out_ptr=n, n",)),
    Case("reset_to_zero_injection", "grid", "compile",
         "code injected through an extent: `n); exit(1`",
         ("--reset_to_zero: out_ptr: character ';' is not allowed",),
         ("reset_to_zero extents (the grid's language without NUM_SMS) may only use",),
         extra=("--reset_to_zero=out_ptr=n; exit(1)",)),
    Case("reset_to_zero_unknown_name", "grid", "compile",
         "an extent naming an unknown name: `N`",
         ("--reset_to_zero: out_ptr: unknown name 'N'",), ("the kernel's integer arguments are n",),
         extra=("--reset_to_zero=out_ptr=N",)),
    Case("reset_to_zero_num_sms", "grid", "compile",
         "an extent reading `NUM_SMS` (a device attribute)",
         ("--reset_to_zero: out_ptr: NUM_SMS", "cannot size a reset_to_zero region"),
         ("not the device's",),
         extra=("--reset_to_zero=out_ptr=NUM_SMS",)),
    Case("reset_to_zero_placeholder", "compile flag", "compile",
         "`{BLOCK_M}` placeholder that is no integer constexpr of the algo",
         ("--reset_to_zero: out_ptr: {BLOCK_M} in 'cdiv(n, {BLOCK_M})' is not an integer "
          "constexpr of this algo",), ("its integer constexprs: BLOCK",),
         extra=("--reset_to_zero=out_ptr=cdiv(n, {BLOCK_M})",)),
    Case("reset_to_zero_syntax", "compile flag", "compile",
         "`--reset_to_zero='out_ptr'` without extents",
         ("--reset_to_zero: entry 'out_ptr' is not NAME=EXTENTS",),
         ("--reset_to_zero='c_ptr=M, N, stride_cm' (2-D)",),
         extra=("--reset_to_zero=out_ptr",)),
    Case("reset_to_zero_hip", "compile flag", "compile",
         "`--reset_to_zero` for a hip target",
         ("--reset_to_zero: is CUDA only for now (target hip:gfx942)",),
         ("zero the output before calling a hip library",),
         flags={"target": "hip:gfx942", "symbol": "copy_gfx942", "out_c": None, "out_h": None},
         extra=("--reset_to_zero=out_ptr=n",)),
]
_RTZ_ALGO = 'algos = [triton_algo(constexprs = {"BLOCK": 64}, reset_to_zero = %s)]'
RULE_CASES += [
    Case("rule_reset_to_zero_not_a_dict", "rule attribute", "rule",
         "an algo's reset_to_zero that is a list, not a dict",
         ("attribute 'algos': algos[0]: reset_to_zero must be a non-empty dict",),
         ('e.g. {\"c_ptr\": \"M, N, stride_cm\"}',),
         attrs="algos = ['{\"constexprs\": {\"BLOCK\": 64}, \"reset_to_zero\": "
               "[\"out_ptr\"]}']"),
    Case("rule_reset_to_zero_value_not_string", "rule attribute", "rule",
         "an algo's reset_to_zero extents given as a number",
         ("attribute 'algos': algos[0]: reset_to_zero['out_ptr'] must be a string of extents",),
         (reset_to_zero.FORMS_TEXT,),
         attrs="algos = ['{\"constexprs\": {\"BLOCK\": 64}, \"reset_to_zero\": "
               "{\"out_ptr\": 3}}']"),
    Case("rule_reset_to_zero_two_extents", "rule attribute", "rule",
         "`reset_to_zero = {\"out_ptr\": \"n, n\"}`: two extents",
         ("attribute 'algos': algos[0]: reset_to_zero['out_ptr'] 'n, n' has 2 expressions",),
         (_RTZ_FORMS,),
         attrs=_RTZ_ALGO % '{"out_ptr": "n, n"}'),
    Case("rule_reset_to_zero_placeholder", "rule attribute", "rule",
         "a reset_to_zero extent naming a constexpr the algo does not set: `{BLOCK_M}`",
         ("attribute 'algos': algos[0]: reset_to_zero['out_ptr'] 'cdiv(n, {BLOCK_M})' has a "
          "{NAME} placeholder",), ("not one of this algo's constexprs (BLOCK)",),
         attrs=_RTZ_ALGO % '{"out_ptr": "cdiv(n, {BLOCK_M})"}'),
    Case("rule_reset_to_zero_not_a_name", "rule attribute", "rule",
         "a reset_to_zero key that is no argument name: `\"out ptr\"`",
         ("attribute 'algos': algos[0]: reset_to_zero key \"out ptr\" is not an argument name",),
         ("name the pointer argument to zero",),
         attrs=_RTZ_ALGO % '{"out ptr": "n"}'),
    Case("rule_reset_to_zero_hip", "rule attribute", "rule",
         "reset_to_zero in a hip library",
         ("attribute 'algos': algos[0]: reset_to_zero is CUDA only for now",
          "targets 'hip:gfx942'"), ("zero the output before calling a hip library",),
         attrs='targets = ["hip:gfx942"], ' + _RTZ_ALGO % '{"out_ptr": "n"}'),
]

# ----------------------------------------------------------------------------- capture tool

# A good capture (triton_launcher_library's action): every capture case names another launcher
# of kernels/bad_launchers.py; the message names the target and the launcher's file:line.
CAPTURE_BASE = {
    "target": "//pkg:scaled",
    "launcher_path": "{K}/bad_launchers.py",
    "launcher": "good",
    "call": "fp32(n)",
    "sizes": '{"n": 4096}',
    "name": "scaled",
    "out_record": "{OUT}/r.json",
    "out_bzl": "{OUT}/scaled.launcher.bzl",
    "out_build": "{OUT}/scaled.BUILD",
}

# Launchers of tests/capture that do torch work the captured op would not reproduce.
TORCH_WORK = "torch_work_launchers.py"


def _torch_work(launcher: str, call: str = "fp32(n)") -> dict:
    return {"launcher_path": "{K}/../../capture/" + TORCH_WORK, "import_path": "{K}/../../..",
            "launcher": launcher, "call": call}


CAPTURE_CASES = [
    Case("capture_launcher_helper_raises", "launcher", "capture",
         "the launcher file imports a helper next to it that raises at import: the helper's "
         "line, not the launcher's `import` line",
         ("//pkg:scaled: attribute 'launcher': importing launcher_broken_helper failed",
          "KeyError: 'large' (broken_helper.py:3, which launcher_broken_helper.py imports)"),
         ("importing launcher_broken_helper failed",),
         flags={"launcher_path": "{K}/launcher_broken_helper.py"}),
    Case("capture_host_sync", "launcher", "capture",
         "the launcher sizes its grid by `int(x.sum().item())`",
         ("//pkg:scaled: bad_launchers.py:23", "reads tensor values on the host"),
         ("compute it from sizes, or pass it as an argument",),
         flags={"launcher": "host_sync"}),
    Case("capture_value_branch", "launcher", "capture",
         "the launcher picks BLOCK by `(x > 0).all()`",
         ("//pkg:scaled: bad_launchers.py:30", "a branch or grid on tensor contents"),
         ("compute it from sizes, or pass it as an argument",),
         flags={"launcher": "value_branch"}),
    Case("capture_device_query", "launcher", "capture",
         "the launcher asks `driver.active.utils.get_device_properties(0)` for the SM count",
         ("//pkg:scaled: bad_launchers.py:37", "asks the GPU (triton.runtime.driver.active.utils.get_device_properties)"),
         ("pass the value to the launcher as an argument", "NUM_SMS"),
         flags={"launcher": "device_query"}),
    Case("capture_synchronize", "launcher", "capture",
         "the launcher calls `torch.cuda.synchronize()` after its launch",
         ("//pkg:scaled: bad_launchers.py:59", "calls torch.cuda.synchronize(), which waits for "
          "the GPU"),
         ("remove the torch.cuda.synchronize() call from the launcher",),
         flags={"launcher": "synchronizes"}),
    Case("capture_global_tensor", "launcher", "capture",
         "a launch writes a module-level tensor, not an input or an allocation",
         ("//pkg:scaled: bad_launchers.py:46", "argument Y of scale_kernel", "neither got nor allocated"),
         ("pass it to the launcher as an argument",),
         flags={"launcher": "global_tensor"}),
    Case("capture_dynamic_constexpr", "launcher", "capture",
         "a constexpr (BLOCK) from a size declared dynamic",
         ("//pkg:scaled: bad_launchers.py:52", "constexpr BLOCK of scale_kernel depends on the dynamic size n;"),
         ("make those sizes static (leave them out of `sizes`)",),
         flags={"launcher": "dynamic_constexpr"}),
    Case("capture_unknown_launcher", "launcher", "capture",
         "`launcher` names no function of the file",
         ("//pkg:scaled: attribute 'launcher'", "defines no function 'missing'"),
         ("name the Python function that runs kernel[grid](...)",),
         flags={"launcher": "missing"}),
    Case("capture_bad_call", "launcher", "capture",
         "an example call that is not Python call arguments",
         ("//pkg:scaled: example call 'fp32(n'",), ("write call arguments such as",),
         flags={"call": "fp32(n"}),
    Case("capture_torch_random", "launcher", "capture",
         "the launcher adds `torch.randn_like(x)` noise before its kernel",
         (f"//pkg:scaled: {TORCH_WORK}:139",
          "torch.randn_like (aten.randn_like.default), which draws random numbers"),
         ("pass the random tensor to the launcher as an argument",),
         flags=_torch_work("random_noise")),
    Case("capture_torch_host_copy", "launcher", "capture",
         "the launcher returns its kernel's output copied to the host (`y.cpu()`)",
         (f"//pkg:scaled: {TORCH_WORK}:146", "a tensor on cpu, the host"),
         ("keep the work on the GPU",),
         flags=_torch_work("host_copy")),
    Case("capture_torch_boolean_mask", "launcher", "capture",
         "the launcher returns `y[y > 0]`, whose shape depends on tensor values",
         (f"//pkg:scaled: {TORCH_WORK}:152", "whose result's shape depends on tensor values"),
         ("keep shapes computed from sizes",),
         flags=_torch_work("data_dependent")),
    Case("capture_grid_size_is_a_parameter_name", "launcher", "capture",
         "the grid needs the size `n` (`cdiv(8 * n, 256)`), the name of the kernel's own "
         "parameter `n` (= 8 * n)",
         (f"//pkg:scaled: {TORCH_WORK}:27", "needs the size n, which is also the name of its "
          "parameter n (= 8 * n)"),
         ("name the size otherwise in `sizes` and the calls",),
         flags=_torch_work("clone_first", "fp32(n, 8)")),
    Case("capture_size_fixed", "launcher", "capture",
         "a dynamic size made static by `float(n) ** -0.5`",
         (f"//pkg:scaled: {TORCH_WORK}:71", "fixes the dynamic size n to its example value 4096"),
         ("compute with n as an int, or make it static (leave it out of `sizes`)",),
         flags=_torch_work("static_by_arithmetic")),
    Case("capture_sizes_unused", "launcher", "capture",
         "a name of `sizes` that no example call uses",
         ("//pkg:scaled: attribute 'sizes': 'rows' is used by no example call",),
         ("or remove it from `sizes`",),
         flags={"sizes": '{"n": 4096, "rows": 8}'}),
]

# The autotune_configs tool (triton_autotune_algos' action): every case gives its flags.
AUTOTUNE_BASE = {
    "target": "cuda:90",
    "out": "{OUT}/algos.bzl",
}

AUTOTUNE_CASES = [
    Case("autotune_triton_switched_off_by_a_dep", "kernel", "autotune",
         "a dep that binds module objects named `triton` for `triton` and `tl` at import (vLLM's "
         "placeholders), read by triton_autotune_algos",
         ("//kernels:algos: attribute 'deps': 'tuned_kernel' is not a @triton.jit function in "
          "autotuned_triton_off.py", "`triton` is not Triton but TritonPlaceholder from "
          "'triton_off_module'"),
         ("The cause is in that dep, not in the kernel file", ".dist-info"),
         flags={"kernel_path": "{K}/autotuned_triton_off.py", "kernels": "tuned_kernel",
                "bazel_target": "//kernels:algos"},
         extra=("--import_path={K}/dep_root",)),
]

# The torch-op generator (triton_torch_library's action): `flags["spec"]` is one op's
# triton_torch_op(...) (JSON) over a library `k` whose NAME_default takes (x_ptr, out_ptr, n).
TORCH_LIBRARY_PARAMS = (("x_ptr", "CUdeviceptr", "x_ptr", "*fp32"),
                        ("out_ptr", "CUdeviceptr", "out_ptr", "*fp32"),
                        ("n", "int32_t", "n", "i32"))

TORCH_CASES = [
    Case("torch_outputs_names_a_scalar", "rule attribute", "torch",
         "`triton_torch_op(outputs = {...})` naming the integer parameter `n`",
         ("//pkg:ops: op 'o': outputs: 'n' is a scalar parameter (int32_t) of k_default(), "
          "not a pointer",),
         ("remove 'n' from outputs", "bind = {\"n\": \"EXPRESSION\"}"),
         flags={"spec": '{"args": ["x"], "outputs": {"out_ptr": "x.shape", "n": "x.size(0)"}}'}),
]

# Refusals that only a build of several targets, or their import, shows: each is a Bazel test
# (`shown_by`, whose source names the case id) rather than one tool run.
BAZEL_TEST_CASES = [
    Case("c_name_clash_in_one_binary", "rule attribute", "bazel test",
         "two triton_kernel_library targets with the same c_name linked into one cc_binary",
         ("multiple definition of `rules_triton_c_name_clash_scale_is_the_c_name_of_two_"
          "triton_kernel_library_targets_in_this_link_give_one_another_c_name'",
          "//tests/link_clash/a:scale_a", "//tests/link_clash/b:scale_b"),
         ("give_one_another_c_name",),
         flags={"shown_by": "tests/link_clash/test_c_name_clash.py"}),
    Case("torch_namespace_clash_at_import", "rule attribute", "bazel test",
         "two triton_torch_library targets registering the same namespace::op, imported in one "
         "process",
         ("//tests/torch_ops:clashing_ops: attribute 'namespace': 'rules_triton_aligned' (ops "
          "rules_triton_aligned::add) is already registered in this process by "
          "//tests/torch_ops:aligned_ops",),
         ("give //tests/torch_ops:clashing_ops another namespace",),
         flags={"shown_by": "tests/torch_ops/test_namespace_clash.py"}),
]

# A good C entry (triton_launcher_c_library's action) of the captured size-table launcher
# (tests/capture:rms_scale): its op record and its library's description.
C_ENTRY_BASE = {
    "target": "//pkg:rms_scale_c",
    "op": "{K}/c_entry/rms_scale.op.json",
    "library": "rms_scale={K}/c_entry/rms_scale.library.json",
    "function": "rms_scale_c",
    "out_c": "{OUT}/rms_scale_c.c",
    "out_h": "{OUT}/rms_scale_c.h",
}

C_ENTRY_CASES = [
    Case("c_entry_torch_work", "launcher", "c_entry",
         "a C entry asked for a launcher whose record runs torch work between its launches (a "
         "step the C cannot run, such as a top-k)",
         ("//pkg:rms_scale_c: the launcher's record has a malformed op (the op: step 1: unknown keys 'k', 'torch'",
          "this launcher has no C entry"),
         ("call its torch op (launcher_op) instead",),
         flags={"op": "{K}/c_entry/torch_step.op.json"}),
    Case("c_entry_composite", "launcher", "c_entry",
         "a C entry asked for a launcher that sorts its input with torch before its kernel (its "
         "op is a composite of aten calls and the kernel's primitive op)",
         ("//pkg:rms_scale_c: torch_work_launchers.py:31: torch.sort (aten.sort.default): the "
          "launcher computes with torch besides its kernel launches, and a C entry runs no torch",),
         ("call its torch op (launcher_op), or move that torch work into a kernel",),
         flags={"op": "{K}/c_entry/composite.op.json"}),
    Case("c_entry_name_clash", "launcher", "c_entry",
         "the C entry is named like its kernel library's C API (`rms_scale()` exists)",
         ("//pkg:rms_scale_c: the C entry rms_scale() would clash with the C API of kernel "
          "library rms_scale",),
         ("give the C entry another name (attribute 'function')",),
         flags={"function": "rms_scale"}),
]


# ----------------------------------------------------------------------------- tuning command

# The tuning command (python3 -m triton_aot.tuning.tune PACK ...) on a pack of a matmul library
# ({K}/tune_inputs.py as its inputs; test_catalogue.py writes pack.json): the flags that tune a
# model's layers are refused before any GPU work.
TUNE_CASES = [
    Case("tune_layers_not_nk", "tune flag", "tune",
         "`--layers=4096`: a layer that is not N x K",
         ("--layers: '4096' is not NxK",), ("e.g. 4096x4096,1024x4096",),
         extra=("--layers=4096",)),
    Case("tune_layers_and_config", "tune flag", "tune",
         "both `--layers` and `--model_config`",
         ("give --layers or --model_config, not both",), ("not both",),
         extra=("--layers=64x64", "--model_config={K}/encoder.config.json")),
    Case("tune_config_not_a_decoder", "tune flag", "tune",
         "`--model_config` of a model without hidden_size / num_attention_heads",
         ("encoder.config.json: needs hidden_size and num_attention_heads",),
         ("or give the layers as --layers=NxK",),
         extra=("--model_config={K}/encoder.config.json",)),
    Case("tune_batch_reversed", "tune flag", "tune",
         "`--batch=8:1`: a batch range that ends before it starts",
         ("--batch='8:1'",), ("give LO:HI",),
         extra=("--layers=64x64", "--batch=8:1")),
    Case("tune_gpus_zero", "tune flag", "tune",
         "`--gpus=0`",
         ("--gpus='0'",), ("give a number of GPUs or 'all'",),
         extra=("--layers=64x64", "--gpus=0")),
    Case("tune_shapes_not_keys", "tune flag", "tune",
         "`--shapes=4096,x`: shapes that are not key values joined by x",
         ("--shapes='4096,x'",), ("e.g. 4096x4096x4096,1x4096x4096",),
         extra=("--shapes=4096,x",)),
    Case("tune_config_not_json", "tune flag", "tune",
         "`--model_config` of a file that is not JSON",
         ("tune_inputs.py: not JSON",), ("give the model's Hugging Face config.json",),
         extra=("--model_config={K}/tune_inputs.py",)),
]

# The same flags on the build machine: `tools/tune LABEL FLAGS` and `bazel run
# @rules_triton//tools:tune ... -- DIR FLAGS` (tools/tune_bundle.py, run here as the `bazel run`
# does) check them before anything is built or packed.
TUNE_BUNDLE_CASES = [
    Case("tune_bundle_config_missing", "tune flag", "tune bundle",
         "`--model_config` of a file that is not there",
         ("--model_config={TMP}/config.json: No such file or directory",),
         ("give the path of the model's Hugging Face config.json",),
         extra=("--model_config={TMP}/config.json",)),
    Case("tune_bundle_config_not_a_decoder", "tune flag", "tune bundle",
         "`--model_config` of a model without hidden_size / num_attention_heads",
         ("encoder.config.json: needs hidden_size and num_attention_heads",),
         ("or give the layers as --layers=NxK",),
         extra=("--model_config={K}/encoder.config.json",)),
    Case("tune_bundle_layers_not_nk", "tune flag", "tune bundle",
         "`--layers=4096,1024x`: layers that are not N x K",
         ("--layers: '4096' is not NxK",), ("e.g. 4096x4096,1024x4096",),
         extra=("--layers=4096,1024x",)),
    Case("tune_bundle_batch_count_not_integer", "tune flag", "tune bundle",
         "`--batch_count=many`",
         ("--batch_count='many'",), ("give an integer",),
         extra=("--layers=64x64", "--batch_count=many")),
]

# What the rule can tell wrong before it declares its actions (which kernel file, the targets'
# spelling, algos listed twice): refused in an action, one line, no Starlark traceback.
REFUSED_IN_ACTION = (
    "rule_kernel_src_ambiguous", "rule_targets_not_a_target", "rule_targets_mixed_backends",
    "rule_targets_duplicate_spelling", "rule_kernel_module_with_srcs",
    "rule_kernel_module_not_dotted_name", "rule_no_kernel_source", "rule_targets_sm_spelling",
    "rule_targets_duplicate", "rule_algos_duplicate", "rule_targets_rocm",
    "rule_targets_dotted_sm", "rule_kernel_module_as_path",
)

RULE_CASES += [
    Case("rule_targets_rocm", "rule attribute", "rule",
         "`targets = [\"rocm:90\"]`: a backend that does not exist",
         ("attribute 'targets': 'rocm:90' is not a target",), ('write "cuda:<sm>"', "hip:gfx"),
         attrs='targets = ["rocm:90"]'),
    Case("rule_targets_dotted_sm", "rule attribute", "rule",
         "`targets = [\"cuda:9.0\"]`: the compute capability's spelling",
         ("attribute 'targets': 'cuda:9.0' is not a target",), ('(e.g. "cuda:90")',),
         attrs='targets = ["cuda:9.0"]'),
    Case("rule_kernel_module_as_path", "rule attribute", "rule",
         "`kernel_module` given as a file path",
         ("attribute 'kernel_module': 'kernels/kernels.py' is not a dotted module name",),
         ("write it as in an import statement",),
         attrs='srcs = [], kernel_module = "kernels/kernels.py"'),
]
RULE_CASES = [dataclasses.replace(c, in_action=True) if c.id in REFUSED_IN_ACTION else c
              for c in RULE_CASES]

CASES = (COMPILE_CASES + LINK_CASES + RULE_CASES + RUNTIME_CASES + CAPTURE_CASES
         + AUTOTUNE_CASES + TORCH_CASES + BAZEL_TEST_CASES + C_ENTRY_CASES + TUNE_CASES
         + TUNE_BUNDLE_CASES)


def by_id() -> dict:
    return {c.id: c for c in CASES}


def check() -> None:
    """Self-consistency: unique ids, known layers/tools, something to check in every case."""
    seen = set()
    for c in CASES:
        assert c.id not in seen, f"duplicate case id {c.id}"
        seen.add(c.id)
        assert c.layer in LAYERS, (c.id, c.layer)
        assert c.tool in TOOLS, (c.id, c.tool)
        assert c.culprit and c.fix, c.id
        assert c.tool != "rule" or c.attrs, c.id
        assert c.at_build == (c.tool == "rule" and bool(c.flags)), c.id
        assert not c.at_build or c.flags["bazel_target"] == _rule_subject(c.id), c.id
        assert (c.tool == "runtime") == bool(c.call), c.id
        assert (c.tool == "bazel test") == ("shown_by" in c.flags), c.id
