"""The bad-input catalogue: every way a user can get rules_triton's inputs wrong, with the message
that must come back.

Each case is data: where the mistake is made (`layer`), which tool sees it (`tool`), the input,
and the fragments the message must contain: `culprit` (names the attribute / flag / entry / file /
token that is wrong) and `fix` (says what to do). The runners are

  test_catalogue.py      compile and link cases: `python -m triton_aot.compile|link` as
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

from dataclasses import dataclass, field
from typing import Optional

LAYERS = ("rule attribute", "compile flag", "link flag", "signature", "grid", "kernel",
          "link input")
TOOLS = ("compile", "link", "rule")


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
         "constexpr for a parameter the kernel does not have: `BLOK=3`",
         ("--constexprs: 'BLOK' is not a parameter of 'copy_kernel'",),
         ("its parameters are (x_ptr, out_ptr, n, BLOCK: tl.constexpr)",),
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
         ("--hints: 'n' is given twice with different hints",), ("with different hints",),
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
         "`--target=cuda:99` (no ptxas support)",
         ("--target: 'cuda:99'", "cannot compile for sm_99"), ("use one of cuda:70",),
         flags={"target": "cuda:99"}),
    Case("num_warps_not_pow2", "compile flag", "compile",
         "`--num_warps=3`",
         ("--num_warps: 3 is not a power of two",), ("use e.g. 4 or 8",),
         flags={"num_warps": "3"}),
    Case("num_warps_not_int", "compile flag", "compile",
         "`--num_warps=four`",
         ("flag --num_warps=four",), ("see `python -m triton_aot.compile --help`",),
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
         ("--grid: expected a number, an argument name, cdiv( or (", "token '*'"),
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
         "grid calling a function other than cdiv: `max(n, 1)`",
         ("--grid: function 'max' is not allowed",), ("the only function is cdiv(a, b)",),
         flags={"grid": "max(n, 1)"}),
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
          "(import_error.py:4)"), ("or pass --import_path",),
         flags={"kernel_path": "{K}/import_error.py", "kernel_name": "never_kernel",
                "signature": "*fp32", "constexprs": None, "grid": "1"}),
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
    Case("kernel_reserved_param", "kernel", "compile",
         "kernel parameter named like generated code: `trt_n`",
         ("kernel parameter 'trt_n' cannot be used as a C parameter name",),
         ("rename the parameter in the kernel",),
         flags={"kernel_name": "reserved_kernel", "signature": "*i32, i32", "constexprs": None,
                "grid": "1"}),
    Case("kernel_shadows_module", "kernel", "compile",
         "kernel file named like a Python module: `json.py`",
         ("--kernel_path: the kernel file 'json.py' shadows the Python module 'json'",),
         ("rename the kernel file",),
         copy_as="json.py"),
    Case("kernel_file_not_importable", "kernel", "compile",
         "kernel file name that is no module name: `my-kernels.py`",
         ("--kernel_path: 'my-kernels.py' is not an importable module name",),
         ("rename the file",),
         copy_as="my-kernels.py"),
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
}
LINK_BASE = {"name": "copy", "out_c": "{OUT}/copy.c", "out_h": "{OUT}/copy.h"}


def _v(symbol, **kw):
    spec = {"symbol": symbol, "kernel_name": "copy_kernel", "args": "copy", "algo_index": 0}
    spec.update(kw)
    return spec


_LINK_MESSAGE_FIX = (
    "triton_aot/link.py build_plan/_order_algos: end these messages with what to do: "
    "different argument lists -> \"; every variant of a library must come from the same "
    "--signature\"; duplicate variants -> \"; remove one, or give them different hints\"; "
    "duplicate symbol -> \"; give each variant its own --symbol\"; algo_index gap -> \"; number "
    "the algos 0..N-1 without gaps\"; shared algo_index -> \"; give each algo its own algo_index\"")
_LINK_MALFORMED_FIX = (
    "triton_aot/link.py load_variant: check the shape of the metadata (args: list of objects "
    "with a str 'name' and 'type' or constexpr=true; target: an object; num_warps/num_stages: "
    "ints) and raise LinkError(f\"{path}: malformed variant metadata: <what>; regenerate it with "
    "triton_aot.compile\"); and in main() catch any other Exception like triton_aot.compile "
    "does (\"error: internal error in triton_aot.link: ... (rerun with --verbose ...)\")")
_LINK_WRITE_FIX = (
    "triton_aot/link.py link(): wrap the output writes in try/except OSError and raise "
    "LinkError(f\"--out_c/--out_h: cannot write {path}: {e.strerror}\")")

LINK_CASES = [
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
         ("v0.json is not a rules_triton.variant.v2 variant metadata file",),
         ("pass the --out_json files of triton_aot.compile",),
         variants=({"text": "{\"format\": \"something else\"}"},)),
    Case("link_malformed_args", "link input", "link",
         "variant metadata whose argument lacks its name",
         ("v0.json", "malformed variant metadata"), ("regenerate it with triton_aot.compile",),
         variants=(_v("copy_sm90", arg_set={0: {"name": None}}),),
         needs_fix=_LINK_MALFORMED_FIX),
    Case("link_malformed_target", "link input", "link",
         "variant metadata whose target is a string",
         ("v0.json", "malformed variant metadata"), ("regenerate it with triton_aot.compile",),
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
    Case("link_out_unwritable", "link flag", "link",
         "--out_c in a folder that does not exist",
         ("--out_c", "{OUT}/no/such/dir/copy.c"), ("cannot write",),
         variants=(_v("copy_sm90"),), flags={"out_c": "{OUT}/no/such/dir/copy.c"},
         needs_fix=_LINK_WRITE_FIX),
]


# ----------------------------------------------------------------------------- rule attributes

_RULE_TARGETS_FIX = (
    "rules/private/validate.bzl check_targets: reject an 'a' suffix like the compile tool does: "
    "_err(label, attr, \"'{}': Triton compiles arch 90 and newer as the arch-specific 'a' variant "
    "by itself; write \\\"cuda:{}\\\"\".format(target, digits)) (the 'a' handling in "
    "kernel_library.bzl's highest-target loop then is dead code)")
_RULE_SPEC_FIX = (
    "rules/private/validate.bzl check_specializations: after the token loop, remember each "
    "token's name; when a name comes twice with different hints: _err(label, "
    "\"specializations\", \"entry {} ('{}'): '{}' has two hints (:{} and :{}); give each "
    "parameter one hint\".format(i, spec, name, a, b))")
_RULE_CONSTEXPR_FIX = (
    "rules/private/validate.bzl _constexpr_repr: accept a string only when it is a dtype "
    "(\"tl.\" + identifier) or a quoted literal of letters, digits, spaces and _.+- (what "
    "triton_aot.signature accepts); else _err(label, \"algos\", \"algos[{}]: constexpr '{}' = "
    "'{}' is not a value; use an int, bool, float, a dtype such as \\\"tl.float16\\\" or a "
    "quoted string such as \\\"'relu'\\\"\".format(index, name, value)). Today the string is "
    "pasted into --constexprs=NAME=VALUE and into the grid, so a ',' or code in it only fails "
    "later, in the compile action, with a message about other flags")

RULE_CASES = [
    Case("rule_signature_empty", "rule attribute", "rule",
         "`signature = \"\"`",
         ("attribute 'signature': is empty",), ("give one entry per kernel parameter",),
         attrs='signature = ""'),
    Case("rule_signature_empty_entry", "rule attribute", "rule",
         "`signature = \"*fp32, , i32, BLOCK\"`",
         ("attribute 'signature': entry 1 is empty",), ("two commas in a row?",),
         attrs='signature = "*fp32, , i32, BLOCK"'),
    Case("rule_signature_constexpr_twice", "rule attribute", "rule",
         "the same constexpr name twice in the signature",
         ("attribute 'signature': constexpr 'BLOCK' appears twice",), ("appears twice",),
         attrs='signature = "*fp32, *fp32, BLOCK, BLOCK"'),
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
         ("attribute 'targets': 'hip:mi300' is not a target",), ('write "hip:gfx<arch>"',),
         attrs='targets = ["hip:mi300"]'),
    Case("rule_targets_arch_suffix", "rule attribute", "rule",
         "`targets = [\"cuda:90a\"]` (accepted by analysis, refused by the compile tool)",
         ("attribute 'targets': 'cuda:90a'",), ('write "cuda:90"',),
         attrs='targets = ["cuda:90a"]', needs_fix=_RULE_TARGETS_FIX),
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
         "conflicting specialization: `\"x_ptr:16 n:16 n:1\"`",
         ("attribute 'specializations': entry 0", "'n' has two hints"),
         ("give each parameter one hint",),
         attrs='specializations = ["x_ptr:16 n:16 n:1"]', needs_fix=_RULE_SPEC_FIX),
    Case("rule_specializations_syntax", "rule attribute", "rule",
         "hint written as `x_ptr=16`",
         ("attribute 'specializations': entry 0 ('x_ptr=16'): 'x_ptr=16' is not a hint",),
         ("write NAME:16", "or NAME:1"),
         attrs='specializations = ["x_ptr=16"]'),
    Case("rule_algos_missing", "rule attribute", "rule",
         "no algos although the signature names a constexpr",
         ("attribute 'algos': is empty but the signature has constexpr names (BLOCK)",),
         ("add triton_algo(constexprs = {...})",),
         attrs="algos = []"),
    Case("rule_algo_constexpr_type", "rule attribute", "rule",
         "constexpr value of the wrong type: a list",
         ("attribute 'algos': algos[0]: constexpr 'BLOCK' has value [64]",),
         ("use an int, bool, float or dtype string",),
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
         ("tl.float16",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": "64,n=3"})]',
         needs_fix=_RULE_CONSTEXPR_FIX),
    Case("rule_grid_injection_via_constexpr", "rule attribute", "rule",
         "code injected into the grid through a constexpr string placeholder",
         ("attribute 'algos': algos[0]: constexpr 'BLOCK'", "is not a value"),
         ("tl.float16",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": "64); system(\\"rm -rf /\\"); (1"})]',
         needs_fix=_RULE_CONSTEXPR_FIX),
]

# Moved here from tests/rules/analysis_tests.bzl (one place for rule-failure tests); each keeps
# the fragment that test asserted as its culprit.
RULE_CASES += [
    Case("rule_targets_sm_spelling", "rule attribute", "rule",
         "`targets = [\"sm_90\"]`",
         ("attribute 'targets': 'sm_90' is not a target",), ('write "cuda:<sm>"',),
         attrs='targets = ["sm_90"]'),
    Case("rule_targets_too_old", "rule attribute", "rule",
         "`targets = [\"cuda:70\"]` (older than Triton 3.6 supports)",
         ("attribute 'targets': 'cuda:70': Triton 3.6 supports sm_75 and newer",),
         ("sm_75 and newer",),
         attrs='targets = ["cuda:70"]'),
    Case("rule_targets_duplicate", "rule attribute", "rule",
         "`targets = [\"cuda:90\", \"cuda:90\"]`",
         ("attribute 'targets': 'cuda:90' is listed twice",), ("listed twice",),
         attrs='targets = ["cuda:90", "cuda:90"]'),
    Case("rule_specializations_bad_hint", "rule attribute", "rule",
         "hint `:8` (only :16 and :1 exist)",
         ("attribute 'specializations': entry 0 ('x_ptr:8'): 'x_ptr:8' is not a hint",),
         ("write NAME:16", "or NAME:1"),
         attrs='specializations = ["x_ptr:8"]'),
    Case("rule_specializations_same_hints", "rule attribute", "rule",
         "the same hints twice, in another order and separator",
         ("attribute 'specializations': entries 0 and 1 give the same hints",), ("remove one",),
         attrs='specializations = ["x_ptr:16 n:16", "n:16, x_ptr:16"]'),
    Case("rule_algo_missing_constexpr", "rule attribute", "rule",
         "an algo that does not set the signature's constexpr",
         ("attribute 'algos': algos[0] does not set constexpr 'BLOCK'",),
         ("add it to constexprs",),
         attrs='algos = [triton_algo(num_warps = 4)]'),
    Case("rule_algo_extra_constexpr", "rule attribute", "rule",
         "an algo setting a constexpr the signature does not name",
         ("attribute 'algos': algos[0] sets 'BLOCKK', which is not a constexpr name",),
         ("write 'BLOCKK' in the signature",),
         attrs='algos = [triton_algo(constexprs = {"BLOCK": 1, "BLOCKK": 2})]'),
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
         ("attribute 'algos': algos[0]: num_warps must be a power of two, got 3",),
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
    # Analysis-time type names come from triton_aot/signature.py (rules/private/triton_types.bzl):
    # `f32` is no Triton type there, so it is a constexpr name, and the message says both.
    Case("rule_signature_unknown_type_f32", "rule attribute", "rule",
         "`f32` for fp32 in the signature (no Triton type is spelt f32)",
         ("attribute 'algos': algos[0] does not set constexpr 'f32'",),
         ("'f32' is not a Triton type", "fp32"),
         attrs='signature = "*fp32, *fp32, f32, BLOCK"'),
]

CASES = COMPILE_CASES + LINK_CASES + RULE_CASES


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
