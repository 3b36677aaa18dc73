/* 32 threads call a kernel for the first time at once (module loads slowed down to widen the
 * race): exactly one load per variant and context, every launch succeeds. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include <pthread.h>
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define THREADS 32
#define A ((CUdeviceptr)0x100000)

static pthread_barrier_t barrier;
static CUcontext contexts[2];
static int algo_for_phase;
static CUresult results[THREADS];

static void *worker(void *arg) {
  int i = (int)(intptr_t)arg;
  /* phase 1: one context for all; phase 2: two contexts, 16 threads each */
  fake_cuda_set_current(contexts[algo_for_phase == 0 ? 0 : i % 2]);
  pthread_barrier_wait(&barrier);
  results[i] = add(NULL, A, A, A, 1024, 1, algo_for_phase);
  return NULL;
}

static void run_phase(int algo) {
  pthread_t t[THREADS];
  int i;
  algo_for_phase = algo;
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (i = 0; i < THREADS; ++i) CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
  for (i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
  for (i = 0; i < THREADS; ++i) CHECK_EQ(results[i], CUDA_SUCCESS);
}

int main(void) {
  fake_cuda_reset();
  fake_cuda_set_load_delay_us(20000);
  contexts[0] = fake_cuda_create_context(0);
  contexts[1] = fake_cuda_create_context(0);

  run_phase(0);
  CHECK_EQ(fake_cuda_num_launches(), THREADS);
  CHECK_EQ(count_loads("add_a0_d16s1_sm90", NULL), 1);
  CHECK_EQ(fake_cuda_num_loads(), 1);

  run_phase(1);
  CHECK_EQ(fake_cuda_num_launches(), 2 * THREADS);
  CHECK_EQ(count_loads("add_a1_d16_sm90", contexts[0]), 1);
  CHECK_EQ(count_loads("add_a1_d16_sm90", contexts[1]), 1);
  CHECK_EQ(fake_cuda_num_loads(), 3);
  printf("OK\n");
  return 0;
}
