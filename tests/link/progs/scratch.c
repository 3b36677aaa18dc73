/* Reusable scratch (the `feat` library's SCRATCH algo: 96 B/CTA global scratch aligned to 512,
 * 32 B/CTA profile scratch aligned to 128, grid (n, 2)): one buffer per (context, stream), grown
 * on the stream, never reused under graph capture or across streams; 8 threads on 2 streams.
 * `scratch noids` runs against a driver without cuCtxGetId/cuStreamGetId: per-launch scratch. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include <pthread.h>
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define OUT ((CUdeviceptr)0x200000)
#define SCRATCH 4
#define S1 ((CUstream)0x5678)
#define S2 ((CUstream)0x9999)

static unsigned long long need(int n) { return 256ull * (unsigned long long)n + 511 + 127; }

/* Launches SCRATCH with n and checks the scratch pointers are laid out inside `buf`. */
static fake_cuda_launch launch_in(CUstream s, int n) {
  int before = fake_cuda_num_launches();
  fake_cuda_launch l;
  CHECK_EQ(feat(s, OUT, n, SCRATCH), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), before + 1);
  l = last_launch();
  CHECK_STR(l.tag, "feat_scratch");
  CHECK((uintptr_t)l.stream == (uintptr_t)s);
  CHECK_EQ(param_u64(&l, 2) % 512, 0);
  CHECK_EQ(param_u64(&l, 3) % 128, 0);
  CHECK(param_u64(&l, 3) >= param_u64(&l, 2) + 96ull * 2 * (unsigned long long)n);
  return l;
}

static fake_cuda_mem_event mem(int i) {
  fake_cuda_mem_event e;
  CHECK(fake_cuda_get_mem_event(i, &e));
  return e;
}

/* Replays every launch and memory event in order: each scratch launch's buffers lie inside an
 * allocation that is live at that point of the enqueue order and belongs to the launch's stream
 * (a buffer shared by two streams could be used by both at once). */
static void check_history(void) {
  enum { MAXA = 256 };
  CUdeviceptr ptr[MAXA];
  unsigned long long bytes[MAXA];
  CUstream stream[MAXA];
  int live = 0, li = 0, mi = 0, nl = fake_cuda_num_launches(), nm = fake_cuda_num_mem_events();
  while (li < nl || mi < nm) {
    fake_cuda_launch l;
    fake_cuda_mem_event e;
    int take_mem;
    if (li < nl) CHECK(fake_cuda_get_launch(li, &l));
    if (mi < nm) e = mem(mi);
    take_mem = mi < nm && (li >= nl || e.seq < l.seq);
    if (take_mem) {
      int i;
      if (!e.is_free) {
        CHECK(live < MAXA);
        ptr[live] = e.ptr, bytes[live] = e.bytes, stream[live] = e.stream, ++live;
      } else {
        for (i = 0; i < live && ptr[i] != e.ptr; ++i) continue;
        CHECK(i < live);
        CHECK((uintptr_t)stream[i] == (uintptr_t)e.stream); /* freed on its own stream */
        ptr[i] = ptr[live - 1], bytes[i] = bytes[live - 1], stream[i] = stream[live - 1], --live;
      }
      ++mi;
    } else {
      if (strcmp(l.tag, "feat_scratch") == 0) {
        unsigned long long ctas = (unsigned long long)l.grid[0] * l.grid[1];
        CUdeviceptr g = param_u64(&l, 2), p = param_u64(&l, 3);
        int i, g_ok = 0, p_ok = 0;
        for (i = 0; i < live; ++i) {
          if ((uintptr_t)stream[i] != (uintptr_t)l.stream) continue;
          if (g >= ptr[i] && g + 96 * ctas <= ptr[i] + bytes[i]) g_ok = 1;
          if (p >= ptr[i] && p + 32 * ctas <= ptr[i] + bytes[i]) p_ok = 1;
        }
        CHECK(g_ok && p_ok);
      }
      ++li;
    }
  }
}

#define THREADS 8
#define ROUNDS 150
static pthread_barrier_t barrier;
static CUcontext thread_ctx;
static int failures;

static void *worker(void *arg) {
  int i = (int)(intptr_t)arg, k;
  CUstream s = (i % 2) ? S1 : S2;
  fake_cuda_set_current(thread_ctx);
  pthread_barrier_wait(&barrier);
  for (k = 0; k < ROUNDS; ++k) {
    /* sizes grow (growth races with the other threads' launches), then go up and down */
    int n = k < 60 ? (1 << (k / 5)) + i : 1 + (k * 7 + i * 13) % 64;
    if (feat(s, OUT, n, SCRATCH) != CUDA_SUCCESS) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static int run_noids(void) {
  int m0, i;
  CUcontext ctx;
  fake_cuda_reset();
  ctx = fake_cuda_create_context(0);
  fake_cuda_set_current(ctx);
  m0 = fake_cuda_num_mem_events();
  for (i = 0; i < 3; ++i) launch_in(S1, 5);
  /* no stream ids: two allocations and two frees per launch, as before */
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 12);
  CHECK_EQ(fake_cuda_live_allocations(), 0);
  puts("OK");
  return 0;
}

int main(int argc, char **argv) {
  fake_cuda_launch l, l2;
  fake_cuda_mem_event a, f;
  CUcontext ctx, ctx2;
  int m0, i;
  if (argc > 1 && strcmp(argv[1], "noids") == 0) return run_noids();
  fake_cuda_reset();
  ctx = fake_cuda_create_context(0);
  ctx2 = fake_cuda_create_context(0);
  fake_cuda_set_current(ctx);

  /* first launch on S1: one buffer for both scratch kinds, allocated on S1, not freed */
  m0 = fake_cuda_num_mem_events();
  l = launch_in(S1, 5);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 1);
  a = mem(m0);
  CHECK(!a.is_free && (uintptr_t)a.stream == (uintptr_t)S1 && a.seq < l.seq);
  CHECK_EQ(a.bytes, need(5));
  CHECK_EQ(param_u64(&l, 2), (a.ptr + 511) & ~(CUdeviceptr)511);
  CHECK(param_u64(&l, 3) + 32 * 10 <= a.ptr + a.bytes);
  /* reused: same and smaller sizes allocate nothing */
  for (i = 0; i < 10; ++i) {
    l2 = launch_in(S1, i % 2 ? 5 : 3);
    CHECK_EQ(param_u64(&l2, 2), param_u64(&l, 2));
  }
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 1);
  CHECK_EQ(fake_cuda_live_allocations(), 1);

  /* growth: the old buffer freed on S1 after the last launch that used it, a larger one
   * allocated on S1 before the next launch (at least doubling) */
  l = launch_in(S1, 8);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 3);
  f = mem(m0 + 1);
  a = mem(m0 + 2);
  CHECK(f.is_free && f.ptr == mem(m0).ptr && (uintptr_t)f.stream == (uintptr_t)S1);
  CHECK(!a.is_free && (uintptr_t)a.stream == (uintptr_t)S1);
  CHECK(l2.seq < f.seq && f.seq < a.seq && a.seq < l.seq);
  CHECK_EQ(a.bytes, 2 * need(5));
  CHECK_EQ(fake_cuda_live_allocations(), 1);
  launch_in(S1, 9); /* still fits: 2 * need(5) >= need(9) */
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 3);

  /* another stream, the legacy stream, another context: a buffer each */
  l2 = launch_in(S2, 5);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 4);
  CHECK((uintptr_t)mem(m0 + 3).stream == (uintptr_t)S2);
  CHECK(param_u64(&l2, 2) != param_u64(&l, 2));
  launch_in(NULL, 5);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 5);
  fake_cuda_set_current(ctx2);
  launch_in(S1, 5);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 6);
  fake_cuda_set_current(ctx);
  launch_in(S2, 4);
  launch_in(S1, 4);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 6);
  CHECK_EQ(fake_cuda_live_allocations(), 4);

  /* graph capture on S1: per-launch allocation and free on S1 (graph memory nodes); the cached
   * buffer is neither used nor freed, and is reused after the capture */
  fake_cuda_set_capturing(S1, 1);
  l2 = launch_in(S1, 5);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 10);
  for (i = 6; i < 10; ++i) CHECK((uintptr_t)mem(m0 + i).stream == (uintptr_t)S1);
  CHECK(param_u64(&l2, 2) != param_u64(&l, 2));
  CHECK_EQ(fake_cuda_live_allocations(), 4);
  fake_cuda_set_capturing(S1, 0);
  l2 = launch_in(S1, 5);
  CHECK_EQ(param_u64(&l2, 2), param_u64(&l, 2));
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 10);

  /* the per-thread default stream is one handle for many streams: never reused */
  launch_in(CU_STREAM_PER_THREAD, 5);
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 14);
  CHECK_EQ(fake_cuda_live_allocations(), 4);

  /* a failed launch keeps the buffer (nothing to free), the next launch reuses it */
  fake_cuda_fail("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
  CHECK_EQ(feat(S1, OUT, 5, SCRATCH), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  l2 = launch_in(S1, 5);
  CHECK_EQ(param_u64(&l2, 2), param_u64(&l, 2));
  CHECK_EQ(fake_cuda_num_mem_events(), m0 + 14);
  /* a failed growth: the error, nothing launched; the next launch allocates again */
  {
    int n0 = fake_cuda_num_launches();
    fake_cuda_fail("cuMemAllocAsync", CUDA_ERROR_OUT_OF_MEMORY, 1);
    CHECK_EQ(feat(S1, OUT, 1000, SCRATCH), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(fake_cuda_num_launches(), n0);
    CHECK_EQ(fake_cuda_live_allocations(), 3); /* the old one was freed before the attempt */
    launch_in(S1, 1000);
    CHECK_EQ(fake_cuda_live_allocations(), 4);
    CHECK_EQ(mem(fake_cuda_num_mem_events() - 1).bytes, need(1000));
  }
  check_history();

  /* 8 threads, 4 per stream, sizes up and down, in a fresh context */
  thread_ctx = fake_cuda_create_context(0);
  fake_cuda_set_launch_delay_us(50);
  {
    pthread_t t[THREADS];
    int allocs = 0, e0 = fake_cuda_num_mem_events();
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (i = 0; i < THREADS; ++i)
      CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
    for (i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    CHECK_EQ(failures, 0);
    for (i = e0; i < fake_cuda_num_mem_events(); ++i) allocs += !mem(i).is_free;
    CHECK(allocs >= 2);  /* one buffer per stream at least */
    CHECK(allocs <= 2 * 14); /* grows by doubling: a few per stream, not one per launch */
    CHECK_EQ(fake_cuda_live_allocations(), 4 + 2);
  }
  check_history();
  puts("OK");
  return 0;
}
