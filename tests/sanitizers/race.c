/* Concurrency of the generated runtime against the fake driver, built with -fsanitize=thread or
 * -fsanitize=address,undefined (tests/sanitizers/test_sanitizers.py builds and runs it).
 *
 * The library `add` (x, y, out: *fp32, n: i32, BLOCK) has algo 0 = {aligned, generic} variants
 * and algo 1 = one generic variant that needs 64 KiB of shared memory and a global scratch
 * buffer (so the attribute and cuMemAllocAsync/cuMemFreeAsync paths run too), each for sm_80 and
 * sm_90. Scenarios, each printing "PASS <name>":
 *   first_call_32     32 threads call first at once in one context (loads slowed down): one
 *                     load per variant, every launch succeeds;
 *   two_contexts_32   32 threads over three contexts on two devices (sm_90, sm_80) call first
 *                     at once, both algos;
 *   load_unload_race  contexts A and B: 4 threads each load_add()/unload_add() in a loop (what
 *                     docs/design.md allows: no launch in a context where another thread
 *                     unloads); context C: 8 threads launch all along;
 *   unload_one_ctx    two contexts on one GPU: launches in both, unload in one (while 8 threads
 *                     keep launching in the other, and the unloading thread alternates launch
 *                     and unload in its own context): the other never reloads and keeps working;
 *   no_context        calls from threads without a current context fail cleanly.
 * Run one scenario per process (`race NAME`): fake_cuda_reset() hands out context ids and
 * pointers again, which the real driver never does, so scenarios must not share the caches.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "add.h"
#include "fake_cuda.h"

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);             \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)
#define CHECK_EQ(a, b)                                                                   \
  do {                                                                                   \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                \
    if (va_ != vb_) {                                                                    \
      fprintf(stderr, "FAIL %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, \
              va_, vb_);                                                                 \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

#define ALIGNED ((CUdeviceptr)0x100000)
#define N 4096
#define MAX_THREADS 32

static int count_loads(const char *tag, CUcontext ctx) {
  int i, n = 0;
  for (i = 0; i < fake_cuda_num_loads(); ++i) {
    fake_cuda_load l;
    CHECK(fake_cuda_get_load(i, &l));
    if ((tag == NULL || strcmp(l.tag, tag) == 0) && (ctx == NULL || l.ctx == ctx)) ++n;
  }
  return n;
}

static int count_launches(CUcontext ctx) {
  int i, n = 0;
  for (i = 0; i < fake_cuda_num_launches(); ++i) {
    fake_cuda_launch l;
    CHECK(fake_cuda_get_launch(i, &l));
    if (ctx == NULL || l.ctx == ctx) ++n;
  }
  return n;
}

/* ---- a tiny thread pool: run fn(i) on n threads released together by a barrier ---------- */

typedef void (*job_fn)(int);
static pthread_barrier_t g_barrier;
static job_fn g_job;

static void *trampoline(void *arg) {
  int i = (int)(intptr_t)arg;
  pthread_barrier_wait(&g_barrier);
  g_job(i);
  return NULL;
}

static void run_threads(int n, job_fn fn) {
  pthread_t t[MAX_THREADS];
  int i;
  g_job = fn;
  CHECK(pthread_barrier_init(&g_barrier, NULL, (unsigned)n) == 0);
  for (i = 0; i < n; ++i) CHECK(pthread_create(&t[i], NULL, trampoline, (void *)(intptr_t)i) == 0);
  for (i = 0; i < n; ++i) CHECK(pthread_join(t[i], NULL) == 0);
  pthread_barrier_destroy(&g_barrier);
}

/* ---- first_call_32 ----------------------------------------------------------------------- */

static CUcontext g_ctx[3];
static CUresult g_result[MAX_THREADS];

static void first_call(int i) {
  fake_cuda_set_current(g_ctx[0]);
  g_result[i] = add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0);
}

static void scenario_first_call_32(void) {
  int i;
  fake_cuda_reset();
  fake_cuda_set_load_delay_us(20000);
  g_ctx[0] = fake_cuda_create_context(0);
  run_threads(32, first_call);
  for (i = 0; i < 32; ++i) CHECK_EQ(g_result[i], CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), 32);
  CHECK_EQ(count_loads("add_a0_s0_sm90", g_ctx[0]), 1);
  CHECK_EQ(fake_cuda_num_loads(), 1);
  printf("PASS first_call_32\n");
}

/* ---- two_contexts_32 --------------------------------------------------------------------- */

static void two_contexts(int i) {
  fake_cuda_set_current(g_ctx[i % 3]);
  g_result[i] = add(NULL, ALIGNED + 4, ALIGNED, ALIGNED, N + 1, (i / 3) % 2);
}

static void scenario_two_contexts_32(void) {
  int i;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  fake_cuda_set_device(1, 8, 0, 166912);
  fake_cuda_set_load_delay_us(10000);
  g_ctx[0] = fake_cuda_create_context(0);
  g_ctx[1] = fake_cuda_create_context(0);
  g_ctx[2] = fake_cuda_create_context(1);
  run_threads(32, two_contexts);
  for (i = 0; i < 32; ++i) CHECK_EQ(g_result[i], CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), 32);
  CHECK_EQ(count_loads("add_a0_s1_sm90", g_ctx[0]), 1);
  CHECK_EQ(count_loads("add_a1_s0_sm90", g_ctx[0]), 1);
  CHECK_EQ(count_loads("add_a0_s1_sm90", g_ctx[1]), 1);
  CHECK_EQ(count_loads("add_a1_s0_sm90", g_ctx[1]), 1);
  CHECK_EQ(count_loads("add_a0_s1_sm80", g_ctx[2]), 1);
  CHECK_EQ(count_loads("add_a1_s0_sm80", g_ctx[2]), 1);
  CHECK_EQ(fake_cuda_num_loads(), 6);
  /* one reusable scratch buffer per context's (legacy) stream (drivers with stream ids), else
   * every per-launch buffer freed */
  CHECK_EQ(fake_cuda_live_allocations(), fake_cuda_has_stream_ids() ? 3 : 0);
  printf("PASS two_contexts_32\n");
}

/* ---- load_unload_race -------------------------------------------------------------------- */

#define LOOPS 60
static int g_failures;
static pthread_mutex_t g_fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail_once(const char *what, CUresult r) {
  pthread_mutex_lock(&g_fail_lock);
  if (g_failures++ == 0) fprintf(stderr, "FAIL %s returned %d\n", what, (int)r);
  pthread_mutex_unlock(&g_fail_lock);
}

static void load_unload_or_launch(int i) {
  int k;
  if (i < 8) { /* contexts A (0..3) and B (4..7): load and unload, never launch */
    fake_cuda_set_current(g_ctx[i / 4]);
    for (k = 0; k < LOOPS; ++k) {
      CUresult r = load_add();
      if (r != CUDA_SUCCESS) fail_once("load_add", r);
      r = unload_add();
      if (r != CUDA_SUCCESS) fail_once("unload_add", r);
    }
  } else { /* context C: launches only */
    fake_cuda_set_current(g_ctx[2]);
    for (k = 0; k < LOOPS; ++k) {
      CUresult r = add(NULL, (k % 4 < 2) ? ALIGNED : ALIGNED + 4, ALIGNED, ALIGNED, N, k % 2);
      if (r != CUDA_SUCCESS) fail_once("add", r);
    }
  }
}

static void scenario_load_unload_race(void) {
  fake_cuda_reset();
  fake_cuda_set_load_delay_us(200);
  g_ctx[0] = fake_cuda_create_context(0);
  g_ctx[1] = fake_cuda_create_context(0);
  g_ctx[2] = fake_cuda_create_context(0);
  g_failures = 0;
  run_threads(16, load_unload_or_launch);
  CHECK_EQ(g_failures, 0);
  CHECK_EQ(count_launches(g_ctx[2]), 8 * LOOPS);
  CHECK_EQ(count_launches(g_ctx[0]) + count_launches(g_ctx[1]), 0);
  /* context C loaded each of its variants exactly once, and still has them */
  CHECK_EQ(count_loads("add_a0_s0_sm90", g_ctx[2]), 1);
  CHECK_EQ(count_loads("add_a0_s1_sm90", g_ctx[2]), 1);
  CHECK_EQ(count_loads("add_a1_s0_sm90", g_ctx[2]), 1);
  CHECK_EQ(fake_cuda_live_modules(NULL, g_ctx[2]), 3);
  /* A and B end with nothing loaded after one last unload */
  fake_cuda_set_current(g_ctx[0]);
  CHECK_EQ(unload_add(), CUDA_SUCCESS);
  fake_cuda_set_current(g_ctx[1]);
  CHECK_EQ(unload_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules(NULL, g_ctx[0]), 0);
  CHECK_EQ(fake_cuda_live_modules(NULL, g_ctx[1]), 0);
  CHECK_EQ(fake_cuda_live_allocations(), fake_cuda_has_stream_ids() ? 1 : 0); /* C's buffer */
  printf("PASS load_unload_race\n");
}

/* ---- unload_one_ctx ------------------------------------------------------------------------ */

static void other_context_keeps_launching(int i) {
  int k;
  if (i == 0) { /* context 0: launch then unload, alternately, on this one thread */
    fake_cuda_set_current(g_ctx[0]);
    for (k = 0; k < LOOPS; ++k) {
      CUresult r = add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0);
      if (r != CUDA_SUCCESS) fail_once("add in the unloading context", r);
      r = unload_add();
      if (r != CUDA_SUCCESS) fail_once("unload_add", r);
    }
    return;
  }
  fake_cuda_set_current(g_ctx[1]);
  for (k = 0; k < LOOPS; ++k) {
    CUresult r = add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0);
    if (r != CUDA_SUCCESS) fail_once("add in the other context", r);
  }
}

static void scenario_unload_one_ctx(void) {
  fake_cuda_reset();
  g_ctx[0] = fake_cuda_create_context(0);
  g_ctx[1] = fake_cuda_create_context(0);
  /* sequential first: launch in both, unload in 0, 1 keeps its module */
  fake_cuda_set_current(g_ctx[0]);
  CHECK_EQ(add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0), CUDA_SUCCESS);
  fake_cuda_set_current(g_ctx[1]);
  CHECK_EQ(add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0), CUDA_SUCCESS);
  fake_cuda_set_current(g_ctx[0]);
  CHECK_EQ(unload_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules(NULL, g_ctx[0]), 0);
  CHECK_EQ(fake_cuda_live_modules("add_a0_s0_sm90", g_ctx[1]), 1);
  fake_cuda_set_current(g_ctx[1]);
  CHECK_EQ(add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0), CUDA_SUCCESS);
  CHECK_EQ(count_loads("add_a0_s0_sm90", g_ctx[1]), 1);
  /* then concurrently */
  g_failures = 0;
  run_threads(9, other_context_keeps_launching);
  CHECK_EQ(g_failures, 0);
  CHECK_EQ(count_loads("add_a0_s0_sm90", g_ctx[1]), 1); /* never reloaded */
  CHECK_EQ(count_loads("add_a0_s0_sm90", g_ctx[0]), 1 + LOOPS);
  CHECK_EQ(fake_cuda_live_modules(NULL, g_ctx[0]), 0);
  CHECK_EQ(count_launches(g_ctx[1]), 2 + 8 * LOOPS);
  printf("PASS unload_one_ctx\n");
}

/* ---- no_context ---------------------------------------------------------------------------- */

static void without_context(int i) {
  fake_cuda_set_current(NULL);
  g_result[i] = (i % 3 == 0)   ? add(NULL, ALIGNED, ALIGNED, ALIGNED, N, 0)
                : (i % 3 == 1) ? load_add()
                               : unload_add();
}

static void scenario_no_context(void) {
  int i;
  fake_cuda_reset();
  run_threads(32, without_context);
  for (i = 0; i < 32; ++i) CHECK_EQ(g_result[i], CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(fake_cuda_num_loads(), 0);
  printf("PASS no_context\n");
}

int main(int argc, char **argv) {
  const char *s = argc == 2 ? argv[1] : "";
  if (strcmp(s, "first_call_32") == 0) scenario_first_call_32();
  else if (strcmp(s, "two_contexts_32") == 0) scenario_two_contexts_32();
  else if (strcmp(s, "load_unload_race") == 0) scenario_load_unload_race();
  else if (strcmp(s, "unload_one_ctx") == 0) scenario_unload_one_ctx();
  else if (strcmp(s, "no_context") == 0) scenario_no_context();
  else {
    fprintf(stderr, "usage: race first_call_32|two_contexts_32|load_unload_race|"
                    "unload_one_ctx|no_context\n");
    return 2;
  }
  fflush(stdout);
  return 0;
}
