/* The generated HIP library `hadd` (tests/link/test_hip_runtime.py) against the fake HIP runtime
 * (tests/fake_hip): target choice per gfx arch, launch geometry and arguments, error paths,
 * threads and devices.  Prints OK, or a FAIL line and exits 1. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include LIB_HEADER
#ifndef HIP_CHECK_NO_FAKE
#include "fake_hip.h"
#endif

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

static _Alignas(64) float buf[4096];
#define X ((hipDeviceptr_t)&buf[0])
#define Y ((hipDeviceptr_t)&buf[1024])
#define OUT ((hipDeviceptr_t)&buf[2048])
#define MISALIGNED ((hipDeviceptr_t)&buf[1])
#define STREAM ((hipStream_t)(uintptr_t)0x5100)

#ifndef HIP_CHECK_NO_FAKE
static const fake_hip_launch *last_launch(void) {
  CHECK(fake_hip_num_launches() > 0);
  return fake_hip_get_launch(fake_hip_num_launches() - 1);
}

static void one_device(const char *arch) {
  const char *archs[1];
  archs[0] = arch;
  fake_hip_reset(1, archs);
}

static int mode_arch(const char *arch, const char *expected, int block) {
  hipError_t r;
  one_device(arch);
  r = hadd(STREAM, X, Y, OUT, 1024, 1, 0);
  if (expected[0] >= '0' && expected[0] <= '9') {
    CHECK((int)r == atoi(expected));
    CHECK(fake_hip_num_launches() == 0);
    CHECK(fake_hip_num_loads() == 0);
    return 0;
  }
  CHECK(r == hipSuccess);
  CHECK(strcmp(last_launch()->tag, expected) == 0);
  CHECK(last_launch()->block[0] == (unsigned)block);
  CHECK(fake_hip_num_loads() == 1);
  CHECK(strcmp(fake_hip_get_load(0)->tag, expected) == 0);
  return 0;
}

static int mode_launch(void) {
  const fake_hip_launch *l;
  void *p;
  int32_t n;
  one_device("gfx942:sramecc+:xnack-");
  CHECK(hadd(STREAM, X, Y, OUT, 1024, 1, 0) == hipSuccess);
  l = last_launch();
  CHECK(strcmp(l->tag, "hadd_a0_d16s1_gfx942") == 0);
  CHECK(strcmp(l->name, "add_kernel") == 0);
  CHECK(l->grid[0] == 8 && l->grid[1] == 1 && l->grid[2] == 1); /* cdiv(1024, 128) */
  CHECK(l->block[0] == 256 && l->block[1] == 1 && l->block[2] == 1); /* 4 warps x 64 */
  CHECK(l->shared == 0 && l->stream == STREAM);
  /* x, y, out, n (stride:1 is compiled in), global and profile scratch */
  CHECK(l->num_params == 6 && l->param_bytes == 8 + 8 + 8 + 4 + 8 + 8);
  memcpy(&p, l->params, 8);
  CHECK(p == X);
  memcpy(&p, l->params + 16, 8);
  CHECK(p == OUT);
  memcpy(&n, l->params + 24, 4);
  CHECK(n == 1024);
  CHECK(l->scratch[0] == NULL && l->scratch[1] == NULL);
  /* misaligned x: the generic variant, which takes stride */
  CHECK(hadd(STREAM, MISALIGNED, Y, OUT, 999, 7, 0) == hipSuccess);
  l = last_launch();
  CHECK(strcmp(l->tag, "hadd_a0_gen_gfx942") == 0);
  CHECK(l->num_params == 7 && l->param_bytes == 8 + 8 + 8 + 4 + 4 + 8 + 8);
  memcpy(&p, l->params, 8);
  CHECK(p == MISALIGNED);
  memcpy(&n, l->params + 28, 4);
  CHECK(n == 7);
  /* algo 1 has no generic variant: nothing launched */
  CHECK(hadd(STREAM, MISALIGNED, Y, OUT, 1000, 1, 1) == hipErrorInvalidValue);
  CHECK(hadd(STREAM, X, Y, OUT, 1024, 1, 1) == hipSuccess);
  CHECK(last_launch()->grid[0] == 16 && last_launch()->block[0] == 128); /* BLOCK 64, 2 warps */
  CHECK(fake_hip_num_launches() == 3);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 4) == hipErrorInvalidValue);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, -1) == hipErrorInvalidValue);
  /* empty grid: success, no launch */
  CHECK(hadd(STREAM, X, Y, OUT, 0, 1, 0) == hipSuccess);
  CHECK(hadd_default(STREAM, X, Y, OUT, 0, 1) == hipSuccess);
  CHECK(fake_hip_num_launches() == 3);
  CHECK(hadd_get_num_algos() == 4);
  CHECK(strcmp(hadd_get_algo_info(1), "BLOCK=64 num_warps=2 num_stages=3") == 0);
  CHECK(hadd_get_algo_info(4) == NULL);
  return 0;
}

static int mode_errors(void) {
  const fake_hip_launch *l;
  const fake_hip_alloc *a;
  one_device("gfx90a");
  /* a failed load is returned unchanged and not cached: the next call loads */
  fake_hip_fail("hipModuleLoadData", hipErrorInvalidImage);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 0) == hipErrorInvalidImage);
  fake_hip_fail("hipModuleLoadData", 0);
  fake_hip_fail("hipModuleGetFunction", hipErrorNotFound);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 0) == hipErrorNotFound);
  CHECK(fake_hip_num_loads() == 1 && fake_hip_num_unloads() == 1); /* module let go */
  fake_hip_fail("hipModuleGetFunction", 0);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 0) == hipSuccess);
  CHECK(fake_hip_num_loads() == 2 && fake_hip_num_launches() == 1);
  fake_hip_fail("hipModuleLaunchKernel", hipErrorLaunchOutOfResources);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 0) == hipErrorLaunchOutOfResources);
  fake_hip_fail("hipModuleLaunchKernel", 0);
  /* 80 KiB of LDS: refused before loading on a 64 KiB device, loaded where the device has it */
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 2) == hipErrorNotSupported);
  CHECK(fake_hip_num_loads() == 2);
  fake_hip_set_max_shared(0, 160 * 1024);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 2) == hipSuccess);
  CHECK(last_launch()->shared == 80 * 1024);
  /* profile scratch: 48 bytes per workgroup, aligned to 512, on the launch stream, freed */
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 3) == hipSuccess);
  l = last_launch();
  CHECK(l->grid[0] == 63); /* cdiv(1000, 16) */
  CHECK(fake_hip_num_allocs() == 1);
  a = fake_hip_get_alloc(0);
  CHECK(a->bytes == 48 * 63 + 511 && a->stream == STREAM && a->freed);
  CHECK(l->scratch[0] == NULL && l->scratch[1] != NULL);
  CHECK((uintptr_t)l->scratch[1] % 512 == 0);
  CHECK((char *)l->scratch[1] >= (char *)a->ptr && (char *)l->scratch[1] < (char *)a->ptr + 512);
  fake_hip_fail("hipMallocAsync", hipErrorOutOfMemory);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 3) == hipErrorOutOfMemory);
  CHECK(fake_hip_num_launches() == 3);
  fake_hip_fail("hipMallocAsync", 0);
  /* device query failures come back unchanged */
  fake_hip_fail("hipGetDevice", hipErrorInvalidDevice);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 0) == hipErrorInvalidDevice);
  CHECK(load_hadd() == hipErrorInvalidDevice);
  fake_hip_fail("hipGetDevice", 0);
  return 0;
}

static int mode_load_all(void) {
  one_device("gfx942");
  /* every kernel of the device's target; the 80 KiB one fails, the rest load; first error */
  CHECK(load_hadd() == hipErrorNotSupported);
  CHECK(fake_hip_num_loads() == 4);
  CHECK(load_hadd() == hipErrorNotSupported);
  CHECK(fake_hip_num_loads() == 4); /* idempotent */
  CHECK(unload_hadd() == hipSuccess);
  CHECK(fake_hip_num_unloads() == 4);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 0) == hipSuccess);
  CHECK(fake_hip_num_loads() == 5);
  return 0;
}

#endif

/* no runtime at all, or one without a required entry point: the same code from every call */
static int mode_expect(int code) {
  CHECK((int)hadd(STREAM, X, Y, OUT, 1000, 1, 0) == code);
  CHECK((int)hadd(STREAM, X, Y, OUT, 0, 1, 0) == code); /* target chosen before the grid */
  CHECK((int)load_hadd() == code);
  CHECK((int)unload_hadd() == code);
  CHECK(hadd(STREAM, X, Y, OUT, 1000, 1, 7) == hipErrorInvalidValue); /* before the runtime */
  return 0;
}

#ifndef HIP_CHECK_NO_FAKE
static pthread_barrier_t barrier;
static int thread_device[32];
static hipError_t thread_result[32];

static void *worker(void *arg) {
  int i = (int)(intptr_t)arg;
  if (thread_device[i] >= 0) CHECK(hipSetDevice(thread_device[i]) == 0);
  pthread_barrier_wait(&barrier);
  thread_result[i] = hadd(STREAM, MISALIGNED, Y, OUT, 1000, 1, 0);
  return NULL;
}

static void run_threads(int n) {
  pthread_t t[32];
  int i;
  pthread_barrier_init(&barrier, NULL, (unsigned)n);
  for (i = 0; i < n; ++i) CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
  for (i = 0; i < n; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
  for (i = 0; i < n; ++i) CHECK(thread_result[i] == hipSuccess);
}

static int mode_threads(void) {
  int i;
  one_device("gfx942");
  fake_hip_set_load_delay_us(20000);
  for (i = 0; i < 32; ++i) thread_device[i] = -1;
  run_threads(32);
  CHECK(fake_hip_num_loads() == 1);
  CHECK(fake_hip_num_launches() == 32);
  return 0;
}

static int mode_devices(void) {
  const char *archs[3] = {"gfx90a:sramecc+:xnack-", "gfx942:sramecc+:xnack-", "gfx1100"};
  int i, per_device[3] = {0, 0, 0};
  fake_hip_reset(3, archs);
  fake_hip_set_load_delay_us(5000);
  /* 30 threads, 10 per device, all calling first at once: one load per device, each its arch */
  for (i = 0; i < 30; ++i) thread_device[i] = i % 3;
  run_threads(30);
  CHECK(fake_hip_num_loads() == 3);
  for (i = 0; i < 3; ++i) per_device[fake_hip_get_load(i)->device]++;
  CHECK(per_device[0] == 1 && per_device[1] == 1 && per_device[2] == 1);
  for (i = 0; i < fake_hip_num_launches(); ++i) {
    const fake_hip_launch *l = fake_hip_get_launch(i);
    const char *want = l->device == 0 ? "hadd_a0_gen_gfx90a"
                       : l->device == 1 ? "hadd_a0_gen_gfx942" : "hadd_a0_gen_gfx1100";
    CHECK(strcmp(l->tag, want) == 0);
    CHECK(l->block[0] == (l->device == 2 ? 128u : 256u)); /* wave32 on RDNA */
  }
  /* unload on device 1 only: device 0 keeps its module, device 1 reloads */
  CHECK(hipSetDevice(1) == 0);
  CHECK(unload_hadd() == hipSuccess);
  CHECK(fake_hip_num_unloads() == 1);
  CHECK(hadd(STREAM, MISALIGNED, Y, OUT, 1000, 1, 0) == hipSuccess);
  CHECK(hipSetDevice(0) == 0);
  CHECK(hadd(STREAM, MISALIGNED, Y, OUT, 1000, 1, 0) == hipSuccess);
  CHECK(fake_hip_num_loads() == 4 && fake_hip_get_load(3)->device == 1);
  return 0;
}

#endif

int main(int argc, char **argv) {
  int r = 1;
  if (argc < 2) return 2;
  if (strcmp(argv[1], "expect") == 0 && argc == 3) r = mode_expect(atoi(argv[2]));
#ifndef HIP_CHECK_NO_FAKE
  else if (strcmp(argv[1], "arch") == 0 && argc == 5) r = mode_arch(argv[2], argv[3], atoi(argv[4]));
  else if (strcmp(argv[1], "launch") == 0) r = mode_launch();
  else if (strcmp(argv[1], "errors") == 0) r = mode_errors();
  else if (strcmp(argv[1], "load_all") == 0) r = mode_load_all();
  else if (strcmp(argv[1], "threads") == 0) r = mode_threads();
  else if (strcmp(argv[1], "devices") == 0) r = mode_devices();
#endif
  if (r == 0) printf("OK\n");
  return r;
}
