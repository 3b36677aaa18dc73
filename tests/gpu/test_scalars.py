"""scalars: each scalar C type of the ABI (docs/design.md) reaches the kernel bit for bit.

The kernel writes argument k+1 into bytes 8k.. of a zeroed byte buffer at its own width; we
compare those bytes with the little-endian encoding of the value we passed.
"""
import math
import struct

import pytest

import examples_lib as ex

torch, DEV = ex.cuda_ready()
SCALARS = ex.kernel("scalars")

# (name, struct format of the bytes the kernel writes)
SLOTS = [("i1", "b"), ("i8", "b"), ("i16", "h"), ("i32", "i"), ("i64", "q"), ("u1", "B"),
         ("u8", "B"), ("u16", "H"), ("u32", "I"), ("u64", "Q"), ("fp16", "H"), ("bf16", "H"),
         ("fp32", "f"), ("fp64", "d")]


def _half_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def _bf16_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16  # exact for the values below


CASES = {
    "zeros": dict(i1=False, i8=0, i16=0, i32=0, i64=0, u1=0, u8=0, u16=0, u32=0, u64=0,
                  fp16=0, bf16=0, fp32=0.0, fp64=0.0),
    "ones": dict(i1=True, i8=1, i16=1, i32=1, i64=1, u1=1, u8=1, u16=1, u32=1, u64=1,
                 fp16=_half_bits(1.0), bf16=_bf16_bits(1.0), fp32=1.0, fp64=1.0),
    "typical": dict(i1=True, i8=-100, i16=-30000, i32=-2000000000, i64=-9000000000000000000,
                    u1=1, u8=250, u16=65000, u32=4000000000, u64=18000000000000000000,
                    fp16=_half_bits(-3.140625), bf16=_bf16_bits(3.140625),
                    fp32=-1.2345678e-3, fp64=3.141592653589793e100),
    "minimums": dict(i1=False, i8=-128, i16=-32768, i32=-2**31, i64=-2**63, u1=0, u8=0, u16=0,
                     u32=0, u64=0, fp16=0xFBFF, bf16=0xFF7F, fp32=-3.4028234663852886e38,
                     fp64=-1.7976931348623157e308),
    "maximums": dict(i1=True, i8=127, i16=32767, i32=2**31 - 1, i64=2**63 - 1, u1=1, u8=255,
                     u16=65535, u32=2**32 - 1, u64=2**64 - 1, fp16=0x7BFF, bf16=0x7F7F,
                     fp32=3.4028234663852886e38, fp64=1.7976931348623157e308),
    "tiny_and_odd": dict(i1=True, i8=-1, i16=-1, i32=-1, i64=-1, u1=1, u8=0x5A, u16=0xA55A,
                         u32=0xDEADBEEF, u64=0x0123456789ABCDEF, fp16=0x0001, bf16=0x0001,
                         fp32=1.401298464324817e-45, fp64=5e-324),
    # Different bits in every byte, so that a value passed in the wrong slot or with the wrong
    # width cannot look right by accident.
    "distinct": dict(i1=True, i8=0x11, i16=0x2233, i32=0x44556677, i64=0x0899AABBCCDDEEFF,
                     u1=1, u8=0x99, u16=0x8877, u32=0xFEDCBA98, u64=0xF0E1D2C3B4A59687,
                     fp16=0x3555, bf16=0x3EAA, fp32=-0.3333333432674408, fp64=0.1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_scalars_round_trip(case):
    values = CASES[case]
    out = torch.zeros(len(SLOTS) * 8, dtype=torch.uint8, device=DEV)
    args = [values[name] for name, _ in SLOTS]
    r = SCALARS(ex.stream(torch), ex.ptr(out), *args, algo_id=0)
    assert r == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    got = bytes(out.cpu().tolist())
    bad = []
    for k, (name, fmt) in enumerate(SLOTS):
        value = values[name]
        if name == "i1":
            value = 1 if value else 0
        want = struct.pack("<" + fmt, value).ljust(8, b"\0")
        if got[8 * k:8 * k + 8] != want:
            bad.append(f"{name}: passed {value!r}, kernel saw bytes {got[8*k:8*k+8].hex()} "
                       f"(want {want.hex()})")
    assert not bad, "; ".join(bad)


def test_scalars_fp32_is_not_a_double():
    """The upstream bug: an fp32 declared as double makes the kernel read the wrong 4 bytes."""
    out = torch.zeros(len(SLOTS) * 8, dtype=torch.uint8, device=DEV)
    args = [0] * len(SLOTS)
    args[0] = False
    args[12] = 1.5  # fp32
    args[13] = 2.5  # fp64 follows it
    assert SCALARS.default(ex.stream(torch), ex.ptr(out), *args) == ex.CUDA_SUCCESS
    torch.cuda.synchronize()
    raw = bytes(out.cpu().tolist())
    assert struct.unpack("<f", raw[96:100])[0] == 1.5
    assert struct.unpack("<d", raw[104:112])[0] == 2.5
    assert not math.isnan(struct.unpack("<f", raw[96:100])[0])
