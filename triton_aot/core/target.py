"""A GPU target ("cuda:90", "hip:gfx942"), parsed once into a `Target`.

The grammar of a target's text and its JSON form live here and nowhere else: the compile tool
parses `--target` with `parse` (triton_adapter.parse_target adds the installed triton's version),
the variant record and the library description carry the `Target` as JSON (`to_dict`,
`from_dict`), and every later stage reads its fields. What a target can have (its image, a PTX
fallback, TMA, ...) is the targets table's (targets.py), reached through `Target.row`. The rule's
analysis reads the same table generated into rules/private/generated/targets.bzl; the arch
checks are this module's, run in the library's import check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from triton_aot.core import targets
from triton_aot.core.errors import UserError, flag_error

_CUDA = re.compile(r"cuda:([0-9]{2,3})(?::(32))?\Z")
_CUDA_ARCH_SPECIFIC = re.compile(r"cuda:([0-9]{2,3})a(:32)?\Z")
_HIP = re.compile(r"hip:(gfx[0-9a-f]+)(?::(32|64))?\Z")
# AMD archs in a record: gfx followed by the family/stepping hex digits (gfx90a, gfx942, gfx1100).
HIP_ARCH = re.compile(r"gfx[0-9]{1,2}[0-9a-f]{2}\Z")


@dataclass(frozen=True)
class Target:
    backend: str  # a key of targets.BACKENDS: "cuda" or "hip"
    arch: int | str  # cuda: SM number, 90 for sm_90; hip: the gfx name, "gfx942"
    warp_size: int

    @property
    def row(self) -> targets.Backend:
        """What the targets table says of this target's backend."""
        return targets.BACKENDS[self.backend]

    @property
    def is_hip(self) -> bool:
        """Whether the launchers use the HIP runtime's types and calls."""
        return self.backend == "hip"

    @property
    def sm(self) -> int | None:
        """The SM number of a CUDA target (archs compare by it), None for an AMD one."""
        return self.arch if self.backend == "cuda" else None

    @property
    def has_tma(self) -> bool:
        """Whether it launches host tensor descriptors (TMA): cuda:90 and newer."""
        return self.sm is not None and self.sm >= targets.TMA_FROM

    @property
    def name(self) -> str:
        """sm_90 for a CUDA target, the gfx name for an AMD one."""
        return targets.arch_name(self.arch)

    def __str__(self) -> str:  # the --target spelling
        return f"{self.backend}:{self.arch}"

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "arch": self.arch, "warp_size": self.warp_size}

    @staticmethod
    def from_dict(t: Any) -> "Target":
        """A target from its JSON form, or a UserError naming the field."""
        if not isinstance(t, dict):
            raise UserError("malformed variant metadata: 'target' is not an object")
        backend, arch, warp = t.get("backend"), t.get("arch"), t["warp_size"]
        if backend == "cuda":
            if isinstance(arch, bool) or not isinstance(arch, int) or arch < 10:
                raise UserError(f"target arch {arch!r} is not an SM number like 90")
        elif backend == "hip":
            if not isinstance(arch, str) or not HIP_ARCH.match(arch):
                raise UserError(f"target arch {arch!r} is not an AMD gfx name like 'gfx942'")
        else:
            raise UserError(f"target backend {backend!r} is not supported (cuda or hip)")
        if isinstance(warp, bool) or not isinstance(warp, int) or warp < 1:
            raise UserError(f"metadata field 'warp_size' must be an integer >= 1, got {warp!r}")
        return Target(backend, arch, warp)


def hip_warp_size(arch: str) -> int:
    """The wavefront size Triton compiles for: 64 on gfx9 (CDNA), 32 on gfx10 and newer (RDNA),
    as triton/backends/amd/compiler.py's HIPOptions sets it whatever GPUTarget says."""
    return 32 if int(arch[3:-2]) >= 10 else 64


def parse_hip(text: str, flag: str = "target") -> Target:
    """`hip:gfx942` (upstream's `hip:gfx942:64` also accepted when the warp size agrees)."""
    match = _HIP.match(text)
    if not match:
        raise flag_error(flag, f"{text!r} is not an AMD target",
                         "write hip:gfxNNN, e.g. hip:gfx90a or hip:gfx942")
    arch = match.group(1)
    if arch not in targets.HIP_ARCHS:
        raise flag_error(flag, f"{text!r}: not an AMD arch rules_triton compiles for",
                         "use one of " + ", ".join(f"hip:{a}" for a in sorted(targets.HIP_ARCHS)))
    warp = hip_warp_size(arch)
    if match.group(2) and int(match.group(2)) != warp:
        raise flag_error(flag, f"{text!r}: Triton compiles {arch} for a wavefront of {warp}",
                         f"write hip:{arch}")
    return Target("hip", arch, warp)


def parse(text: str, version: str | None = None, flag: str = "target") -> Target:
    """`cuda:80`, `cuda:90` (upstream's `cuda:90:32` also accepted), `hip:gfx942`; a CUDA arch
    must be one triton `version` compiles for (any supported triton's when None)."""
    text = (text or "").strip()
    if text.startswith("hip:"):
        return parse_hip(text, flag)
    if _CUDA_ARCH_SPECIFIC.match(text):
        plain = re.sub(r"([0-9])a", r"\1", text)
        raise flag_error(flag, f"{text!r}: Triton always compiles arch 90 and newer for the "
                         "arch-specific 'a' variant (sm_90a) by itself", f"write {plain}")
    match = _CUDA.match(text)
    if not match:
        raise flag_error(flag, f"{text!r} is not a CUDA target",
                         "write cuda:SM, e.g. cuda:80 or cuda:90, or hip:gfxNNN, e.g. hip:gfx942")
    arch = int(match.group(1))
    oldest = targets.CUDA_ARCHS[0]
    if arch < oldest:
        raise flag_error(flag, f"{text!r}: no supported triton compiles for "
                         f"{targets.arch_name(arch)}; the oldest is {targets.arch_name(oldest)}",
                         f"use cuda:{oldest} or newer, e.g. cuda:80")
    archs = targets.cuda_archs(version) if version else frozenset(targets.CUDA_ARCHS)
    if arch not in archs:
        raise flag_error(flag, f"{text!r}: the ptxas of triton {version or 'any release'} "
                         f"cannot compile for sm_{arch}", "use one of " +
                         ", ".join(f"cuda:{a}" for a in sorted(archs)) + _versions_for(arch))
    return Target("cuda", arch, 32)


def _versions_for(arch: int) -> str:
    versions = targets.versions_for(arch)
    if not versions:
        return f" (no supported triton compiles for sm_{arch})"
    return f" (triton {', '.join(versions)} compiles for sm_{arch})"
