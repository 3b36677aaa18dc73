/* Host tensor descriptors against the fake driver (the `tma` library of libs.py):
 *   tma(stream, a_desc_base, a_desc_shape0, a_desc_shape1, a_desc_stride0, a_desc_stride1,
 *       c_desc_base, c_desc_shape0, c_desc_stride0, n, scale, algo_id)
 * a_desc: tensordesc<fp16[64, 32]> (64-byte swizzle), c_desc: tensordesc<fp32[512]> (box 256).
 * Checks the arguments of cuTensorMapEncodeTiled (the fake records them), the kernel parameters
 * (map, shape as int32, strides as int64), the per-launcher cache (one encode for repeated calls,
 * a new one when pointer, shape or strides change), and the refusals (misaligned base, strides
 * that are not multiples of 16 bytes, a last stride other than 1, dimensions outside
 * [1, INT32_MAX]): CUDA_ERROR_INVALID_VALUE and no launch, no encode. With argument "3d", the
 * `tma3d` library instead: a 3-D bf16 descriptor with a 128-byte swizzle. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define A ((CUdeviceptr)0x500000)
#define C ((CUdeviceptr)0x600000)
#define STREAM ((CUstream)0x77)
#define ENCODE "cuTensorMapEncodeTiled"

static fake_cuda_tma_encode last_encode(void) {
  fake_cuda_tma_encode e;
  CHECK(fake_cuda_num_tma_encodes() > 0);
  CHECK(fake_cuda_get_tma_encode(fake_cuda_num_tma_encodes() - 1, &e));
  return e;
}

/* The launch got the map of encode `e`: its first 8 bytes are the fake's magic | seq. */
static void check_map(const fake_cuda_launch *l, int param, const fake_cuda_tma_encode *e) {
  CHECK_EQ(l->param_size[param], 128);
  CHECK_EQ(param_u64(l, param), FAKE_CUDA_TMA_MAGIC | (unsigned long long)e->seq);
}

#ifdef TMA3D
/* tma3d(stream, x_desc_base, x_desc_shape0..2, x_desc_stride0..2, algo_id) */
int main(void) {
  fake_cuda_launch l;
  fake_cuda_tma_encode e;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  fake_cuda_set_current(fake_cuda_create_context(0));
  CHECK_EQ(tma3d(STREAM, A, 4, 48, 640, 48 * 640, 640, 1, 0), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_tma_encodes(), 1);
  e = last_encode();
  CHECK_EQ(e.data_type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CHECK_EQ(e.rank, 3);
  CHECK_EQ(e.dims[0], 640);
  CHECK_EQ(e.dims[1], 48);
  CHECK_EQ(e.dims[2], 4);
  CHECK_EQ(e.strides[0], 640 * 2);
  CHECK_EQ(e.strides[1], 48 * 640 * 2);
  CHECK_EQ(e.box[0], 64);
  CHECK_EQ(e.box[1], 16);
  CHECK_EQ(e.box[2], 2);
  CHECK_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  l = last_launch();
  CHECK_EQ(l.grid[0], 4); /* the grid reads the descriptor's shape: (shape0, cdiv(shape1, 16)) */
  CHECK_EQ(l.grid[1], 3);
  CHECK_EQ(l.num_params, 1 + 3 + 3 + 2);
  check_map(&l, 0, &e);
  CHECK_EQ(param_u64(&l, 3), 640);
  CHECK_EQ(param_u64(&l, 4), 48 * 640);
  CHECK_EQ(param_u64(&l, 6), 1);
  /* middle stride misaligned: 48 * 640 + 1 elements */
  CHECK_EQ(tma3d(STREAM, A, 4, 48, 640, 48 * 640 + 1, 640, 1, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_num_launches(), 1);
  CHECK_EQ(fake_cuda_call_count(ENCODE), 1);
  printf("OK\n");
  return 0;
}
#else

typedef struct call {
  CUdeviceptr a;
  int64_t a_shape[2], a_strides[2];
  CUdeviceptr c;
  int64_t c_shape, c_stride;
  int32_t n;
} call_t;

static call_t good(void) {
  call_t c = {A, {100, 200}, {264, 1}, C, 1000, 1, 48};
  return c;
}

static CUresult launch(const call_t *c) {
  return tma(STREAM, c->a, c->a_shape[0], c->a_shape[1], c->a_strides[0], c->a_strides[1], c->c,
             c->c_shape, c->c_stride, c->n, 0.5f, 0);
}

static fake_cuda_launch launch_ok(const call_t *c, int want_encodes) {
  int before = fake_cuda_num_launches(), encodes = fake_cuda_call_count(ENCODE);
  CHECK_EQ(launch(c), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), before + 1);
  CHECK_EQ(fake_cuda_call_count(ENCODE), encodes + want_encodes);
  return last_launch();
}

/* Refused before the driver is asked to encode: nothing launched. */
static void launch_refused(const call_t *c) {
  int before = fake_cuda_num_launches(), encodes = fake_cuda_call_count(ENCODE);
  CHECK_EQ(launch(c), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_num_launches(), before);
  CHECK_EQ(fake_cuda_call_count(ENCODE), encodes);
}

#define THREADS 8
static CUcontext thread_ctx;
static pthread_barrier_t barrier;
static CUresult results[THREADS];

static void *worker(void *arg) {
  call_t c = good();
  int i = (int)(intptr_t)arg, k;
  c.a = A + 0x10000 * (CUdeviceptr)i; /* each thread its own tensor */
  fake_cuda_set_current(thread_ctx);
  pthread_barrier_wait(&barrier);
  for (k = 0; k < 50 && results[i] == CUDA_SUCCESS; ++k) results[i] = launch(&c);
  return NULL;
}

int main(void) {
  fake_cuda_launch l;
  fake_cuda_tma_encode e, ea;
  call_t c;
  int i, encodes;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  thread_ctx = fake_cuda_create_context(0);
  fake_cuda_set_current(thread_ctx);

  /* first call: both descriptors encoded, exactly as Triton's launcher fills them */
  c = good();
  l = launch_ok(&c, 2);
  CHECK_STR(l.tag, "tma_d16"); /* n = 48: the n%16 variant */
  CHECK_EQ(fake_cuda_num_tma_encodes(), 2);
  CHECK(fake_cuda_get_tma_encode(0, &ea));
  CHECK_EQ(ea.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  CHECK_EQ(ea.rank, 2);
  CHECK_EQ(ea.address, A);
  CHECK_EQ(ea.dims[0], 200); /* innermost first */
  CHECK_EQ(ea.dims[1], 100);
  CHECK_EQ(ea.strides[0], 264 * 2); /* bytes */
  CHECK_EQ(ea.box[0], 32);
  CHECK_EQ(ea.box[1], 64);
  CHECK_EQ(ea.elem_strides[0], 1);
  CHECK_EQ(ea.elem_strides[1], 1);
  CHECK_EQ(ea.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  CHECK_EQ(ea.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
  CHECK_EQ(ea.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  CHECK_EQ(ea.oob_fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  e = last_encode();
  CHECK_EQ(e.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  CHECK_EQ(e.rank, 1);
  CHECK_EQ(e.address, C);
  CHECK_EQ(e.dims[0], 1000);
  CHECK_EQ(e.box[0], 256); /* Triton's box, not the block 512 */
  CHECK_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  /* kernel parameters: map, shape (i32), strides (i64) per descriptor, then n, scale, scratch */
  CHECK_EQ(l.num_params, 12);
  check_map(&l, 0, &ea);
  CHECK_EQ(l.param_size[1], 4);
  CHECK_EQ(param_u64(&l, 1), 100);
  CHECK_EQ(param_u64(&l, 2), 200);
  CHECK_EQ(l.param_size[3], 8);
  CHECK_EQ(param_u64(&l, 3), 264);
  CHECK_EQ(param_u64(&l, 4), 1);
  check_map(&l, 5, &e);
  CHECK_EQ(param_u64(&l, 6), 1000);
  CHECK_EQ(param_u64(&l, 7), 1);
  CHECK_EQ(param_u64(&l, 8), 48);

  /* the same call again: both maps reused, no encode */
  l = launch_ok(&c, 0);
  check_map(&l, 0, &ea);
  check_map(&l, 5, &e);
  /* a new pointer, shape or stride of one descriptor: only that one is encoded again */
  c.a = A + 256;
  l = launch_ok(&c, 1);
  e = last_encode();
  CHECK_EQ(e.address, A + 256);
  check_map(&l, 0, &e);
  c.a_shape[0] = 101;
  l = launch_ok(&c, 1);
  CHECK_EQ(last_encode().dims[1], 101);
  CHECK_EQ(param_u64(&l, 1), 101);
  c.a_strides[0] = 272;
  l = launch_ok(&c, 1);
  CHECK_EQ(last_encode().strides[0], 544);
  launch_ok(&c, 0);
  c.c_shape = 999;
  l = launch_ok(&c, 1);
  e = last_encode();
  CHECK_EQ(e.dims[0], 999);
  check_map(&l, 5, &e);
  launch_ok(&c, 0);
  /* the other variant (n not divisible by 16) has its own cache */
  c.n = 47;
  l = launch_ok(&c, 2);
  CHECK_STR(l.tag, "tma_gen");
  launch_ok(&c, 0);

  /* what TMA cannot address: refused before the driver is asked, nothing launched, and the
   * cached maps of good() stay */
  c = good();
  launch_ok(&c, 2);
  c.a = A + 8; /* base not 16-byte aligned */
  launch_refused(&c);
  c = good();
  c.c = C + 4;
  launch_refused(&c);
  c = good();
  c.a_strides[0] = 260; /* 520 bytes: not a multiple of 16 */
  launch_refused(&c);
  c = good();
  c.a_strides[1] = 2; /* last dimension not contiguous */
  launch_refused(&c);
  c = good();
  c.c_stride = 0;
  launch_refused(&c);
  c = good();
  c.a_strides[0] = -264;
  launch_refused(&c);
  c = good();
  c.a_strides[0] = (int64_t)1 << 39; /* 2^40 bytes: beyond TMA's stride limit */
  launch_refused(&c);
  c = good();
  c.a_shape[1] = 0;
  launch_refused(&c);
  c = good();
  c.a_shape[0] = (int64_t)INT32_MAX + 1; /* the kernel gets the shape as int32 */
  launch_refused(&c);
  c = good();
  c.c_shape = -5;
  launch_refused(&c);

  c = good();
  launch_ok(&c, 0);

  /* algo 1: a_desc's block is [128, 32] (a per-algo block shape): its own box and cache */
  encodes = fake_cuda_call_count(ENCODE);
  CHECK_EQ(tma(STREAM, c.a, c.a_shape[0], c.a_shape[1], c.a_strides[0], c.a_strides[1], c.c,
               c.c_shape, c.c_stride, c.n, 0.5f, 1), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_call_count(ENCODE), encodes + 2);
  CHECK(fake_cuda_get_tma_encode(fake_cuda_num_tma_encodes() - 2, &e));
  CHECK_EQ(e.box[0], 32);
  CHECK_EQ(e.box[1], 128);
  l = last_launch();
  CHECK_STR(l.tag, "tma_a1");

  /* an empty grid (n = 0): CUDA_SUCCESS, nothing encoded or launched, even for empty tensors */
  c = good();
  c.n = 0;
  c.a = 0;
  c.a_shape[0] = 0;
  c.c_shape = 0;
  encodes = fake_cuda_call_count(ENCODE);
  i = fake_cuda_num_launches();
  CHECK_EQ(launch(&c), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), i);
  CHECK_EQ(fake_cuda_call_count(ENCODE), encodes);
  c = good();

  /* the driver's own refusal is returned unchanged, launches nothing and is not cached */
  c.a = A + 512;
  fake_cuda_fail(ENCODE, CUDA_ERROR_INVALID_VALUE, 1);
  i = fake_cuda_num_launches();
  CHECK_EQ(launch(&c), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_num_launches(), i);
  l = launch_ok(&c, 1);
  e = last_encode();
  CHECK_EQ(e.address, A + 512);
  check_map(&l, 0, &e);

  /* threads: each keeps its own cached maps (no lock on reuse) and launches its own tensor */
  encodes = fake_cuda_call_count(ENCODE);
  i = fake_cuda_num_launches();
  pthread_barrier_init(&barrier, NULL, THREADS);
  {
    pthread_t t[THREADS];
    int k;
    for (k = 0; k < THREADS; ++k) CHECK(pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k) == 0);
    for (k = 0; k < THREADS; ++k) CHECK(pthread_join(t[k], NULL) == 0);
    for (k = 0; k < THREADS; ++k) CHECK_EQ(results[k], CUDA_SUCCESS);
  }
  pthread_barrier_destroy(&barrier);
  CHECK_EQ(fake_cuda_num_launches(), i + THREADS * 50);
  CHECK_EQ(fake_cuda_call_count(ENCODE), encodes + 2 * THREADS); /* once per thread and map */
  for (; i < fake_cuda_num_launches(); ++i) {
    fake_cuda_tma_encode te;
    unsigned long long seq;
    CHECK(fake_cuda_get_launch(i, &l));
    seq = param_u64(&l, 0) & ~FAKE_CUDA_TMA_MAGIC;
    CHECK(seq > 0);
    /* the map a launch got encodes the tensor its thread passed: find that encode */
    {
      int k, found = 0;
      for (k = 0; k < fake_cuda_num_tma_encodes(); ++k) {
        CHECK(fake_cuda_get_tma_encode(k, &te));
        if ((unsigned long long)te.seq == seq) {
          found = 1;
          CHECK((te.address - A) % 0x10000 == 0 && (te.address - A) / 0x10000 < THREADS);
        }
      }
      CHECK(found);
    }
  }
  printf("OK\n");
  return 0;
}
#endif
