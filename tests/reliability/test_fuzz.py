"""Property tests (hypothesis) for the compile tool's parsers: --signature, --hints, --constexprs,
the binder, and --grid.

Properties:
  * random text, token soups and mutations of valid inputs never raise anything but UserError
    (the tool's one reportable exception);
  * every accepted signature + grid renders a variant C file (through the tool's own
    build_record and c_variant) that compiles warning-free as strict C11 and as GNU C11 (what
    triton_kernel_library uses); the accepted ones are compiled in batches, one TU per few
    hundred variants, to keep this fast;
  * an accepted grid's canonical source parses back to the same C;
  * the C of an accepted grid computes what the grid means (C integer semantics, -1 on a zero
    divisor), checked by running the batch with small argument values under UBSan.

CI size: 300 examples per property (`RULES_TRITON_FUZZ_EXAMPLES` overrides it, e.g. 20000 for
the long run; then examples are random instead of derandomised). The hypothesis database is
off, so nothing is written outside the test's temporary folder. A summary (examples run, accepted,
C variants compiled, time) is printed (pytest -s) and written to $RULES_TRITON_FUZZ_REPORT.
"""

from __future__ import annotations

import json
import os
import random
import importlib.util
import shutil
import subprocess
import time
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from triton_aot.compile import compile as tool
from triton_aot.contract.variant import Target
from triton_aot.core import abi
from triton_aot.core import binding as B
from triton_aot.core import grid as G
from triton_aot.core import signature as S
from triton_aot.core.errors import UserError
from triton_aot.emit_c import c_variant

RUNTIME_DIR = Path(__file__).resolve().parent.parent.parent / "runtime"  # trt_runtime.h

EXAMPLES = int(os.environ.get("RULES_TRITON_FUZZ_EXAMPLES", "300"))
LONG = "RULES_TRITON_FUZZ_EXAMPLES" in os.environ
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not LONG,
                suppress_health_check=list(HealthCheck), print_blob=True)
BATCH = 250  # variants per translation unit

# The strict flags of tests/link/harness.py (generated C must stay warning-free under them) and
# the flags triton_kernel_library compiles with.
STRICT_C11 = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow",
              "-Wstrict-prototypes", "-Wmissing-prototypes"]
RULE_GNU11 = ["-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"]


def cc() -> str:
    """$RULES_TRITON_CC (Bazel passes the toolchain's), else cc on PATH."""
    found = os.environ.get("RULES_TRITON_CC") or shutil.which("cc") or shutil.which("gcc")
    if not found:
        pytest.skip("no C compiler: set RULES_TRITON_CC")
    return found


def cuda_include() -> str:
    """Folder of cuda.h: $RULES_TRITON_CUDA_INCLUDE (a header or folder), else triton's."""
    given = os.environ.get("RULES_TRITON_CUDA_INCLUDE")
    if given:
        return str(Path(given).parent) if given.endswith(".h") else given
    spec = importlib.util.find_spec("triton")
    return str(Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "include")

STATS: dict = {}


def _count(name: str, key: str, n: int = 1) -> None:
    STATS.setdefault(name, {}).setdefault(key, 0)
    STATS[name][key] += n


# ----------------------------------------------------------------------------- alphabets

# Characters that have tripped parsers elsewhere: non-ASCII digits (str.isdigit() is true for
# them), Unicode spaces, NUL, newlines, quotes, C punctuation.
TRICKY = "\u00b2\u0663\uff10\u00a0\u2003\x1c\x00\n\t\r'\"\\{}#;/*()[]<>=:,.-+_ $@`~!?%&|^"
ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
TYPE_WORDS = (list(S.SCALAR_TYPES) + list(S.TYPE_ALIASES) + list(S.FP8_TYPES)
              + ["int33", "fp23", "k", "kfp16", "constexpr", "void", "i", "u", "fp"])
VALUES = ["0", "1", "-1", "+7", "64", "128", "1e3", "0.5", ".5", "1.", "-2.5e-3", "True",
          "False", "None", "tl.float16", "tl.int32", "tl.float17", "tl.", "'relu'", '"x y"',
          "'a,b'", "'", "9" * 25, "-" + "9" * 19, "1e999", "nan", "inf"]
# Names a kernel parameter could have: ordinary ones, ones the generated C renames or must
# reject, C keywords, and names that are macros in the headers the generated C includes or in
# GNU C mode (unix, linux).
ORDINARY = ["x", "y", "z", "n", "m", "M", "N", "K", "BLOCK", "BLOCK_M", "stride_am", "alpha",
            "beta", "out_ptr", "in_ptr", "a_ptr", "b_ptr", "c_ptr", "eps", "n_rows", "n_cols"]
NAMES = ["x", "y", "n", "M", "N", "K", "BLOCK", "stride", "alpha", "_p", "a1", "out_ptr",
         "stream", "algo_id", "trt_x", "CU_x", "CUDA_y", "__z", "_Zed", "int", "bool", "float",
         "NULL", "int32_t", "size_t", "CUstream", "cdiv", "errno", "unix", "linux", "EOF",
         "stdin", "main", "dlopen", "memcpy", "calloc", "pthread_once", "i32", "fp16",
         "True", "None", "CUDAAPI"]


@st.composite
def mutated(draw, base):
    """`base` text with a few random edits (insert, delete, duplicate, replace)."""
    text = draw(base)
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "dup", "replace"]))
        char = draw(st.one_of(st.sampled_from(TRICKY), st.sampled_from(ASCII), st.characters()))
        if op == "insert":
            text = text[:pos] + char + text[pos:]
        elif op == "delete" and text:
            end = draw(st.integers(pos, min(len(text), pos + 4)))
            text = text[:pos] + text[end:]
        elif op == "dup":
            end = draw(st.integers(pos, min(len(text), pos + 8)))
            text = text[:end] + text[pos:end] + text[end:]
        elif text:
            p = min(pos, len(text) - 1)
            text = text[:p] + char + text[p + 1:]
    return text


def junk(max_size=40):
    return st.text(alphabet=st.one_of(st.sampled_from(TRICKY + ASCII), st.characters()),
                   max_size=max_size)


hint_text = st.one_of(st.sampled_from(["16", "1", "8", "0", "016", "32", "", " 16"]),
                      st.text(alphabet="0123456789\u00b2\u0663\uff10", min_size=1, max_size=3))


@st.composite
def type_entry(draw):
    text = draw(st.sampled_from(["", "*", "* ", "*k"])) + draw(st.sampled_from(TYPE_WORDS))
    if draw(st.booleans()):
        text += ":" + draw(hint_text)
    return text


sig_entry = st.one_of(type_entry(), st.sampled_from(VALUES), st.sampled_from(NAMES), junk(8))
sig_valid = st.lists(sig_entry, min_size=1, max_size=8).map(", ".join)
signature_text = st.one_of(sig_valid, mutated(sig_valid), junk(60))

hints_valid = st.lists(st.tuples(st.sampled_from(NAMES), hint_text),
                       max_size=5).map(lambda items: " ".join(f"{n}:{h}" for n, h in items))
hints_text = st.one_of(hints_valid, mutated(hints_valid), junk())
constexprs_valid = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(VALUES)),
                            max_size=5).map(lambda items: ",".join(f"{n}={v}" for n, v in items))
constexprs_text = st.one_of(constexprs_valid, mutated(constexprs_valid), junk())


def _only_user_errors(fn, *args):
    """fn(*args), or None when it raised UserError; anything else fails the property."""
    try:
        return fn(*args)
    except UserError as e:
        assert isinstance(e.message, str) and e.message.strip(), "empty UserError message"
        return None


# ----------------------------------------------------------------------------- C batches


class Batch:
    """Variant C files collected during a property, compiled together at the end."""

    def __init__(self, name: str):
        self.name = name
        self.sources: list[str] = []
        self.evals: list[str] = []  # C statements that print grid values
        self.expected: list[str] = []  # the lines they must print
        self.eval_functions: list[str] = []

    def add_variant(self, c_text: str) -> None:
        self.sources.append(c_text)

    def compile_all(self, tmp: Path) -> None:
        compiler, inc = cc(), cuda_include()
        n = 0
        for chunk_start in range(0, len(self.sources), BATCH):
            chunk = self.sources[chunk_start:chunk_start + BATCH]
            src = tmp / f"{self.name}_{chunk_start}.c"
            src.write_text("\n".join(chunk))
            for std_flags in (STRICT_C11, RULE_GNU11):
                p = subprocess.run([compiler, *std_flags, "-O0", f"-I{inc}", f"-I{RUNTIME_DIR}",
                                    "-c", str(src), "-o",
                                    os.devnull], capture_output=True, text=True)
                assert p.returncode == 0, (f"generated C does not compile ({' '.join(std_flags)})"
                                           f": {src}\n{p.stderr[-6000:]}")
            n += len(chunk)
        _count(self.name, "variants compiled (C11 and GNU C11)", n)

    def run_evals(self, tmp: Path) -> None:
        if not self.evals:
            return
        src = tmp / f"{self.name}_eval.c"
        # the runtime (grid_c may call its helpers); no <stdio.h>: its macros (EOF, ...) would
        # clash with parameter names
        src.write_text('#include "trt_runtime.h"\n'
                       + "\nint printf(const char *, ...);\n"
                       + "static void print3(const int64_t *o) {\n"
                       + "  printf(\"%lld %lld %lld\\n\", (long long)o[0], (long long)o[1], "
                       + "(long long)o[2]);\n}\n"
                       + "\n".join(self.eval_functions)
                       + "\nint main(void) {\n  int64_t o[3];\n" + "\n".join(self.evals)
                       + "\n  return 0;\n}\n")
        exe = tmp / f"{self.name}_eval"
        p = subprocess.run([cc(), "-std=c11", "-O1", "-fsanitize=undefined",
                            "-fno-sanitize-recover=all", "-Wall", "-Werror",
                            f"-I{cuda_include()}", f"-I{RUNTIME_DIR}", str(src), "-o", str(exe),
                            "-ldl",
                            "-lpthread"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-4000:]
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-4000:]
        got = run.stdout.splitlines()
        assert len(got) == len(self.expected)
        for i, (g, e) in enumerate(zip(got, self.expected)):
            ok = all(w == v or (w == "NEG" and int(v) < 0) for w, v in zip(e.split(), g.split()))
            assert ok, (f"grid evaluation {i}: C gives {g}, expected {e} (NEG: any negative "
                        f"value, as the grid divides by zero or leaves int64)\n"
                        f"{self.eval_functions[int(self.evals[i].split('(')[0].strip()[3:])]}"
                        f"\n{self.evals[i]}")
        _count(self.name, "grid evaluations compared with C", len(got))


FAKE_CUBIN = b"\x7fELF fake cubin for the fuzz tests\x00"


def render(sig: B.BoundSignature, grid: G.Grid, symbol: str, launch_args=()) -> str | None:
    """The variant C the compile tool would write for this signature and grid (None when the
    tool would reject it in codegen, which it reports as a UserError)."""
    args = types.SimpleNamespace(symbol=symbol, algo_index=0, specialization_index=None,
                                 num_stages=3, launch_cooperative_grid=False, launch_pdl=False,
                                 enable_fp_fusion=True, embed_ptx=False, export_symbols=False, outputs={})
    compiled = types.SimpleNamespace(entry_name="fuzz_kernel", cubin=FAKE_CUBIN, num_warps=4,
                                     num_ctas=1, shared=0, global_scratch_size=0,
                                     global_scratch_align=1, profile_scratch_size=0,
                                     profile_scratch_align=1, triton_version="3.6.0",
                                     tma=())
    target = Target("cuda", 90, 32)
    record = tool.build_record(args, "fuzz.py", target, sig, grid, compiled, launch_args)
    try:
        c_text, _ = c_variant.render(record, FAKE_CUBIN, None)
    except UserError:
        return None
    return c_text


# ----------------------------------------------------------------------------- parsers alone


@FUZZ
@given(signature_text)
@example("i32:\u00b2")
@example("*fp16:16, i32:\u00b2, 64")
def test_parse_signature_only_raises_user_errors(text):
    result = _only_user_errors(S.parse_signature, text)
    _count("parse_signature", "examples")
    if result is not None:
        _count("parse_signature", "accepted")
        assert all(isinstance(e, (S.TypedEntry, S.ValueEntry, S.NameEntry)) for e in result)


@FUZZ
@given(hints_text)
@example("n:\u00b2")
def test_parse_hints_only_raises_user_errors(text):
    result = _only_user_errors(S.parse_hints, text)
    _count("parse_hints", "examples")
    if result is not None:
        _count("parse_hints", "accepted")
        assert all(v in S.VALID_HINTS for v in result.values())


@FUZZ
@given(constexprs_text)
def test_parse_constexprs_only_raises_user_errors(text):
    result = _only_user_errors(S.parse_constexprs, text)
    _count("parse_constexprs", "examples")
    if result is not None:
        _count("parse_constexprs", "accepted")


@pytest.mark.parametrize("where", ["signature", "constexprs", "grid"])
def test_huge_integer_literals_are_user_errors(where):
    """Python refuses int() of more than 4300 digits (ValueError): the parsers must not."""
    digits = "9" * 5000
    sig = B.BoundSignature((B.BoundArg(0, "n", "i32"),))
    parse = {"signature": lambda: S.parse_signature(digits),
             "constexprs": lambda: S.parse_constexprs("BLOCK=" + digits),
             "grid": lambda: G.parse_grid(digits, sig)}[where]
    try:
        parse()
    except UserError as e:
        assert "does not fit" in e.message
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"a {len(digits)}-digit literal in --{where} raised {type(e).__name__}: "
                    f"{str(e)[:120]}")
    else:
        pytest.fail(f"a {len(digits)}-digit literal in --{where} was accepted")


def test_grid_c_is_linear_in_the_grid():
    """Nested cdiv in denominators: the C must not copy an operand into each of its uses (a
    118-character grid gave 52 MB of C, and the parser allows nesting 32 deep)."""
    sig = B.BoundSignature((B.BoundArg(0, "n", "i32"),))
    text = "n"
    for _ in range(12):
        text = f"cdiv(n, {text})"
    size = sum(map(len, G.parse_grid(text, sig).c))
    assert size <= 200 + 60 * len(text), f"{len(text)} characters of grid gave {size} of C"


# ----------------------------------------------------------------------------- signature -> C


@st.composite
def consistent_kernel(draw):
    """Parameters and a signature/--hints/--constexprs written for them (then maybe mutated)."""
    names = draw(st.lists(st.one_of(st.sampled_from(ORDINARY), st.sampled_from(ORDINARY),
                                    st.sampled_from(ORDINARY), st.sampled_from(NAMES)),
                          min_size=1, max_size=7, unique=True))
    entries, params, hints, constexprs = [], [], [], []
    for name in names:
        kind = draw(st.sampled_from(["ptr", "int", "int", "float", "bool", "value", "name"]))
        if kind == "ptr":
            elem = draw(st.sampled_from(list(S.SCALAR_TYPES) + list(S.FP8_TYPES) + ["kfp16"]))
            entries.append("*" + elem + draw(st.sampled_from(["", "", ":16"])))
            params.append(B.ParamInfo(name, False))
            if draw(st.integers(0, 3)) == 0:
                hints.append(f"{name}:16")
        elif kind == "int":
            ty = draw(st.sampled_from(sorted(S.INT_TYPES) + ["int", "int64", "uint8"]))
            entries.append(ty + draw(st.sampled_from(["", "", ":16", ":1"])))
            params.append(B.ParamInfo(name, False, draw(st.sampled_from(["", "", "i32"]))))
            if draw(st.integers(0, 3)) == 0:
                hints.append(f"{name}:{draw(st.sampled_from(['16', '1']))}")
        elif kind in ("float", "bool"):
            entries.append(draw(st.sampled_from(["fp16", "bf16", "fp32", "fp64"] if kind ==
                                                "float" else ["i1", "u1", "bool"])))
            params.append(B.ParamInfo(name, False))
        elif kind == "value":
            entries.append(draw(st.sampled_from(VALUES[:16])))
            params.append(B.ParamInfo(name, True))
        else:
            entries.append(name)
            params.append(B.ParamInfo(name, True))
            constexprs.append(f"{name}={draw(st.sampled_from(VALUES[:16]))}")
    sig_text = ", ".join(entries)
    hints_text_ = " ".join(hints)
    constexprs_text_ = ",".join(constexprs)
    which = draw(st.integers(0, 11))
    if which == 0:
        sig_text = draw(mutated(st.just(sig_text)))
    elif which == 1:
        hints_text_ = draw(mutated(st.just(hints_text_)))
    elif which == 2:
        constexprs_text_ = draw(mutated(st.just(constexprs_text_)))
    return sig_text, tuple(params), hints_text_, constexprs_text_


@st.composite
def loose_kernel(draw):
    """Signature entries and parameters drawn independently: mostly mismatches."""
    entries = draw(st.lists(sig_entry, min_size=1, max_size=7))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=len(entries), max_size=len(entries),
                          unique=True))
    params = tuple(B.ParamInfo(n, draw(st.booleans())) for n in names)
    hints = draw(st.one_of(st.just(""), hints_valid))
    constexprs = ",".join(f"{p.name}={draw(st.sampled_from(VALUES))}" for p in params
                          if p.is_constexpr and draw(st.booleans()))
    return ", ".join(entries), params, hints, constexprs


kernel_and_flags = st.one_of(consistent_kernel(), consistent_kernel(), consistent_kernel(),
                             loose_kernel())


def _grid_for(sig: B.BoundSignature, rnd: random.Random) -> str:
    ints = [a.name for a in sig.args if not a.is_constexpr and a.type in S.INT_TYPES]
    if not ints:
        return "1"
    n = rnd.choice(ints)
    return rnd.choice([f"cdiv({n}, 128)", f"{n}", f"{n} * 2 + 1, {rnd.choice(ints)}, 1",
                       f"({n} + 63) / 64"])


SIG_BATCH = Batch("signature")


@FUZZ
@given(kernel_and_flags, st.randoms(use_true_random=False))
def test_bind_and_render(case, rnd):
    """parse + bind + grid + codegen: only UserErrors; accepted ones collected for the C check."""
    sig_text, params, hints_text_, constexprs_text_ = case
    _count("signature+bind", "examples")

    def pipeline():
        entries = S.parse_signature(sig_text)
        hints = S.parse_hints(hints_text_)
        constexprs = S.parse_constexprs(constexprs_text_)
        sig = B.bind(entries, params, hints, constexprs, "fuzz_kernel")
        return sig, G.parse_grid(_grid_for(sig, rnd), sig)

    result = _only_user_errors(pipeline)
    if result is None:
        return
    sig, grid = result
    _count("signature+bind", "accepted")
    c_text = render(sig, grid, f"fuzz_sig_{len(SIG_BATCH.sources)}")
    if c_text is None:
        _count("signature+bind", "accepted by bind, then refused by codegen")
        return
    SIG_BATCH.add_variant(c_text)


def test_signature_variants_compile(tmp_path):
    """Runs after test_bind_and_render (pytest keeps file order): compiles what it accepted."""
    if not SIG_BATCH.sources:
        pytest.skip("run together with test_bind_and_render")
    SIG_BATCH.compile_all(tmp_path)


# ----------------------------------------------------------------------------- grid -> C

ARG_TYPES = sorted(S.INT_TYPES) + ["*fp16", "*i32", "fp32", "fp16", "bf16", "fp64", "i1", "u1"]
GRID_NAMES = [n for n in NAMES if n not in ("int", "bool", "float", "NULL", "int32_t", "size_t",
                                              "CUstream", "True", "None")]


@st.composite
def bound_signature(draw):
    names = draw(st.lists(st.sampled_from(GRID_NAMES), min_size=1, max_size=6, unique=True))
    args = []
    for i, name in enumerate(names):
        try:
            abi.check_c_parameter_name(name)
        except UserError:
            continue  # bind refuses these names (tested above)
        kind = draw(st.integers(0, 9))
        if kind == 0:
            value = draw(st.sampled_from([S.ConstValue("int", 64, "64"),
                                          S.ConstValue("float", 0.5, "0.5"),
                                          S.ConstValue("str", "relu", "'relu'")]))
            args.append(B.BoundArg(i, name, "constexpr", value=value))
            continue
        ty = draw(st.one_of(st.sampled_from(sorted(S.INT_TYPES)), st.sampled_from(ARG_TYPES)))
        hint = draw(st.sampled_from([None, None, 16, 1])) if ty in S.INT_TYPES else None
        args.append(B.BoundArg(i, name, ty, hint=hint))
    if not args:
        args.append(B.BoundArg(0, "n", "i32"))
    return B.BoundSignature(tuple(B.BoundArg(i, a.name, a.type, a.hint, a.value)
                                  for i, a in enumerate(args)))


def _expr(names, int_names):
    good = st.sampled_from(int_names) if int_names else st.sampled_from(["1", "2"])
    leaf = st.one_of(good, good, good, st.integers(0, 5000).map(str),
                     st.integers(0, 5000).map(str), st.integers(0, 2**70).map(str),
                     st.sampled_from(names + ["m", "cdiv", "BLOCK", "x_ptr", "0", "00", "007",
                                              "NUM_SMS", "min", "max", "num_sms"]))
    space = st.sampled_from(["", " ", "  ", "\t", "\n", "\u00a0"])

    def grow(inner):
        return st.one_of(
            st.tuples(inner, space, st.sampled_from(list("+-*/%")), space, inner).map("".join),
            st.tuples(st.sampled_from(["-", "+", "- -"]), inner).map("".join),
            inner.map(lambda e: f"({e})"),
            st.tuples(inner, inner).map(lambda ab: f"cdiv({ab[0]}, {ab[1]})"),
            st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
                lambda fab: f"{fab[0]}({fab[1]}, {fab[2]})"),
        )
    return st.recursive(leaf, grow, max_leaves=10)


LAUNCH_ARG_NAMES = ["n_rows", "tiles", "n", "x_ptr", "NUM_SMS", "stream", "int", "BLOCK"]


@st.composite
def grid_case(draw):
    sig = draw(bound_signature())
    # launch-only arguments: usually good names, sometimes ones that clash (refused)
    good = st.sampled_from(["n_rows", "tiles", "m_blocks"])
    la_text = ", ".join(f"{n}: {t}" for n, t in draw(st.lists(st.tuples(
        st.one_of(good, good, good, st.sampled_from(LAUNCH_ARG_NAMES)),
        st.one_of(st.sampled_from(sorted(S.INT_TYPES)), st.sampled_from(["fp32", "*i32"]))),
        max_size=2, unique_by=lambda t: t[0])))
    la_text = draw(st.one_of(st.just(la_text), st.just(la_text), mutated(st.just(la_text))))
    launch_args = _only_user_errors(G.parse_launch_args, la_text, sig) or ()
    names = [a.name for a in sig.args]
    int_names = ([a.name for a in sig.args if not a.is_constexpr and a.type in S.INT_TYPES]
                 + [a.name for a in launch_args] + ["NUM_SMS"])
    dims = draw(st.lists(_expr(names, int_names), min_size=1, max_size=4))
    text = ", ".join(dims)
    text = draw(st.one_of(st.just(text), st.just(text), st.just(text), mutated(st.just(text)),
                          junk(40)))
    return sig, text, launch_args


GRID_BATCH = Batch("grid")


def _c_int(ty: str) -> tuple:
    bits = int(ty[1:])
    return (0, 2**bits - 1) if ty[0] == "u" else (-2**(bits - 1), 2**(bits - 1) - 1)


class _Invalid(Exception):
    """The grid divides by zero or leaves int64 somewhere: the launcher must reject it."""


_INT64 = (-2**63, 2**63 - 1)


def _eval(node, env) -> int:
    """What a grid expression means: exact integer arithmetic with C's truncating / and %.
    Raises _Invalid on a zero divisor or a value outside int64 anywhere in the expression."""
    if isinstance(node, G.Num):
        v = node.value
    elif isinstance(node, G.Arg):
        v = 1 if node.one else env[node.name]
    elif isinstance(node, G.DevAttr):
        v = env[node.name]
    elif isinstance(node, G.MinMax):
        a, b = _eval(node.left, env), _eval(node.right, env)
        v = min(a, b) if node.fn == "min" else max(a, b)
    elif isinstance(node, G.Neg):
        v = -_eval(node.operand, env)
    elif isinstance(node, G.CDiv):
        a, b = _eval(node.num, env), _eval(node.den, env)
        if b == 0:
            raise _Invalid
        v = _ctrunc(_check(_check(a + b) - 1), b)
    else:
        a, b = _eval(node.left, env), _eval(node.right, env)
        if node.op in "/%" and b == 0:
            raise _Invalid
        v = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
             "/": lambda: _ctrunc(a, b), "%": lambda: a - b * _ctrunc(a, b)}[node.op]()
    return _check(v)


def _check(v: int) -> int:
    if not _INT64[0] <= v <= _INT64[1]:
        raise _Invalid
    return v


def _ctrunc(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@FUZZ
@given(grid_case(), st.randoms(use_true_random=False))
def test_parse_grid(case, rnd):
    sig, text, launch_args = case
    _count("grid", "examples")
    grid = _only_user_errors(G.parse_grid, text, sig, launch_args)
    if grid is None:
        return
    _count("grid", "accepted")
    # the C stays linear in the size of the grid (no operand copied into every use)
    assert sum(map(len, grid.c)) <= 200 + 60 * len(text), (text, sum(map(len, grid.c)))
    # the canonical source means the same
    again = G.parse_grid(", ".join(grid.source), sig, launch_args)
    assert again.c == grid.c, (text, grid.source)
    if grid.device_attrs:
        _count("grid", "accepted reading NUM_SMS")
    if launch_args:
        _count("grid", "accepted with launch arguments")
    c_text = render(sig, grid, f"fuzz_grid_{len(GRID_BATCH.sources)}", launch_args)
    assert c_text is not None, "codegen refused a grid the parser accepted"
    GRID_BATCH.add_variant(c_text)
    # semantics: evaluate with small argument values, in C and here (the values are drawn
    # whether or not they are used, so that the draws never depend on the batch's state)
    int_args = [a for a in sig.args if not a.is_constexpr and a.type in S.INT_TYPES
                and not a.is_one] + list(launch_args)
    envs = []
    for _ in range(3):
        env = {}
        for a in int_args:
            lo, hi = _c_int(a.type)
            env[a.name] = rnd.choice([0, 1, 2, 63, 64, 127, min(hi, 1000), max(lo, -7),
                                      rnd.randint(max(lo, -5000), min(hi, 5000))])
        env["NUM_SMS"] = rnd.choice([1, 8, 132])
        envs.append(env)
    if len(GRID_BATCH.evals) >= min(4 * EXAMPLES, 6000):  # one main() runs them all
        return
    trees = G._Parser(text, G._symbols(sig, launch_args)).entries()
    trees += [G.Num(1)] * (3 - len(trees))
    fn = f"ev_{len(GRID_BATCH.eval_functions)}"
    params = ", ".join(f"{abi.c_type(a.type).ctype} {abi.c_param_name(a.name)}" for a in int_args)
    GRID_BATCH.eval_functions.append(
        f"static __attribute__((unused)) void {fn}(int64_t *o, int64_t trt_attr_num_sms"
        f"{', ' if int_args else ''}{params}) {{\n  (void)trt_attr_num_sms;\n"
        + "".join(f"  o[{i}] = {c};\n" for i, c in enumerate(grid.c)) + "}")
    for env in envs:
        want = []
        for t in trees:
            try:
                want.append(str(_eval(t, env)))
            except _Invalid:
                want.append("NEG")  # any negative value: the launcher rejects it
        call = ", ".join([f"(int64_t){env['NUM_SMS']}"] + [
            f"({abi.c_type(a.type).ctype}){env[a.name]}" for a in int_args])
        GRID_BATCH.evals.append(f"  {fn}(o, {call}); print3(o);")
        GRID_BATCH.expected.append(" ".join(want))


def test_grid_variants_compile_and_compute(tmp_path):
    """Runs after test_parse_grid: compiles the accepted grids' variants, runs the evaluations."""
    if not GRID_BATCH.sources:
        pytest.skip("run together with test_parse_grid")
    GRID_BATCH.compile_all(tmp_path)
    GRID_BATCH.run_evals(tmp_path)


# ----------------------------------------------------------------------------- report

_START = time.time()


def test_zz_report():
    """Writes the counts (and prints them: `pytest -s`)."""
    STATS["_run"] = {"examples_per_property": EXAMPLES, "long_mode": LONG,
                     "seconds": round(time.time() - _START, 1)}
    text = json.dumps(STATS, indent=1, sort_keys=True)
    print("\nfuzz summary:\n" + text)
    # (not TEST_UNDECLARED_OUTPUTS_DIR: Bazel zips that folder, and the offline rootfs has
    # no zip, which fails the test)
    out = os.environ.get("RULES_TRITON_FUZZ_REPORT")
    if out:
        Path(out).write_text(text + "\n")
