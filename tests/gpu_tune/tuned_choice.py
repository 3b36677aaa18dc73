#!/usr/bin/env python3
"""tuned_choice: on a real GPU, checks that NAME_auto of a tuned library launches the variant
its committed tuning table chose, by reading which cubin the driver ran.

The driver cannot say which cubin ran, so the generated code talks to tests/gpu_dispatch's
recording shim (a libcuda.so.1 found first through LD_LIBRARY_PATH) that forwards to the real
driver at $RULES_TRITON_REAL_LIBCUDA and records the FNV-1a-64 hash of every loaded image and
which module each launch came from. This program (no torch: torch would load the driver
itself) opens the shim first, then the real driver by its absolute path for its own setup
(primary context, memory; one driver instance), loads the library packed by tools/tune, and for
every tuned point of this GPU's SM (in the layout it was tuned in) plus points between them
calls NAME_auto with 16-byte aligned operands in every layout (row-major or transposed A and B;
B = W.t() is torch.nn.Linear's), and shapes off the grid (N or K not divisible by 16, odd M);
the launched cubin must be NAME_a<algo>_s<spec>_sm<target> with algo = the table's choice for
the call's hint class (triton_aot.contract.tuning_table.lookup, the reference of the C lookup) and spec the
most specific variant that has that algo and whose hints the call has (triton_aot.tuning.call_hints):
with K % 16 != 0 that is still a variant with aligned pointers and unit strides, never the
generic one.

Usage (tests/gpu_tune/run.sh sets the environment):
    tuned_choice.py PACK_DIR...      (.gpu/tune/NAME folders of tools/tune, with cubins/)
Exit codes: 0 all passed; 1 a check failed; 2 setup error; 77 no driver or no GPU.
Against the fake driver of tests/fake_cuda as the "real" one (CPU test), it checks the choice
only (no memory) on a fake sm_90 device.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from triton_aot.contract import hint_patterns, library, record_reader  # noqa: E402
from triton_aot.contract import tuning_table as tuning  # noqa: E402

EXIT_FAILED, EXIT_SETUP, EXIT_SKIPPED = 1, 2, 77


class Launch(ctypes.Structure):  # recorder_launch (tests/gpu_dispatch/recording_libcuda.h)
    _fields_ = [("seq", ctypes.c_int), ("result", ctypes.c_int), ("ex", ctypes.c_int),
                ("function", ctypes.c_void_p), ("module", ctypes.c_void_p),
                ("load_index", ctypes.c_int), ("name", ctypes.c_char * 64),
                ("size", ctypes.c_ulonglong), ("fnv1a64", ctypes.c_ulonglong),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint)]


def fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# How A and B lie in memory (examples/kernels/matmul_tuning.py's make_args): n, row-major; t,
# the transpose of a row-major matrix (B = W.t() with W [N, K] is torch.nn.Linear's layout).
LAYOUTS = ("nn", "nt", "tn", "tt")


def strides(layout: str, M: int, N: int, K: int) -> tuple[int, int, int, int]:
    """stride_am, stride_ak, stride_bk, stride_bn of contiguous operands in `layout`."""
    return ((K, 1) if layout[0] == "n" else (1, M)) + ((N, 1) if layout[1] == "n" else (1, K))


def layout_of(hints: str | None) -> str:
    """The layout a tuned point's call had, read off its variant's unit-stride hints."""
    h = set((hints or "").split())
    return (("t" if "stride_am:1" in h and "stride_ak:1" not in h else "n")
            + ("t" if "stride_bk:1" in h and "stride_bn:1" not in h else "n"))


def say(msg: str) -> None:
    print(f"tuned_choice: {msg}", flush=True)


def write_hashes(pack: Path) -> None:
    """cubin_hashes.json: (size, FNV-1a-64) of each of the pack's cubins, by variant symbol."""
    hashes = {c.stem: [len(c.read_bytes()), fnv1a64(c.read_bytes())]
              for c in sorted((pack / "cubins").glob("*.cubin"))}
    (pack / "cubin_hashes.json").write_text(json.dumps(hashes, indent=0, sort_keys=True) + "\n")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--hash"]:
        for pack in argv[1:]:
            write_hashes(Path(pack))
        return 0
    packs = [Path(p) for p in argv]
    if not packs:
        say("usage: tuned_choice.py PACK_DIR... (the .gpu/tune/NAME folders of tools/tune)")
        return EXIT_SETUP
    real_path = os.environ.get("RULES_TRITON_REAL_LIBCUDA", "")
    if not real_path or not os.path.isabs(real_path) or not os.path.exists(real_path):
        say("SKIP: no CUDA driver (RULES_TRITON_REAL_LIBCUDA unset or missing); skipped")
        return EXIT_SKIPPED
    try:
        shim = ctypes.CDLL("libcuda.so.1")  # first: the shim, through LD_LIBRARY_PATH
    except OSError as e:
        say(f"the recording libcuda.so.1 is not on LD_LIBRARY_PATH: {e}")
        return EXIT_SETUP
    if not hasattr(shim, "recorder_real_status"):
        say("the libcuda.so.1 found first is not the recording shim: put .gpu/dispatch first on "
            "LD_LIBRARY_PATH (tools/gpu pack dispatch packs it)")
        return EXIT_SETUP
    shim.recorder_real_error.restype = ctypes.c_char_p
    if shim.recorder_real_status() != 0:
        say(f"SKIP: no usable CUDA driver: {shim.recorder_real_error().decode()}; skipped")
        return EXIT_SKIPPED
    cu = ctypes.CDLL(real_path)
    fake = hasattr(cu, "fake_cuda_set_device")

    def check(r, what):
        if r != 0:
            raise SystemExit(f"tuned_choice: {what} failed: CUresult {r}")

    check(cu.cuInit(0), "cuInit")
    if fake:
        cu.fake_cuda_create_context.restype = ctypes.c_void_p
        cu.fake_cuda_set_device(0, 9, 0, 232448)
        ctx = ctypes.c_void_p(cu.fake_cuda_create_context(0))
        sm, gpu = 90, "fake sm_90 (tests/fake_cuda)"
    else:
        count = ctypes.c_int()
        check(cu.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if count.value == 0:
            say("SKIP: no GPU; skipped")
            return EXIT_SKIPPED
        dev = ctypes.c_int()
        check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        major, minor = ctypes.c_int(), ctypes.c_int()
        cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
        cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
        sm = major.value * 10 + minor.value
        name = ctypes.create_string_buffer(256)
        cu.cuDeviceGetName(name, 256, dev)
        gpu = name.value.decode()
        ctx = ctypes.c_void_p()
        check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    say(f"device {gpu} (sm_{sm}), real driver {real_path}, fake: {fake}")

    next_fake = [0x10000000]

    def alloc(nbytes: int) -> int:
        if fake:
            p = next_fake[0]
            next_fake[0] += (nbytes + 4095) // 4096 * 4096
            return p
        p = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)), "cuMemAlloc")
        return p.value

    # One arena for every call's A, B and C (each shape's fit in 1.5 GiB, below): the check reads
    # which cubin ran, not the results, so calls share memory and nothing is allocated per call.
    arena = alloc(int(1.5 * 2 ** 30) + 3 * 4096)

    def operands(*sizes: int) -> list[int]:
        out, at = [], arena
        for n in sizes:
            out.append(at)
            at += (n + 4095) // 4096 * 4096
        return out

    shim.recorder_num_launches.restype = ctypes.c_int
    passed = failed = 0
    for pack in packs:
        meta = json.loads((pack / "pack.json").read_text())
        description = library.read_library(pack / meta["library"])
        name = description.name
        table = tuning.read_table(REPO / meta["table"])
        default = None
        cubins = {}
        for c in sorted((pack / "cubins").glob("*.cubin")):
            # variants whose cubins are identical (a hint that changes no code) share one
            # image, so a launched image names every variant that has it
            cubins.setdefault((len(c.read_bytes()), fnv1a64(c.read_bytes())), []).append(c.stem)
        # or their (size, hash) only, to carry less to the GPU machine (`--hash PACK` writes it)
        if not cubins and (pack / "cubin_hashes.json").exists():
            for stem, (size, h) in json.loads((pack / "cubin_hashes.json").read_text()).items():
                cubins.setdefault((size, h), []).append(stem)
        if not cubins:
            say(f"{pack}: no cubins/: rerun tools/tune")
            return EXIT_SETUP
        lib = ctypes.CDLL(str(pack / meta["so"]))
        auto = getattr(lib, f"{name}_auto")
        auto.argtypes = [ctypes.c_void_p] + [ctypes.c_uint64] * 3 + [ctypes.c_int32] * 9
        auto_algo = getattr(lib, f"{name}_auto_algo")
        auto_algo.argtypes = [ctypes.c_int] + [ctypes.c_uint64] * 3 + [ctypes.c_int32] * 9
        # the variant symbol of each (algo, hint pattern, SM) and the generic variants
        patterns = description.specializations
        sm_of = {v.symbol: v.target.arch for v in description.variants}
        symbol_of = {(v.algo, patterns[v.specialization], sm_of[v.symbol]): v.symbol
                     for v in description.variants}
        generic = {v.symbol for v in description.variants if not patterns[v.specialization]}
        ref = record_reader.read_json(
            (pack / "records" / f"{description.variants[0].symbol}.json").read_text())
        # each algo's launch grid, as the link tool read it (the waves of SM-bound algos)
        first_of = {}
        for v in description.variants:
            first_of.setdefault(v.algo, v.symbol)
        grids = [record_reader.read_json((pack / "records" / f"{first_of[a]}.json").read_text()
                                         ).grid if a in first_of else None
                 for a in range(len(table.algos))]
        # the default algo: what the library answers for an SM no table has
        default = auto_algo(1, 16, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 1)
        dev = table.device(sm)
        # each tuned point in the layout it was tuned in (its hints say which), then shapes
        # between and off the points in every layout
        points = [(*p.key, layout_of(p.hints)) for p in dev.points] if dev else []
        if not points:
            say(f"{name}: the table has no points for sm_{sm}: checking the default algo "
                f"{default} only")
        # between tuned points (N and K stay multiples of 16, as the specializations expect)
        between = [(3008, 3008, 3008), (2, 4096, 4096), (96, 5120, 5120), (704, 704, 704),
                   (100, 6144, 4096)]
        # off the grid: K % 16 != 0 with aligned row-major operands, N % 16 != 0, odd M
        between += [(3000, 1000, 1999), (1000, 3000, 1500), (777, 4096, 1000), (5, 1000, 2049),
                    (1, 4096, 1000), (3000, 1000, 2000), (1536, 8960, 1537)]
        between = [(*s, layout) for s in between for layout in LAYOUTS]
        targets = sorted(set(sm_of.values()))
        target = max(t for t in targets if t <= sm) if any(t <= sm for t in targets) else None
        # keep the operands affordable: every shape's A, B and C fit in 1.5 GiB
        shapes = [s for s in points + between if 2 * (s[0] * s[2] + s[2] * s[1] + s[0] * s[1])
                  <= 1.5 * 2 ** 30]
        order = hint_patterns.dispatch_order(set(patterns), ref.c_args)
        for M, N, K, layout in shapes:
            a, b, c = operands(2 * M * K, 2 * K * N, 2 * M * N)
            args = (a, b, c, M, N, K, *strides(layout, M, N, K), N, 1)
            jit = hint_patterns.of_call(ref, args)
            want_algo = tuning.lookup(table, sm, (M, N, K), default, hint_patterns.spelling(jit),
                                      grids)
            # the most specific variant whose hints the call has and that has the algo
            spec = next((h for h in order if set(h) <= set(jit)
                         and (want_algo, h, target) in symbol_of), None)
            want = symbol_of.get((want_algo, spec, target), f"<no variant for {jit}>")
            before = shim.recorder_num_launches()
            r = auto(None, *args)
            if not fake:
                check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
            got = ["<no launch>"]
            if r == 0 and shim.recorder_num_launches() == before + 1:
                rec = Launch()
                shim.recorder_get_launch(before, ctypes.byref(rec))
                got = cubins.get((rec.size, rec.fnv1a64), [f"<unknown image {rec.size} bytes>"])
            c_algo = auto_algo(sm, *args)
            # a variant with hints ran, never the generic one (it shares no cubin with them)
            ok = (r == 0 and want in got and c_algo == want_algo
                  and not any(g in generic for g in got))
            got = " = ".join(got)
            passed += ok
            failed += not ok
            say(f"{name} {M}x{N}x{K} {layout} -> {got} (expected {want}; {name}_auto_algo {c_algo}; "
                f"CUresult {r}): {'PASS' if ok else 'FAIL'}")
    say(f"{passed} passed, {failed} failed")
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
