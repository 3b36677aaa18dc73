/* Per-algo target restrictions (the `restr` library of libs.py): algo 0 has sm_80 and sm_90
 * variants, algo 1 only sm_90 (declared with --algo_targets). On a device whose chosen target is
 * sm_80 (sm_80, sm_86), algo 1 returns CUDA_ERROR_NO_BINARY_FOR_GPU and launches nothing; algo 0
 * and load_restr still work there. */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define OUT ((CUdeviceptr)0x400000)

static void expect(int algo, int32_t n, CUresult want, const char *tag) {
  int before = fake_cuda_num_launches();
  CHECK_EQ(restr((CUstream)0x9, OUT, n, algo), want);
  if (tag != NULL) {
    fake_cuda_launch l;
    CHECK_EQ(fake_cuda_num_launches(), before + 1);
    l = last_launch();
    CHECK_STR(l.tag, tag);
    CHECK_EQ(l.grid[0], (unsigned int)n);
  } else {
    CHECK_EQ(fake_cuda_num_launches(), before);
  }
}

int main(void) {
  CUcontext c90, c80, c86;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  fake_cuda_set_device(1, 8, 0, 166912);
  fake_cuda_set_device(2, 8, 6, 101376);
  c90 = fake_cuda_create_context(0);
  c80 = fake_cuda_create_context(1);
  c86 = fake_cuda_create_context(2);

  CHECK_EQ(restr_get_num_algos(), 2);
  CHECK_STR(restr_get_algo_info(1), "BLOCK=128 num_warps=4 num_stages=3 targets=cuda:90");

  fake_cuda_set_current(c90);
  expect(0, 5, CUDA_SUCCESS, "restr_a0_sm90");
  expect(1, 32, CUDA_SUCCESS, "restr_a1_d16_sm90");
  expect(1, 5, CUDA_SUCCESS, "restr_a1_gen_sm90");
  CHECK_EQ(load_restr(), CUDA_SUCCESS);

  fake_cuda_set_current(c80);
  expect(1, 5, CUDA_ERROR_NO_BINARY_FOR_GPU, NULL);
  expect(1, 0, CUDA_ERROR_NO_BINARY_FOR_GPU, NULL); /* even an empty grid: no variant here */
  expect(0, 5, CUDA_SUCCESS, "restr_a0_sm80");
  CHECK_EQ(load_restr(), CUDA_SUCCESS); /* loads what this target has */
  CHECK_EQ(count_loads("restr_a1_gen_sm90", c80), 0);

  fake_cuda_set_current(c86);
  expect(1, 7, CUDA_ERROR_NO_BINARY_FOR_GPU, NULL);
  expect(0, 7, CUDA_SUCCESS, "restr_a0_sm80");
  /* the algo id check still comes first */
  expect(2, 7, CUDA_ERROR_INVALID_VALUE, NULL);
  puts("OK");
  return 0;
}
