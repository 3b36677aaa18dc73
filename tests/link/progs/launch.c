/* Launch-only arguments and device attributes in grids (the `rows` library of libs.py):
 *   rows(stream, out_ptr, n_cols, n_rows, tiles, algo_id)
 * algo 0: grid (n_rows)                     algo 1: grid (min(NUM_SMS, tiles))
 * algo 2: grid (cdiv(n_rows, 2) * tiles)    algo 3: grid (max(n_cols, tiles), NUM_SMS * 2)
 * The launch arguments are C parameters only: the kernel gets out_ptr, n_cols and the two scratch
 * pointers. NUM_SMS is read once per context (fake_cuda_sm_count_reads). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define OUT ((CUdeviceptr)0x300000)
#define STREAM ((CUstream)0x77)

static fake_cuda_launch launch_ok(int algo, int32_t n_cols, int32_t n_rows, int64_t tiles) {
  int before = fake_cuda_num_launches();
  CHECK_EQ(rows(STREAM, OUT, n_cols, n_rows, tiles, algo), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), before + 1);
  return last_launch();
}

static void launch_refused(int algo, int32_t n_cols, int32_t n_rows, int64_t tiles, CUresult want) {
  int before = fake_cuda_num_launches();
  CHECK_EQ(rows(STREAM, OUT, n_cols, n_rows, tiles, algo), want);
  CHECK_EQ(fake_cuda_num_launches(), before);
}

#define THREADS 16
static pthread_barrier_t barrier;
static CUcontext thread_ctx;
static CUresult results[THREADS];
static unsigned int grids[THREADS];

static void *worker(void *arg) {
  int i = (int)(intptr_t)arg;
  fake_cuda_set_current(thread_ctx);
  pthread_barrier_wait(&barrier);
  results[i] = rows(STREAM, OUT, 3, 10, 1000, 1);
  return NULL;
}

int main(void) {
  fake_cuda_launch l;
  CUcontext ctx0, ctx0b, ctx1, ctx_fail;
  int i;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  fake_cuda_set_num_sms(0, 132);
  fake_cuda_set_device(1, 9, 0, 232448);
  fake_cuda_set_num_sms(1, 8);
  ctx0 = fake_cuda_create_context(0);
  ctx0b = fake_cuda_create_context(0);
  ctx1 = fake_cuda_create_context(1);
  ctx_fail = fake_cuda_create_context(1);
  fake_cuda_set_current(ctx0);

  /* row-wise: the grid is the launch argument; the kernel gets out_ptr and n_cols only */
  l = launch_ok(0, 5, 1000, 7);
  CHECK_STR(l.tag, "rows_a0_gen");
  CHECK_EQ(l.grid[0], 1000);
  CHECK_EQ(l.grid[1], 1);
  CHECK_EQ(l.num_params, 4); /* out_ptr, n_cols, global and profile scratch */
  CHECK_EQ(param_u64(&l, 0), OUT);
  CHECK_EQ(param_u64(&l, 1), 5);
  l = launch_ok(0, 32, 3, 7);
  CHECK_STR(l.tag, "rows_a0_d16"); /* hints still dispatch on the kernel's arguments */
  CHECK_EQ(l.grid[0], 3);
  CHECK_EQ(param_u64(&l, 1), 32);
  /* empty grid: success, nothing launched; a negative launch argument: refused */
  launch_refused(0, 5, 0, 7, CUDA_SUCCESS);
  launch_refused(0, 5, -1, 7, CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_sm_count_reads(0), 0); /* no grid read NUM_SMS yet */

  /* persistent: min(NUM_SMS, tiles), NUM_SMS read once per context */
  l = launch_ok(1, 5, 1, 7);
  CHECK_EQ(l.grid[0], 7);
  l = launch_ok(1, 5, 1, 100000);
  CHECK_EQ(l.grid[0], 132);
  l = launch_ok(3, 5, 1, 9);
  CHECK_EQ(l.grid[0], 9);
  CHECK_EQ(l.grid[1], 264);
  CHECK_EQ(fake_cuda_sm_count_reads(0), 1);
  launch_refused(1, 5, 1, 0, CUDA_SUCCESS);
  launch_refused(1, 5, 1, -3, CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_sm_count_reads(0), 1);

  /* another device: its own SM count */
  fake_cuda_set_current(ctx1);
  l = launch_ok(1, 5, 1, 100000);
  CHECK_EQ(l.grid[0], 8);
  CHECK_EQ(fake_cuda_sm_count_reads(1), 1);
  /* another context on device 0: read again (once per context) */
  fake_cuda_set_current(ctx0b);
  l = launch_ok(1, 5, 1, 100000);
  CHECK_EQ(l.grid[0], 132);
  l = launch_ok(1, 5, 1, 100000);
  CHECK_EQ(fake_cuda_sm_count_reads(0), 2);
  fake_cuda_set_current(ctx0);
  l = launch_ok(1, 5, 1, 100000);
  CHECK_EQ(fake_cuda_sm_count_reads(0), 2);

  /* overflow in launch-argument arithmetic: refused, nothing launched */
  l = launch_ok(2, 5, 9, 3);
  CHECK_EQ(l.grid[0], 15);
  launch_refused(2, 5, 2000000000, INT64_MAX / 2, CUDA_ERROR_INVALID_VALUE);
  launch_refused(2, 5, 2, (int64_t)1 << 32, CUDA_ERROR_INVALID_VALUE); /* beyond 32 bits */
  launch_refused(3, 5, 1, INT64_MIN, CUDA_ERROR_INVALID_VALUE);

  /* a failed attribute read is returned unchanged, launches nothing, and is not cached */
  fake_cuda_set_current(ctx_fail);
  fake_cuda_fail("cuDeviceGetAttribute", CUDA_ERROR_ILLEGAL_STATE, 1);
  {
    int reads = fake_cuda_sm_count_reads(1);
    launch_refused(1, 5, 1, 100000, CUDA_ERROR_ILLEGAL_STATE);
    l = launch_ok(1, 5, 1, 100000);
    CHECK_EQ(l.grid[0], 8);
    CHECK_EQ(fake_cuda_sm_count_reads(1), reads + 1);
  }
  /* no context: the attribute cannot be read */
  fake_cuda_set_current(NULL);
  launch_refused(1, 5, 1, 100000, CUDA_ERROR_INVALID_CONTEXT);

  /* 16 threads launching first in a fresh context read NUM_SMS once */
  thread_ctx = fake_cuda_create_context(0);
  {
    int reads = fake_cuda_sm_count_reads(0);
    int before = fake_cuda_num_launches();
    pthread_t t[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (i = 0; i < THREADS; ++i)
      CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
    for (i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    for (i = 0; i < THREADS; ++i) CHECK_EQ(results[i], CUDA_SUCCESS);
    CHECK_EQ(fake_cuda_num_launches(), before + THREADS);
    for (i = 0; i < THREADS; ++i) {
      CHECK(fake_cuda_get_launch(before + i, &l));
      grids[i] = l.grid[0];
      CHECK_EQ(grids[i], 132);
    }
    CHECK_EQ(fake_cuda_sm_count_reads(0), reads + 1);
  }

  CHECK_STR(rows_get_algo_info(3), "BLOCK=512 num_warps=4 num_stages=3 maxnreg=128");
  puts("OK");
  return 0;
}
