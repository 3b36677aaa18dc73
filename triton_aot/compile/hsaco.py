"""Reads what the launcher must agree with from an AMD code object (hsaco, ELF64): the kernel
descriptor `<kernel>.kd` of each kernel, whose fields (AMDGPU ABI, `amd_kernel_code_t` v3+) give
the static LDS (group_segment_fixed_size, offset 0) and the kernel argument segment size
(kernarg_size, offset 8). Stdlib only; no ROCm."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from triton_aot.core.errors import UserError


@dataclass(frozen=True)
class KernelDescriptor:
    name: str
    group_segment_fixed_size: int  # static LDS bytes
    private_segment_fixed_size: int
    kernarg_size: int


def kernel_descriptors(image: bytes) -> dict[str, KernelDescriptor]:
    """Kernel name -> descriptor, for every `NAME.kd` symbol of the hsaco."""
    if image[:4] != b"\x7fELF" or image[4] != 2 or image[5] != 1:
        raise UserError("not a little-endian ELF64 hsaco")
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize)
                for i in range(shnum)]
    out = {}
    for sec in sections:
        if sec[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sec[6]]
        for off in range(sec[4], sec[4] + sec[5], 24):
            st_name, _info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", image, off)
            start = strtab[4] + st_name
            name = image[start:image.index(b"\0", start)].decode()
            if not name.endswith(".kd") or shndx == 0 or shndx >= len(sections):
                continue
            target = sections[shndx]
            file_off = target[4] + (value - target[3])
            group, private, kernarg = struct.unpack_from("<IIQ", image, file_off)
            out[name[:-3]] = KernelDescriptor(name[:-3], group, private, kernarg)
    return out


_SIZES = {"i1": 1, "i8": 1, "u1": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2,
          "i32": 4, "u32": 4, "fp32": 4, "i64": 8, "u64": 8, "fp64": 8}


def kernarg_bytes(types) -> int:
    """Size of the kernarg segment the launcher's argument list fills: each argument at its
    natural alignment (pointers 8 bytes), then the two scratch pointers Triton appends."""
    off = 0
    for size in [8 if ty.is_pointer else _SIZES[ty] for ty in types] + [8, 8]:
        off = (off + size - 1) // size * size + size
    return off


# LDS per workgroup (bytes) by gfx arch, as the AMDGPU backend documents it: 64 KiB on CDNA 1-3
# and RDNA, 160 KiB on CDNA 4 (gfx950).
_LDS_BYTES = {"gfx950": 160 * 1024}


def lds_bytes(arch: str) -> int:
    """The LDS a workgroup of `arch` (e.g. "gfx942", "gfx942:sramecc+") can have."""
    return _LDS_BYTES.get(arch.split(":")[0], 64 * 1024)
