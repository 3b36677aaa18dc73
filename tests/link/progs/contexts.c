/* Module cache per context: two devices of different SMs and two contexts on one device. */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define A ((CUdeviceptr)0x100000)
#define V90 "add_a0_d16s1_sm90"
#define V80 "add_a0_d16s1_sm80"

static void launch_ok(CUcontext ctx, const char *tag) {
  fake_cuda_set_current(ctx);
  CHECK_EQ(add(NULL, A, A, A, 1024, 1, 0), CUDA_SUCCESS);
  CHECK_STR(last_launch().tag, tag);
  CHECK(last_launch().ctx == ctx); /* the fake also rejects a module of another context */
}

int main(void) {
  CUcontext a, b, c;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  fake_cuda_set_device(1, 8, 0, 166912);
  a = fake_cuda_create_context(0);
  b = fake_cuda_create_context(1);
  c = fake_cuda_create_context(0);

  /* no current context */
  fake_cuda_set_current(NULL);
  CHECK_EQ(add(NULL, A, A, A, 1024, 1, 0), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(load_add(), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(unload_add(), CUDA_ERROR_INVALID_CONTEXT);

  launch_ok(a, V90);
  launch_ok(b, V80);
  launch_ok(c, V90);
  CHECK_EQ(count_loads(V90, a), 1);
  CHECK_EQ(count_loads(V80, b), 1);
  CHECK_EQ(count_loads(V90, c), 1);
  CHECK_EQ(fake_cuda_num_loads(), 3);
  /* cached: no more loads */
  launch_ok(a, V90);
  launch_ok(b, V80);
  launch_ok(c, V90);
  launch_ok(a, V90);
  CHECK_EQ(fake_cuda_num_loads(), 3);

  /* unloading in `a` leaves `b` and `c` working without reloads */
  fake_cuda_set_current(a);
  CHECK_EQ(unload_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules(NULL, a), 0);
  CHECK_EQ(fake_cuda_live_modules(V80, b), 1);
  CHECK_EQ(fake_cuda_live_modules(V90, c), 1);
  launch_ok(b, V80);
  launch_ok(c, V90);
  CHECK_EQ(fake_cuda_num_loads(), 3);
  /* `a` loads again on next use */
  launch_ok(a, V90);
  CHECK_EQ(count_loads(V90, a), 2);
  CHECK_EQ(fake_cuda_live_modules(V90, a), 1);

  /* explicit load in b loads all 4 sm_80 variants there and nothing elsewhere */
  fake_cuda_set_current(b);
  CHECK_EQ(load_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules(NULL, b), 4);
  CHECK_EQ(fake_cuda_live_modules(NULL, c), 1);

  /* a failed load is reported and retried on the next call */
  fake_cuda_set_current(c);
  fake_cuda_fail("cuModuleLoadData", CUDA_ERROR_OUT_OF_MEMORY, 1);
  {
    int launches = fake_cuda_num_launches();
    CHECK_EQ(add(NULL, A, A, A, 1024, 2, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(fake_cuda_num_launches(), launches);
  }
  CHECK_EQ(add(NULL, A, A, A, 1024, 2, 0), CUDA_SUCCESS);
  CHECK_STR(last_launch().tag, "add_a0_d16_sm90");
  /* a failing cuModuleGetFunction unloads the module it loaded */
  fake_cuda_fail("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND, 1);
  CHECK_EQ(add(NULL, A + 4, A, A, 1024, 2, 0), CUDA_ERROR_NOT_FOUND);
  CHECK_EQ(fake_cuda_live_modules("add_a0_gen_sm90", c), 0);
  CHECK_EQ(add(NULL, A + 4, A, A, 1024, 2, 0), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules("add_a0_gen_sm90", c), 1);
  printf("OK\n");
  return 0;
}
