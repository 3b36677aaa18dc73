/* The launchers' C entries (BUILD.bazel: NAME_c, triton_launcher_c_library) against the fake
 * driver, whose ELF images are the real cubins: every check refuses with
 * CUDA_ERROR_INVALID_VALUE and launches nothing (dtype, rank, static size, stride, guard, size
 * table, device type and id, output shape, workspace size and alignment, a value beyond the
 * kernel's int32); rms_scale's size table picks the algo of each condition; decode attention runs
 * its two launches in order, on the caller's stream, with the arguments its launcher passes and
 * its intermediates carved from the workspace; a failing launch is returned as it is; the tensors
 * a launcher made with torch.zeros / torch.full (an output, a scratch tensor) are memset on the
 * stream after every check and before the first launch, and nothing is written when a check
 * refuses; at a size 0 the workspace is 0 bytes and (NULL, 0) is taken, the empty grids launch
 * nothing. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "tests/capture/accumulate_c.h"
#include "tests/capture/accumulate_twice_c.h"
#include "tests/capture/decode_attention_c.h"
#include "tests/capture/liger_rms_norm_c.h"
#include "tests/capture/liger_rope_c.h"
#include "tests/capture/liger_swiglu_c.h"
#include "tests/capture/rms_scale_c.h"
#include "tests/link/progs/check.h"

static void *fake;
static void *sym(const char *name) {
  void *p = dlsym(fake, name);
  if (p == NULL) {
    fprintf(stderr, "the fake driver has no %s\n", name);
    exit(1);
  }
  return p;
}

static int (*num_launches)(void);
static int (*get_launch)(int, fake_cuda_launch *);
static void (*fail_after)(const char *, int, CUresult, int);
static int (*num_memsets)(void);
static int (*get_memset)(int, fake_cuda_memset *);

#define STREAM ((CUstream)0x55)

/* A tensor of up to 5 dimensions at a fake device address; NULL strides (compact). */
typedef struct {
  DLTensor t;
  int64_t shape[5];
  int64_t strides[5];
} tensor;

static DLTensor *make(tensor *x, uintptr_t address, uint8_t code, uint8_t bits, int ndim,
                      const int64_t *shape) {
  memset(x, 0, sizeof *x);
  x->t.data = (void *)address;
  x->t.device.device_type = kDLCUDA;
  x->t.device.device_id = 0;
  x->t.ndim = ndim;
  x->t.dtype.code = code;
  x->t.dtype.bits = bits;
  x->t.dtype.lanes = 1;
  memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
  x->t.shape = x->shape;
  x->t.strides = NULL;
  return &x->t;
}

/* Sets explicit row-major strides (so a test can then change one). */
static void dense_strides(tensor *x) {
  int64_t s = 1;
  int d;
  for (d = x->t.ndim - 1; d >= 0; --d) {
    x->strides[d] = s;
    s *= x->shape[d];
  }
  x->t.strides = x->strides;
}

static int64_t param_i32(const fake_cuda_launch *l, int i) {
  int32_t v;
  CHECK_EQ(l->param_size[i], 4);
  memcpy(&v, l->param_bytes[i], 4);
  return v;
}

static uint64_t param_ptr(const fake_cuda_launch *l, int i) {
  uint64_t v;
  CHECK_EQ(l->param_size[i], 8);
  memcpy(&v, l->param_bytes[i], 8);
  return v;
}

/* rms_scale_c over x [rows, cols]: returns the launch's grid x and block x through *grid and
 * *block (0 when refused), and the status. */
static CUresult rms_scale_at(int64_t rows, int64_t cols, unsigned *grid, unsigned *block) {
  tensor x, w, y;
  int64_t xs[2] = {rows, cols}, ws[1] = {cols};
  int before = num_launches();
  CUresult r = rms_scale_c(STREAM, make(&x, 0x100000, kDLBfloat, 16, 2, xs),
                           make(&w, 0x200000, kDLBfloat, 16, 1, ws), 1e-6f,
                           make(&y, 0x300000, kDLBfloat, 16, 2, xs), NULL, 0);
  *grid = *block = 0;
  if (r == CUDA_SUCCESS) {
    fake_cuda_launch l;
    CHECK_EQ(num_launches(), before + 1);
    CHECK(get_launch(before, &l));
    CHECK_STR(l.name, "rms_scale_kernel");
    CHECK(l.stream == STREAM);
    *grid = l.grid[0];
    *block = l.block[0];
  } else {
    CHECK_EQ(num_launches(), before);
  }
  return r;
}

static void test_rms_scale_algos(void) {
  unsigned grid, block;
  size_t bytes = 1;
  tensor x, w;
  int64_t xs[2] = {64, 1024}, ws[1] = {1024};
  /* algo 0 (cols 1024, rows <= 1024): one row per program, 4 warps */
  CHECK_EQ(rms_scale_at(64, 1024, &grid, &block), CUDA_SUCCESS);
  CHECK_EQ(grid, 64);
  CHECK_EQ(block, 4 * 32);
  /* algo 1 (cols 4096, rows <= 1024): one row per program, 8 warps; 1024 is on this side */
  CHECK_EQ(rms_scale_at(1024, 4096, &grid, &block), CUDA_SUCCESS);
  CHECK_EQ(grid, 1024);
  CHECK_EQ(block, 8 * 32);
  /* algo 2 (cols 4096, rows > 1024): four rows per program */
  CHECK_EQ(rms_scale_at(1025, 4096, &grid, &block), CUDA_SUCCESS);
  CHECK_EQ(grid, 257);
  CHECK_EQ(block, 8 * 32);
  /* cols 1024 with rows > 1024 and cols 2048: no example call covers them, refused */
  CHECK_EQ(rms_scale_at(2048, 1024, &grid, &block), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(rms_scale_at(64, 2048, &grid, &block), CUDA_ERROR_INVALID_VALUE);
  /* no intermediates: no workspace */
  CHECK_EQ(rms_scale_c_workspace_size(make(&x, 0x100000, kDLBfloat, 16, 2, xs),
                                      make(&w, 0x200000, kDLBfloat, 16, 1, ws), &bytes),
           CUDA_SUCCESS);
  CHECK_EQ(bytes, 0);
}

/* liger_rms_norm_c(X [rows, 4096] fp32, W [4096] fp32, eps, offset, Y [rows, 4096], RSTD [rows]) */
static CUresult rms_norm_call(tensor *x, tensor *w, tensor *y, tensor *rstd) {
  return liger_rms_norm_c(STREAM, &x->t, &w->t, 1e-6f, 0.0f, &y->t, &rstd->t, NULL, 0);
}

static void test_refusals(void) {
  tensor x, w, y, rstd;
  int64_t xs[2] = {8, 4096}, ws[1] = {4096}, rs[1] = {8}, x3[3] = {2, 4, 4096},
          xbad[2] = {8, 2048};
  int before;
#define RESET()                                                  \
  do {                                                           \
    make(&x, 0x100000, kDLFloat, 32, 2, xs);                     \
    make(&w, 0x200000, kDLFloat, 32, 1, ws);                     \
    make(&y, 0x300000, kDLFloat, 32, 2, xs);                     \
    make(&rstd, 0x400000, kDLFloat, 32, 1, rs);                  \
  } while (0)
#define REFUSED()                                                          \
  do {                                                                     \
    before = num_launches();                                               \
    CHECK_EQ(rms_norm_call(&x, &w, &y, &rstd), CUDA_ERROR_INVALID_VALUE);  \
    CHECK_EQ(num_launches(), before);                                      \
    RESET();                                                               \
  } while (0)
  RESET();
  before = num_launches();
  CHECK_EQ(rms_norm_call(&x, &w, &y, &rstd), CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before + 1);
  RESET();
  /* dtype: bf16 where the kernel takes fp32; a vector dtype */
  x.t.dtype.code = kDLBfloat, x.t.dtype.bits = 16;
  REFUSED();
  w.t.dtype.lanes = 2;
  REFUSED();
  /* rank */
  make(&x, 0x100000, kDLFloat, 32, 3, x3);
  REFUSED();
  /* static size: X.size(1) == 4096 */
  make(&x, 0x100000, kDLFloat, 32, 2, xbad);
  REFUSED();
  /* strides: X must be contiguous (its row stride is no kernel argument) */
  dense_strides(&x);
  x.strides[0] = 8192;
  REFUSED();
  /* explicit dense strides are fine */
  dense_strides(&x);
  before = num_launches();
  CHECK_EQ(rms_norm_call(&x, &w, &y, &rstd), CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before + 1);
  RESET();
  /* device type, and one device for every tensor */
  w.t.device.device_type = kDLCPU;
  REFUSED();
  x.t.device.device_id = 1;
  REFUSED();
  /* outputs: shape, dtype, strides, NULL */
  rstd.shape[0] = 7;
  REFUSED();
  y.t.dtype.bits = 64;
  REFUSED();
  dense_strides(&y);
  y.strides[1] = 2;
  REFUSED();
  before = num_launches();
  CHECK_EQ(liger_rms_norm_c(STREAM, &x.t, &w.t, 1e-6f, 0.0f, NULL, &rstd.t, NULL, 0),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(num_launches(), before);
  /* an input the record's sizes leave negative */
  x.shape[0] = -1;
  REFUSED();
#undef REFUSED
#undef RESET
}

/* Liger's RoPE over q, k as (batch, heads, seq, head_dim) views of (batch, seq, heads, head_dim):
 * the record fixes their strides. */
static void test_rope_strides(void) {
  tensor q, k, cos_, sin_;
  int64_t seq = 64, qs[4] = {2, 32, 64, 128}, ks[4] = {2, 8, 64, 128}, cs[3] = {1, 64, 128};
  int before = num_launches();
  make(&q, 0x100000, kDLBfloat, 16, 4, qs);
  make(&k, 0x200000, kDLBfloat, 16, 4, ks);
  q.t.strides = q.strides, k.t.strides = k.strides;
  q.strides[0] = seq * 32 * 128, q.strides[1] = 128, q.strides[2] = 32 * 128, q.strides[3] = 1;
  k.strides[0] = seq * 8 * 128, k.strides[1] = 128, k.strides[2] = 8 * 128, k.strides[3] = 1;
  make(&cos_, 0x300000, kDLBfloat, 16, 3, cs);
  make(&sin_, 0x400000, kDLBfloat, 16, 3, cs);
  CHECK_EQ(liger_rope_c(STREAM, &q.t, &k.t, &cos_.t, &sin_.t, NULL, 0), CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before + 1);
  {
    fake_cuda_launch l;
    CHECK(get_launch(before, &l));
    CHECK_EQ(l.grid[0], 2 * 64); /* grid 2 * sl */
  }
  /* a stride the capture fixed (q.stride(1) == 128): q as its contiguous (b, h, s, d) layout */
  dense_strides(&q);
  CHECK_EQ(liger_rope_c(STREAM, &q.t, &k.t, &cos_.t, &sin_.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(num_launches(), before + 1);
  /* a guard: k's sequence length must be q's */
  q.strides[0] = seq * 32 * 128, q.strides[1] = 128, q.strides[2] = 32 * 128, q.strides[3] = 1;
  k.shape[2] = 32;
  CHECK_EQ(liger_rope_c(STREAM, &q.t, &k.t, &cos_.t, &sin_.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(num_launches(), before + 1);
}

static void test_decode_attention(void) {
  tensor q, kc, vc, out;
  const int64_t batch = 4, seq = 4096;
  int64_t qs[3] = {batch, 32, 128}, cs[4] = {batch, seq, 32, 128};
  const uintptr_t ws = 0x7000000; /* 256-byte aligned */
  const size_t partial = (size_t)batch * 32 * 8 * 128 * 4, lse = (size_t)batch * 32 * 8 * 4;
  size_t bytes = 0;
  int before = num_launches();
  fake_cuda_launch l0, l1;
  float scale;
  make(&q, 0x100000, kDLBfloat, 16, 3, qs);
  make(&kc, 0x200000, kDLBfloat, 16, 4, cs);
  make(&vc, 0x300000, kDLBfloat, 16, 4, cs);
  make(&out, 0x400000, kDLBfloat, 16, 3, qs);
  /* the workspace: Partial (fp32 [batch, 32, 8, 128]) then Lse (fp32 [batch, 32, 8]), each
   * rounded up to 256 bytes */
  CHECK_EQ(decode_attention_c_workspace_size(&q.t, &kc.t, &vc.t, &bytes), CUDA_SUCCESS);
  CHECK_EQ(bytes, partial + lse);
  CHECK_EQ(decode_attention_c_workspace_size(&q.t, &kc.t, &vc.t, NULL), CUDA_ERROR_INVALID_VALUE);
  /* too small, misaligned, absent: refused, nothing launched */
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes - 1),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)(ws + 16), bytes),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, NULL, bytes),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(num_launches(), before);

  /* both launches, in order, on the stream */
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes),
           CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before + 2);
  CHECK(get_launch(before, &l0));
  CHECK(get_launch(before + 1, &l1));
  CHECK_STR(l0.name, "decode_partial_kernel");
  CHECK_STR(l1.name, "decode_reduce_kernel");
  CHECK(l0.seq < l1.seq);
  CHECK(l0.stream == STREAM && l1.stream == STREAM);
  CHECK_EQ(l0.grid[0], 32 * batch); /* grid "32 * batch, 8" */
  CHECK_EQ(l0.grid[1], 8);
  CHECK_EQ(l1.grid[0], 32 * batch); /* grid "32 * batch" */
  CHECK_EQ(l1.grid[1], 1);
  /* decode_partial_kernel(Q, K, V, Partial, Lse, seq_len, chunk, sm_scale, stride_kb,
   * stride_ks, stride_kh) */
  CHECK_EQ(param_ptr(&l0, 0), 0x100000);
  CHECK_EQ(param_ptr(&l0, 1), 0x200000);
  CHECK_EQ(param_ptr(&l0, 2), 0x300000);
  CHECK_EQ(param_ptr(&l0, 3), ws);
  CHECK_EQ(param_ptr(&l0, 4), ws + partial);
  CHECK_EQ(param_i32(&l0, 5), seq);
  CHECK_EQ(param_i32(&l0, 6), seq / 8);
  memcpy(&scale, l0.param_bytes[7], 4);
  CHECK(scale == 0.088f);
  CHECK_EQ(param_i32(&l0, 8), seq * 32 * 128);
  CHECK_EQ(param_i32(&l0, 9), 32 * 128);
  CHECK_EQ(param_i32(&l0, 10), 128);
  /* decode_reduce_kernel(Partial, Lse, Out): the first launch's intermediates */
  CHECK_EQ(param_ptr(&l1, 0), ws);
  CHECK_EQ(param_ptr(&l1, 1), ws + partial);
  CHECK_EQ(param_ptr(&l1, 2), 0x400000);

  /* a DLPack byte_offset moves the address */
  q.t.byte_offset = 256;
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes),
           CUDA_SUCCESS);
  CHECK(get_launch(before + 2, &l0));
  CHECK_EQ(param_ptr(&l0, 0), 0x100000 + 256);
  q.t.byte_offset = 0;
  before = num_launches();

  /* a guard: v_cache's sequence length must be k_cache's */
  vc.shape[1] = seq - 16;
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes),
           CUDA_ERROR_INVALID_VALUE);
  vc.shape[1] = seq;
  /* stride_kb = 4096 * seq beyond the kernel's int32: refused before either launch */
  kc.shape[1] = vc.shape[1] = (int64_t)1 << 20;
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes),
           CUDA_ERROR_INVALID_VALUE);
  kc.shape[1] = vc.shape[1] = seq;
  /* the output's shape */
  out.shape[0] = batch + 1;
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes),
           CUDA_ERROR_INVALID_VALUE);
  out.shape[0] = batch;
  CHECK_EQ(num_launches(), before);

  /* the second launch fails: its error is returned as it is */
  fail_after("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED, 1);
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)ws, bytes),
           CUDA_ERROR_LAUNCH_FAILED);
  CHECK_EQ(num_launches(), before + 1);
}

/* accumulate_c(x fp32[n], ACC fp32[n]): ACC = torch.zeros, then ACC += x. */
static void test_fill_output(void) {
  tensor x, acc;
  int64_t n = 1000, s[1] = {1000}, bad[1] = {999}, none[1] = {0};
  int launches = num_launches(), memsets = num_memsets();
  size_t bytes = 1;
  fake_cuda_launch l;
  fake_cuda_memset m;
  make(&x, 0x100000, kDLFloat, 32, 1, s);
  make(&acc, 0x300000, kDLFloat, 32, 1, s);
  CHECK_EQ(accumulate_c_workspace_size(&x.t, &bytes), CUDA_SUCCESS);
  CHECK_EQ(bytes, 0);
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_SUCCESS);
  CHECK_EQ(num_memsets(), memsets + 1);
  CHECK_EQ(num_launches(), launches + 1);
  CHECK(get_memset(memsets, &m));
  CHECK(get_launch(launches, &l));
  /* all of ACC (n fp32: n 32-bit words) set to 0.0's bits, on the stream, before the launch */
  CHECK_EQ(m.bits, 32);
  CHECK_EQ(m.two_d, 0);
  CHECK_EQ(m.ptr, 0x300000);
  CHECK_EQ(m.value, 0);
  CHECK_EQ(m.width, n);
  CHECK(m.stream == STREAM);
  CHECK(m.seq < l.seq);
  CHECK_STR(l.name, "accumulate_kernel");
  CHECK_EQ(l.grid[0], 4); /* cdiv(1000, 256) */
  CHECK_EQ(param_ptr(&l, 0), 0x100000);
  CHECK_EQ(param_ptr(&l, 1), 0x300000);
  CHECK_EQ(param_i32(&l, 2), n);
  /* refused (the output's shape, its dtype, an address that is no fp32's, the input's dtype):
   * nothing filled, nothing launched */
  make(&acc, 0x300000, kDLFloat, 32, 1, bad);
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  make(&acc, 0x300000, kDLFloat, 16, 1, s);
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  make(&acc, 0x300002, kDLFloat, 32, 1, s);
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  make(&acc, 0x300000, kDLFloat, 32, 1, s);
  x.t.dtype.bits = 16;
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  x.t.dtype.bits = 32;
  CHECK_EQ(num_memsets(), memsets + 1);
  CHECK_EQ(num_launches(), launches + 1);
  /* a failing memset is returned as it is, and nothing is launched */
  fail_after("cuMemsetD32Async", 0, CUDA_ERROR_ILLEGAL_ADDRESS, 1);
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK_EQ(num_launches(), launches + 1);
  /* n = 0: nothing to fill, an empty grid: success, nothing written or launched */
  make(&x, 0x100000, kDLFloat, 32, 1, none);
  make(&acc, 0x300000, kDLFloat, 32, 1, none);
  CHECK_EQ(accumulate_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_SUCCESS);
  CHECK_EQ(num_memsets(), memsets + 1);
  CHECK_EQ(num_launches(), launches + 1);
}

/* accumulate_twice_c(x fp32[n], ACC fp32[n]): T = torch.full(1.5) (workspace), T += x;
 * ACC = torch.zeros, ACC += T. */
static void test_fill_scratch(void) {
  tensor x, acc;
  int64_t n = 1000, s[1] = {1000}, none[1] = {0};
  const uintptr_t ws = 0x7000000;
  int launches = num_launches(), memsets = num_memsets();
  size_t bytes = 0;
  fake_cuda_launch l0, l1;
  fake_cuda_memset m0, m1;
  make(&x, 0x100000, kDLFloat, 32, 1, s);
  make(&acc, 0x300000, kDLFloat, 32, 1, s);
  CHECK_EQ(accumulate_twice_c_workspace_size(&x.t, &bytes), CUDA_SUCCESS);
  CHECK_EQ(bytes, 4096); /* 4000 bytes rounded up to 256 */
  /* refused (too small a workspace, none): nothing filled, nothing launched */
  CHECK_EQ(accumulate_twice_c(STREAM, &x.t, &acc.t, (void *)ws, bytes - 1),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(accumulate_twice_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(num_memsets(), memsets);
  CHECK_EQ(num_launches(), launches);
  CHECK_EQ(accumulate_twice_c(STREAM, &x.t, &acc.t, (void *)ws, bytes), CUDA_SUCCESS);
  CHECK_EQ(num_memsets(), memsets + 2);
  CHECK_EQ(num_launches(), launches + 2);
  CHECK(get_memset(memsets, &m0));
  CHECK(get_memset(memsets + 1, &m1));
  CHECK(get_launch(launches, &l0));
  CHECK(get_launch(launches + 1, &l1));
  /* the scratch (1.5f is 0x3fc00000) and the output (0.0), both before the first launch */
  CHECK_EQ(m0.ptr, ws);
  CHECK_EQ(m0.bits, 32);
  CHECK_EQ(m0.value, 0x3fc00000u);
  CHECK_EQ(m0.width, n);
  CHECK_EQ(m1.ptr, 0x300000);
  CHECK_EQ(m1.value, 0);
  CHECK_EQ(m1.width, n);
  CHECK(m0.stream == STREAM && m1.stream == STREAM);
  CHECK(m0.seq < m1.seq && m1.seq < l0.seq && l0.seq < l1.seq);
  CHECK_EQ(param_ptr(&l0, 0), 0x100000);
  CHECK_EQ(param_ptr(&l0, 1), ws);
  CHECK_EQ(param_ptr(&l1, 0), ws);
  CHECK_EQ(param_ptr(&l1, 1), 0x300000);
  CHECK_EQ(param_i32(&l1, 2), n);
  /* n = 0: a workspace of 0 bytes, taken as (NULL, 0) as the header says; nothing to fill, the
   * empty grids launch nothing */
  make(&x, 0x100000, kDLFloat, 32, 1, none);
  make(&acc, 0x300000, kDLFloat, 32, 1, none);
  bytes = 1;
  CHECK_EQ(accumulate_twice_c_workspace_size(&x.t, &bytes), CUDA_SUCCESS);
  CHECK_EQ(bytes, 0);
  CHECK_EQ(accumulate_twice_c(STREAM, &x.t, &acc.t, NULL, 0), CUDA_SUCCESS);
  CHECK_EQ(num_memsets(), memsets + 2);
  CHECK_EQ(num_launches(), launches + 2);
}

/* Decode attention at batch 0: its intermediates are empty, the workspace 0 bytes: (NULL, 0)
 * is taken, and both grids (32 * batch) are empty: success with nothing launched. */
static void test_decode_attention_empty(void) {
  tensor q, kc, vc, out;
  int64_t qs[3] = {0, 32, 128}, cs[4] = {0, 4096, 32, 128};
  size_t bytes = 1;
  int before = num_launches();
  make(&q, 0x100000, kDLBfloat, 16, 3, qs);
  make(&kc, 0x200000, kDLBfloat, 16, 4, cs);
  make(&vc, 0x300000, kDLBfloat, 16, 4, cs);
  make(&out, 0x400000, kDLBfloat, 16, 3, qs);
  CHECK_EQ(decode_attention_c_workspace_size(&q.t, &kc.t, &vc.t, &bytes), CUDA_SUCCESS);
  CHECK_EQ(bytes, 0);
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, NULL, 0), CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before);
  /* a workspace given anyway, of any size and alignment, is not read */
  CHECK_EQ(decode_attention_c(STREAM, &q.t, &kc.t, &vc.t, 0.088f, &out.t, (void *)0x7000010, 16),
           CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before);
}

static void test_swiglu(void) {
  tensor a, b, c;
  int64_t s[2] = {16, 4096};
  int before = num_launches();
  make(&a, 0x100000, kDLBfloat, 16, 2, s);
  make(&b, 0x200000, kDLBfloat, 16, 2, s);
  make(&c, 0x300000, kDLBfloat, 16, 2, s);
  CHECK_EQ(liger_swiglu_c(STREAM, &a.t, &b.t, 1.0f, &c.t, NULL, 0), CUDA_SUCCESS);
  CHECK_EQ(num_launches(), before + 1);
  /* b's rows must be a's */
  b.shape[0] = 8;
  CHECK_EQ(liger_swiglu_c(STREAM, &a.t, &b.t, 1.0f, &c.t, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(num_launches(), before + 1);
}

int main(void) {
  void (*reset)(void);
  void (*set_device)(int, int, int, int);
  CUcontext (*create_context)(int);
  void (*set_current)(CUcontext);
  void (*set_elf_params)(const char *, int, const unsigned *);
  static const unsigned partial_params[11] = {8, 8, 8, 8, 8, 4, 4, 4, 4, 4, 4};
  static const unsigned reduce_params[3] = {8, 8, 8};
  static const unsigned accumulate_params[3] = {8, 8, 4};
  fake = dlopen("libcuda.so.1", RTLD_NOW);
  if (fake == NULL) {
    fprintf(stderr, "cannot open the fake libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  *(void **)&reset = sym("fake_cuda_reset");
  *(void **)&set_device = sym("fake_cuda_set_device");
  *(void **)&create_context = sym("fake_cuda_create_context");
  *(void **)&set_current = sym("fake_cuda_set_current");
  *(void **)&set_elf_params = sym("fake_cuda_set_elf_params");
  *(void **)&num_launches = sym("fake_cuda_num_launches");
  *(void **)&get_launch = sym("fake_cuda_get_launch");
  *(void **)&fail_after = sym("fake_cuda_fail_after");
  *(void **)&num_memsets = sym("fake_cuda_num_memsets");
  *(void **)&get_memset = sym("fake_cuda_get_memset");
  reset();
  set_device(0, 9, 0, 232448);
  set_current(create_context(0));
  /* the kernels' own parameters (their scratch pointers follow and are not recorded) */
  set_elf_params("decode_partial_kernel", 11, partial_params);
  set_elf_params("decode_reduce_kernel", 3, reduce_params);
  set_elf_params("accumulate_kernel", 3, accumulate_params);

  test_rms_scale_algos();
  test_refusals();
  test_rope_strides();
  test_swiglu();
  test_decode_attention();
  test_decode_attention_empty();
  test_fill_output();
  test_fill_scratch();
  printf("ok\n");
  return 0;
}
