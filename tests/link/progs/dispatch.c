/* Hint dispatch, algo selection, invalid algo ids, no-match, empty and negative grids, the
 * info API and parameter passing, against the `add` library (tests/link/libs.py) on sm_90. */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define A ((CUdeviceptr)0x100000) /* 16-byte aligned device address */

static void expect_launch(const char *tag, unsigned gx, unsigned block, int nparams) {
  fake_cuda_launch l = last_launch();
  CHECK_STR(l.tag, tag);
  CHECK_STR(l.name, "add_kernel");
  CHECK_EQ(l.grid[0], gx);
  CHECK_EQ(l.grid[1], 1);
  CHECK_EQ(l.grid[2], 1);
  CHECK_EQ(l.block[0], block);
  CHECK_EQ(l.ex, 0);
  CHECK_EQ(l.shared, 0);
  CHECK_EQ((uintptr_t)l.stream, 0x1234);
  CHECK_EQ(l.num_params, nparams);
}

int main(void) {
  CUstream s = (CUstream)0x1234;
  CUcontext ctx;
  int n0;
  fake_cuda_reset();
  ctx = fake_cuda_create_context(0);
  fake_cuda_set_current(ctx);

  CHECK_EQ(add_get_num_algos(), 2);
  CHECK_STR(add_get_algo_info(0), "BLOCK=128 num_warps=4 num_stages=3");
  CHECK_STR(add_get_algo_info(1), "BLOCK=64 num_warps=2 num_stages=2");
  CHECK(add_get_algo_info(2) == NULL);
  CHECK(add_get_algo_info(-1) == NULL);

  /* Everything aligned and stride == 1: the most specialised variant, which drops `stride`. */
  CHECK_EQ(add(s, A, A + 16, A + 32, 1024, 1, 0), CUDA_SUCCESS);
  expect_launch("add_a0_d16s1_sm90", 8, 128, 4 + 2);
  {
    fake_cuda_launch l = last_launch();
    CHECK_EQ(param_u64(&l, 0), A);
    CHECK_EQ(param_u64(&l, 1), A + 16);
    CHECK_EQ(param_u64(&l, 2), A + 32);
    CHECK_EQ(l.param_size[3], 4);
    CHECK_EQ(param_u64(&l, 3), 1024);
    CHECK_EQ(param_u64(&l, 4), 0); /* global_scratch: none needed */
    CHECK_EQ(param_u64(&l, 5), 0); /* profile_scratch */
  }
  /* stride != 1 */
  CHECK_EQ(add(s, A, A, A, 1024, 2, 0), CUDA_SUCCESS);
  expect_launch("add_a0_d16_sm90", 8, 128, 5 + 2);
  {
    fake_cuda_launch l = last_launch();
    CHECK_EQ(param_u64(&l, 4), 2);
  }
  /* misaligned pointer -> generic */
  CHECK_EQ(add(s, A + 4, A, A, 1024, 1, 0), CUDA_SUCCESS);
  expect_launch("add_a0_gen_sm90", 8, 128, 5 + 2);
  CHECK_EQ(add(s, A, A, A + 8, 1024, 1, 0), CUDA_SUCCESS);
  expect_launch("add_a0_gen_sm90", 8, 128, 5 + 2);
  /* n not divisible by 16 -> generic; grid rounds up */
  CHECK_EQ(add(s, A, A, A, 1000, 1, 0), CUDA_SUCCESS);
  expect_launch("add_a0_gen_sm90", 8, 128, 5 + 2);
  CHECK_EQ(add(s, A, A, A, 1025, 1, 0), CUDA_SUCCESS);
  expect_launch("add_a0_gen_sm90", 9, 128, 5 + 2);
  /* negative %16 values still satisfy the hint (as in Python); a negative grid is rejected */
  n0 = fake_cuda_num_launches();
  CHECK_EQ(add(s, A, A, A, -1024, 1, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_num_launches(), n0);
  /* default == algo 0 */
  CHECK_EQ(add_default(s, A, A, A, 2048, 1), CUDA_SUCCESS);
  expect_launch("add_a0_d16s1_sm90", 16, 128, 4 + 2);
  /* algo 1 */
  CHECK_EQ(add(s, A, A, A, 1024, 3, 1), CUDA_SUCCESS);
  expect_launch("add_a1_d16_sm90", 16, 64, 5 + 2);

  /* no variant of algo 1 accepts a misaligned pointer: INVALID_VALUE, nothing launched */
  n0 = fake_cuda_num_launches();
  CHECK_EQ(add(s, A + 4, A, A, 1024, 1, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(add(s, A, A, A, 1000, 1, 1), CUDA_ERROR_INVALID_VALUE);
  /* invalid algo ids */
  CHECK_EQ(add(s, A, A, A, 1024, 1, -1), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(add(s, A, A, A, 1024, 1, 2), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(add(s, A, A, A, 1024, 1, 1 << 30), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_num_launches(), n0);

  /* empty grid: success, no launch, and no module load for a variant not used before */
  {
    int loads = fake_cuda_num_loads();
    n0 = fake_cuda_num_launches();
    CHECK_EQ(add(s, A, A, A, 0, 1, 1), CUDA_SUCCESS);
    CHECK_EQ(add(s, A, A, A, 0, 2, 0), CUDA_SUCCESS);
    CHECK_EQ(fake_cuda_num_launches(), n0);
    CHECK_EQ(fake_cuda_num_loads(), loads);
  }

  /* each variant was loaded exactly once in this context */
  CHECK_EQ(count_loads("add_a0_d16s1_sm90", ctx), 1);
  CHECK_EQ(count_loads("add_a0_d16_sm90", ctx), 1);
  CHECK_EQ(count_loads("add_a0_gen_sm90", ctx), 1);
  CHECK_EQ(count_loads("add_a1_d16_sm90", ctx), 1);
  CHECK_EQ(fake_cuda_num_loads(), 4);
  /* device SM is looked up once per context, not on every launch */
  CHECK_EQ(fake_cuda_call_count("cuCtxGetDevice"), 1 + 4);

  /* a dispatched launch asks the driver for the context once: the variant reuses the key the
   * dispatcher looked up (a variant launcher called on its own looks it up itself) */
  {
    int cur = fake_cuda_call_count("cuCtxGetCurrent"), id = fake_cuda_call_count("cuCtxGetId");
    n0 = fake_cuda_num_launches();
    CHECK_EQ(add(s, A, A, A, 1024, 1, 0), CUDA_SUCCESS);
    CHECK_EQ(add(s, A, A, A, 1000, 1, 0), CUDA_SUCCESS); /* third variant: two hint checks fail */
    CHECK_EQ(fake_cuda_num_launches(), n0 + 2);
    CHECK_EQ(fake_cuda_call_count("cuCtxGetCurrent"), cur + 2);
    CHECK_EQ(fake_cuda_call_count("cuCtxGetId"), id + 2);
  }

  /* load_add loads everything of the selected target (already loaded: no new loads) */
  CHECK_EQ(load_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_loads(), 4);
  CHECK_EQ(unload_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules(NULL, NULL), 0);
  CHECK_EQ(load_add(), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_live_modules(NULL, ctx), 4);
  CHECK_EQ(unload_add(), CUDA_SUCCESS);
  CHECK_EQ(unload_add(), CUDA_SUCCESS); /* idempotent */
  printf("OK\n");
  return 0;
}
