"""A standalone variant's C and header (the compile tool's --out_c/--out_h, upstream-style): one
variant's image, kernel and launcher plus its own `SYMBOL`, `load_SYMBOL` and `unload_SYMBOL`.
Compiled together with rules_triton's runtime (runtime/trt_runtime.c). Libraries built by the
rule do not use it (the link tool writes one C file for all of a library's variants); it is for
reading one variant's C with the compile tool run on its own (`bazel run
@rules_triton//triton_aot:compile -- ... --out_c=F.c --out_h=F.h`)."""

from __future__ import annotations

import hashlib
import os

from triton_aot.contract.variant import VariantRecord
from triton_aot.core import c_syntax
from triton_aot.core.c_syntax import CCode
from triton_aot.core.errors import UserError
from triton_aot.emit_c import c_parts
from triton_aot.emit_c.c_render import Templates

HIDDEN = CCode('__attribute__((visibility("hidden"))) ')


def render(record: VariantRecord, cubin: bytes, ptx: str | None, *,
           template_dir: str | os.PathLike | None = None) -> tuple[str, str]:
    """(C text, H text). `ptx` is embedded when the record says ptx_embedded."""
    if not isinstance(cubin, (bytes, bytearray)) or not cubin:
        raise UserError("cubin must be non-empty bytes")
    if record.ptx_embedded and not ptx:
        raise UserError("ptx_embedded is true but no PTX text was given")
    t = Templates(template_dir)
    symbol = c_syntax.ident(record.symbol, "symbol")
    # Named after the variant (one of each per file): trt_image_SYMBOL_cubin, ..._ptx.
    cubin_image = c_parts.Image(bytes(cubin), "cubin", CCode(f"{symbol}_cubin"))
    ptx_image = (c_parts.Image(ptx.encode("utf-8"), "PTX", CCode(f"{symbol}_ptx"))
                 if record.ptx_embedded else None)
    images = [c_parts.render_image(t, cubin_image, [record.symbol])]
    if ptx_image is not None:
        images.append(c_parts.render_image(t, ptx_image, [record.symbol + " (JIT fallback)"]))
    kernel_id = symbol
    args = record.launcher_c_args
    stream = c_parts.stream_name(args)
    visibility = CCode("") if record.export_symbols else HIDDEN
    values = dict(
        symbol=symbol,
        guard=CCode(f"RULES_TRITON_VARIANT_{symbol.upper()}_H_"),
        kernel_name=c_syntax.ident(record.kernel_name, "kernel_name"),
        kernel_file=c_syntax.comment(os.path.basename(record.kernel_file)),
        target_name=CCode(record.target.name),
        ptx_note=CCode(" (+PTX)" if ptx_image else ""),
        triton_version=c_syntax.comment(record.triton_version),
        cubin_sha256=CCode(hashlib.sha256(cubin_image.data).hexdigest()),
        constexpr_info=c_syntax.comment(record.constexpr_summary()),
        hint_info=c_syntax.comment(record.hint_summary()),
        num_warps=record.launch.num_warps,
        num_stages=record.launch.num_stages,
        num_ctas=record.launch.num_ctas,
        shared=record.shared,
        grid_info=c_syntax.comment(", ".join(record.grid)),
        visibility=visibility,
        launcher_params=c_parts.param_list(args, stream),
        call_args=c_parts.call_args(args, stream),
        images=c_syntax.join(images, "\n"),
        kernel=c_parts.render_kernel(t, kernel_id, record, cubin_image, ptx_image,
                                     [record.symbol]),
        launcher=c_parts.render_launcher(t, record, kernel_id, HIDDEN),
        kernel_id=kernel_id,
    )
    return t.render("variant.c.tmpl", **values), t.render("variant.h.tmpl", **values)
