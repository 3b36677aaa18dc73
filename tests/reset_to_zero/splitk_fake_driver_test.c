/* The splitk library (BUILD.bazel) against the fake driver: algo 0 zeroes c (2-D) and s (1-D)
 * on the call's stream before its launch, algo 1 zeroes nothing, splitk_auto (the default algo
 * 0) zeroes too, and a bad extent launches nothing. The fake's control API comes through dlsym
 * from the same libcuda.so.1 the runtime opens (LD_LIBRARY_PATH). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "tests/link/progs/check.h"
#include "tests/reset_to_zero/splitk.h"

static void *fake;
static void *sym(const char *name) {
  void *p = dlsym(fake, name);
  if (p == NULL) {
    fprintf(stderr, "the fake driver has no %s\n", name);
    exit(1);
  }
  return p;
}

#define A ((CUdeviceptr)0x100000)
#define C ((CUdeviceptr)0x200000)
#define S ((CUdeviceptr)0x300000)
#define STREAM ((CUstream)0x55)

int main(void) {
  void (*reset)(void);
  void (*set_device)(int, int, int, int);
  CUcontext (*create_context)(int);
  void (*set_current)(CUcontext);
  int (*num_memsets)(void), (*num_launches)(void);
  int (*get_memset)(int, fake_cuda_memset *);
  int (*get_launch)(int, fake_cuda_launch *);
  fake_cuda_memset m;
  fake_cuda_launch l;
  fake = dlopen("libcuda.so.1", RTLD_NOW);
  if (fake == NULL) {
    fprintf(stderr, "cannot open the fake libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  *(void **)&reset = sym("fake_cuda_reset");
  *(void **)&set_device = sym("fake_cuda_set_device");
  *(void **)&create_context = sym("fake_cuda_create_context");
  *(void **)&set_current = sym("fake_cuda_set_current");
  *(void **)&num_memsets = sym("fake_cuda_num_memsets");
  *(void **)&num_launches = sym("fake_cuda_num_launches");
  *(void **)&get_memset = sym("fake_cuda_get_memset");
  *(void **)&get_launch = sym("fake_cuda_get_launch");
  reset();
  set_device(0, 9, 0, 232448);
  set_current(create_context(0));

  /* algo 0: c[M=40, N=50, stride_cm=56] (fp32: cuMemsetD2D32Async) then s[M] (cuMemsetD32Async),
   * then the launch on the same stream: grid (cdiv(40, 16) * cdiv(50, 32), SPLIT_K, 1) */
  CHECK(splitk(STREAM, A, C, S, 40, 50, 64, 64, 56, 0) == CUDA_SUCCESS);
  CHECK(num_memsets() == 2 && num_launches() == 1);
  CHECK(get_memset(0, &m));
  CHECK(m.two_d == 1 && m.bits == 32 && m.ptr == C && m.pitch == 56 * 4 && m.width == 50 &&
        m.height == 40 && m.value == 0 && m.stream == STREAM);
  CHECK(get_memset(1, &m));
  CHECK(m.two_d == 0 && m.bits == 32 && m.ptr == S && m.width == 40 && m.stream == STREAM);
  CHECK(get_launch(0, &l));
  CHECK(l.seq > m.seq && l.stream == STREAM);
  CHECK(l.grid[0] == 3 * 2 && l.grid[1] == 4 && l.grid[2] == 1);

  /* algo 1 zeroes nothing */
  CHECK(splitk(STREAM, A, C, S, 40, 50, 64, 64, 56, 1) == CUDA_SUCCESS);
  CHECK(num_memsets() == 2 && num_launches() == 2);

  /* splitk_auto: no table, the default algo 0 */
  CHECK(splitk_auto(STREAM, A, C, S, 40, 50, 64, 64, 56) == CUDA_SUCCESS);
  CHECK(num_memsets() == 4 && num_launches() == 3);

  /* stride_cm < N: refused before anything is zeroed or launched */
  CHECK(splitk(STREAM, A, C, S, 40, 50, 64, 64, 49, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(num_memsets() == 4 && num_launches() == 3);

  CHECK(strstr(splitk_get_algo_info(0), "reset_to_zero=c_ptr[M, N, stride_cm];s_ptr[M]") != NULL);
  printf("OK\n");
  return 0;
}
