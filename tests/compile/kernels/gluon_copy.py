"""A Gluon (@gluon.jit) kernel: compiled from TTGIR, explicit layouts."""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def gluon_copy_kernel(x_ptr, out_ptr, n, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout(size_per_thread=[1], threads_per_warp=[32],
                                            warps_per_cta=[4], order=[0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(x_ptr + offs, mask=mask), mask=mask)
