"""The C fragments that a library and a standalone variant share: an embedded image, a kernel
(image + launch description, loaded once per context), and a variant launcher (grid, kernel
parameters, launch). Each renders one fragment template from typed record values."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

from triton_aot.contract.variant import Arg, VariantRecord
from triton_aot.core import abi, c_syntax
from triton_aot.core.c_syntax import CCode
from triton_aot.core.errors import UserError
from triton_aot.core.grid import DEVICE_ATTRS
from triton_aot.core.reset_to_zero import runtime_extents
from triton_aot.emit_c.c_render import Templates


@dataclass(frozen=True)
class Backend:
    """The C spelling of one GPU API, which a library's C uses exclusively (docs/design.md): the
    generated C and its runtime (runtime/trt_core.h's table) are written once over it, so a
    backend is one of these tables and one runtime table, not copies of the templates."""

    name: str  # "cuda" or "hip"
    # types and statuses of the API
    status_type: str
    stream_type: str
    pointer_type: str  # what a Triton pointer argument is in C
    pointer_is_integer: bool  # CUdeviceptr is; hipDeviceptr_t is a pointer (hints cast it)
    success: str
    invalid_value: str
    no_binary: str
    # the runtime (runtime/): its header and its link-name prefix (TRT_RT in trt_core.h)
    runtime_header: str
    rt: str
    # what the images are and where they are cached: per CUDA context, per HIP device
    image_word: str
    scope: str
    scope_device: str  # the device behind the scope
    arch_tag_prefix: str  # an arch in C names: sm90, gfx942 (comments: targets.arch_name)
    # features only some backends implement (the others refuse them with an error)
    tuned_dispatch: bool
    reset_to_zero: bool
    device_attrs: bool  # grids that read device attributes (NUM_SMS)
    # text of the generated files
    runtime_note: str  # how to build the library C
    api_note: str  # what the header's API is for
    api_include: str  # what declares the API's types
    target_rule: str  # how a target is chosen per scope

    def target_tag(self, arch: int | str) -> str:
        """The arch in C names: sm90, gfx942."""
        return f"{self.arch_tag_prefix}{arch}"

    def arch_c(self, arch: int | str) -> CCode:
        """The arch as trt_target/trt_kernel_info hold it (TRT_ARCH): 90, "gfx942"."""
        if isinstance(arch, int):
            return CCode(str(arch))
        return CCode(f'"{c_syntax.ident(arch, "target arch")}"')

    def values(self) -> dict[str, CCode]:
        """The backend's placeholders of the library templates."""
        return {k: CCode(getattr(self, k)) for k in (
            "status_type", "stream_type", "pointer_type", "success", "invalid_value",
            "no_binary", "runtime_header", "rt", "scope", "scope_device", "runtime_note",
            "api_note", "api_include", "target_rule")}


CUDA = Backend(
    name="cuda", status_type="CUresult", stream_type="CUstream", pointer_type="CUdeviceptr",
    pointer_is_integer=True, success="CUDA_SUCCESS", invalid_value="CUDA_ERROR_INVALID_VALUE",
    no_binary="CUDA_ERROR_NO_BINARY_FOR_GPU", runtime_header="trt_runtime.h", rt="trt_",
    image_word="cubin", scope="context", scope_device="context's device", arch_tag_prefix="sm",
    tuned_dispatch=True, reset_to_zero=True, device_attrs=True,
    runtime_note="Compile with rules_triton's runtime (runtime/trt_runtime.c); link with "
                 "-ldl -lpthread.",
    api_note="",
    api_include="#include <cuda.h>\n",
    target_rule=(
        " * Targets, chosen per CUDA context: the exact SM, else the highest lower SM of the same"
        " major\n * (arch-specific sm_90a+ cubins only match exactly), else embedded PTX that the"
        " driver can JIT,\n * else CUDA_ERROR_NO_BINARY_FOR_GPU.\n"))
HIP = Backend(
    name="hip", status_type="hipError_t", stream_type="hipStream_t",
    pointer_type="hipDeviceptr_t", pointer_is_integer=False, success="hipSuccess",
    invalid_value="hipErrorInvalidValue", no_binary="hipErrorNoBinaryForGpu",
    runtime_header="trt_hip_runtime.h", rt="trt_hip_", image_word="hsaco", scope="device",
    scope_device="device", arch_tag_prefix="", tuned_dispatch=False,
    reset_to_zero=False, device_attrs=False,
    runtime_note="HIP library: compile with rules_triton's HIP runtime "
                 "(runtime/trt_hip_runtime.c); link with\n * -ldl -lpthread; libamdhip64 is "
                 "opened at run time.",
    api_note=", for AMD GPUs\n * through the HIP runtime (libamdhip64, opened at run time; "
             "ROCm 6.0 or newer)",
    api_include=(
        "/* hipError_t, hipStream_t, hipDeviceptr_t: ROCm's <hip/hip_runtime_api.h> when compiled"
        " with\n * __HIP_PLATFORM_AMD__ and ROCm's headers at hand, else rules_triton's own"
        " declarations of the\n * same types (runtime/trt_hip.h). */\n#include \"trt_hip.h\"\n"),
    target_rule=(
        " * Targets, chosen per device (the calling thread's current HIP device): the hsaco whose"
        " gfx arch\n * equals the device's, else hipErrorNoBinaryForGpu (AMD code objects run only"
        " on their own arch).\n"))


def backend_of(record: VariantRecord) -> Backend:
    return HIP if record.target.is_hip else CUDA


def c_params(args: Sequence[Arg], backend: Backend = CUDA) -> list[tuple[str, CCode]]:
    """(C type, C name) of the C API parameters for `args` in `backend`'s API (pointers differ,
    scalars do not); a tensor descriptor is several (its base, shape and strides)."""
    out = []
    for a in args:
        for ctype, name in a.c_params:
            if a.is_pointer:
                ctype = backend.pointer_type
            out.append((ctype, c_syntax.param(name)))
    return out


def c_param_names(args: Sequence[Arg]) -> list[CCode]:
    """The C names of the C API parameters for `args` (c_params)."""
    return [c_syntax.param(name) for a in args for _, name in a.c_params]


def stream_name(args: Sequence[Arg]) -> CCode:
    """The C name of the stream parameter: `stream`, unless a kernel parameter has that name."""
    return CCode("trt_stream" if "stream" in c_param_names(args) else "stream")


def param_list(args: Sequence[Arg], stream: CCode, backend: Backend = CUDA) -> CCode:
    """`CUstream stream, CUdeviceptr x, int32_t n`: the C parameters for `args`."""
    return CCode(", ".join([f"{backend.stream_type} {stream}"] + [
        f"{ctype} {name}" for ctype, name in c_params(args, backend)]))


def call_args(args: Sequence[Arg], stream: CCode) -> CCode:
    return CCode(", ".join([stream] + [name for _, name in c_params(args)]))


@dataclass(frozen=True)
class Image:
    """An embedded image (cubin bytes or NUL-terminated PTX text), named by its content."""

    data: bytes
    what: str  # "cubin" or "PTX"
    name: CCode | None = None  # C name suffix; default: from the content's hash

    @property
    def id(self) -> CCode:
        return self.name or CCode(hashlib.sha256(self.data).hexdigest()[:16])

    @property
    def ref(self) -> CCode:
        return CCode(f"trt_image_{self.id}")


def render_image(t: Templates, image: Image, users: Sequence[str]) -> CCode:
    return t.render(
        "image.c.tmpl",
        comment=c_syntax.comment(f"{image.what}, {len(image.data)} bytes, sha256 "
                                 f"{hashlib.sha256(image.data).hexdigest()}: "
                                 + ", ".join(users)),
        id=image.id,
        array_size=len(image.data) + 1,
        literal=c_syntax.string_literal(image.data))


def kernel_key(record: VariantRecord, cubin: Image, ptx: Image | None) -> tuple:
    """Variants with equal keys launch the same kernel the same way and share one trt_kernel
    (one module per context): Triton emits identical cubins for some hint sets."""
    return (record.kernel_name, record.target.arch, cubin.id, ptx.id if ptx else None,
            record.launch.num_warps * record.target.warp_size, record.launch.num_ctas,
            record.shared, record.launch.cooperative, record.launch.pdl, record.global_scratch,
            record.profile_scratch)


def render_kernel(t: Templates, kernel_id: CCode, record: VariantRecord, cubin: Image,
                  ptx: Image | None, users: Sequence[str]) -> CCode:
    backend = backend_of(record)
    return t.render(
        "kernel.c.tmpl",
        comment=c_syntax.comment(f"{record.kernel_name} for {record.target.name}: "
                                 + ", ".join(users)),
        id=kernel_id,
        kernel_name=c_syntax.ident(record.kernel_name, "kernel_name"),
        arch=backend.arch_c(record.target.arch),
        image_ref=cubin.ref,
        ptx_ref=ptx.ref if ptx else CCode("NULL"),
        block_x=record.launch.num_warps * record.target.warp_size,
        num_ctas=record.launch.num_ctas,
        shared=record.shared,
        cooperative=int(record.launch.cooperative),
        pdl=int(record.launch.pdl),
        global_scratch_size=record.global_scratch[0],
        global_scratch_align=record.global_scratch[1],
        profile_scratch_size=record.profile_scratch[0],
        profile_scratch_align=record.profile_scratch[1])


def _tensordesc_locals(t: Templates, record: VariantRecord, a: Arg) -> tuple[str, list[str]]:
    """C that encodes descriptor `a` (or returns the runtime's error: nothing is launched), and
    the kernel parameters it becomes: the CUtensorMap, the shape as int32, the strides as int64
    (what triton.compile expands a tensordesc parameter into; triton_adapter.tma_infos)."""
    tma = a.tma
    if tma is None:
        raise UserError(f"{record.symbol}: tensor descriptor {a.name!r} has no TMA encoding")
    name = c_syntax.param(a.name)
    names = [c_syntax.param(n) for _, n in a.c_params]
    rank = a.type.rank
    base, shape, strides = names[0], names[1:1 + rank], names[1 + rank:]
    text = t.render(
        "tensordesc.c.tmpl",
        name=name,
        type=c_syntax.comment(a.type),
        box_info=c_syntax.comment(str(list(tma.box))),
        data_type=tma.data_type, rank=rank, swizzle=tma.swizzle, elem_size=tma.elem_size,
        box=CCode(", ".join(f"{int(b)}u" for b in tma.box)),
        shape=CCode(", ".join(shape)), strides=CCode(", ".join(strides)), base=base)
    refs = ([f"&trt_tma_{name}.map"] + [f"&trt_dims_{name}[{i}]" for i in range(rank)]
            + [f"&{s}" for s in strides])
    return text, refs


def _zero_regions(record: VariantRecord) -> str:
    """The launcher's `trt_zero` array: each reset_to_zero region with its extents evaluated
    (the runtime checks them and zeroes before the launch; trt_kernel_launch_zeroed)."""
    by_name = {a.name: a for a in record.args}
    rows = []
    for r in record.reset_to_zero:
        a = by_name[r.name]
        name = c_syntax.param(r.name)
        exts = [f"(int64_t)({c_syntax.grid_expression(e, 'reset_to_zero extent')})"
                for e in r.extents_c]
        rows_, cols, stride, col_stride = runtime_extents(exts)
        rows.append(f"      /* {c_syntax.comment(r.summary)}: {c_syntax.comment(a.type)} */\n"
                    f"      {{{name}, {abi.pointee_size(a.type)}u, {int(len(exts) >= 3)}, "
                    f"{rows_}, {cols}, {stride}, {col_stride}}},\n")
    return (f"  /* reset_to_zero: zeroed on the stream before the launch (every check first) */\n"
            f"  const trt_zero_region trt_zero[{len(rows)}] = {{\n{''.join(rows)}  }};\n")


def render_launcher(t: Templates, record: VariantRecord, kernel_id: CCode,
                    linkage: CCode) -> CCode:
    """`trt_dispatch_SYMBOL(driver, context key, stream, launcher args...)`."""
    symbol = c_syntax.ident(record.symbol, "symbol")
    args = record.launcher_args
    stream = stream_name(record.launcher_c_args)
    backend = backend_of(record)
    locals_, refs = [], []
    for a in record.launch_args:  # only the grid reads them; an algo's grid may not
        locals_.append(f"  (void){c_syntax.param(a.name)};\n")
    zeroed = bool(record.reset_to_zero)
    if zeroed and not backend.reset_to_zero:
        raise UserError(f"{record.symbol}: reset_to_zero is CUDA only; {backend.name} targets "
                        "do not support it yet")
    launch_fn = CCode(backend.rt + ("kernel_launch_zeroed" if zeroed else "kernel_launch_in"))
    zero_args = CCode(f", trt_zero, {len(record.reset_to_zero)}" if zeroed else "")
    if zeroed:
        locals_.append(_zero_regions(record))
    if record.tensordescs:
        # with reset_to_zero, an empty grid still zeroes (the runtime skips the launch)
        empty = CCode(f"trt_kernel_launch_zeroed(trt_driver_table, trt_context_key_, "
                      f"&trt_kernel_{kernel_id}, {stream}, trt_grid, NULL, trt_scratch"
                      f"{zero_args})" if zeroed else backend.success)
        locals_.append(t.render("tensordesc_empty_grid.c.tmpl", empty_grid_result=empty))
    for a in args:
        name = c_syntax.param(a.name)
        if a.is_tensordesc:
            tma_locals, tma_refs = _tensordesc_locals(t, record, a)
            locals_.append(tma_locals)
            refs += tma_refs
            continue
        ctype = a.c_type
        if ctype.kernel_ctype != ctype.ctype:
            # i1 goes to the kernel as one byte: copy the bool into an int8_t, whose size is 1
            # by construction (bool's representation is the compiler's).
            locals_.append(f"  {ctype.kernel_ctype} trt_arg_{name} = "
                           f"({ctype.kernel_ctype})({name} ? 1 : 0);\n")
            refs.append(f"&trt_arg_{name}")
        else:
            refs.append(f"&{name}")
    refs += ["&trt_scratch[0]", "&trt_scratch[1]"]  # global, profile scratch
    grid = [c_syntax.grid_expression(e, f"grid_c[{i}]") for i, e in enumerate(record.grid_c)]
    prelude = []
    if record.device_attrs and not backend.device_attrs:
        raise UserError(f"{record.symbol}: the grid reads {', '.join(record.device_attrs)}, "
                        f"which {backend.name} targets do not support yet; write the grid "
                        "without it")
    for attr in record.device_attrs:
        var, enum, _ = DEVICE_ATTRS[attr]
        # read once per context by the runtime; hands back the driver table and context key, so
        # the launch below does not look them up again
        prelude.append(
            f"  int64_t {var} = 0;\n"
            f"  CUresult trt_status_{var} = trt_device_attribute(&trt_driver_table, "
            f"&trt_context_key_, {enum}, &{var});\n"
            f"  if (trt_status_{var} != CUDA_SUCCESS) return trt_status_{var};\n")
    return t.render(
        "launcher.c.tmpl",
        status_type=CCode(backend.status_type),
        pointer_type=CCode(backend.pointer_type),
        symbol=symbol,
        target_name=CCode(record.target.name),
        hint_info=c_syntax.comment(record.hint_summary()),
        grid_info=c_syntax.comment(", ".join(record.grid)),
        linkage=linkage,
        launcher_params=param_list(record.launcher_c_args, stream, backend),
        grid_prelude=CCode("".join(prelude)),
        grid_x=grid[0], grid_y=grid[1], grid_z=grid[2],
        param_locals=CCode("".join(locals_)),
        num_params=len(refs),
        param_refs=CCode(", ".join(refs)),
        kernel_id=kernel_id,
        stream=stream,
        launch_fn=launch_fn,
        zero_args=zero_args)
