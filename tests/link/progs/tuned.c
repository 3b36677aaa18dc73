/* Tuned dispatch of the `mm` library (tests/link/test_tuning.py): which algo mm_auto launches.
 * usage: tuned MAJOR MINOR M N K EXPECTED_TAG
 * Also checks that mm_auto_algo agrees with the launch and that the explicit entry points still
 * launch the algo they are given. */
#include <stdint.h>
#include <stdlib.h>

#include LIB_HEADER
#include "fake_util.h"

int main(int argc, char **argv) {
  CUcontext ctx;
  const CUdeviceptr a = 0x100000;
  int32_t m, n, k;
  int sm;
  CHECK(argc == 7);
  fake_cuda_reset();
  fake_cuda_set_device(0, atoi(argv[1]), atoi(argv[2]), 232448);
  sm = atoi(argv[1]) * 10 + atoi(argv[2]);
  m = atoi(argv[3]);
  n = atoi(argv[4]);
  k = atoi(argv[5]);
  ctx = fake_cuda_create_context(0);
  fake_cuda_set_current(ctx);
  CHECK_EQ(mm_auto(NULL, a, a, a, m, n, k), CUDA_SUCCESS);
  CHECK_STR(last_launch().tag, argv[6]);
  /* twice: the second call takes the cached target and SM */
  CHECK_EQ(mm_auto(NULL, a, a, a, m, n, k), CUDA_SUCCESS);
  CHECK_STR(last_launch().tag, argv[6]);
  {
    int algo = mm_auto_algo(sm, a, a, a, m, n, k);
    char tag[64];
    CHECK(algo >= 0 && algo < mm_get_num_algos());
    CHECK_EQ(mm(NULL, a, a, a, m, n, k, algo), CUDA_SUCCESS);
    CHECK_STR(last_launch().tag, argv[6]);
    snprintf(tag, sizeof tag, "mm_a%d_sm%d", algo, sm >= 90 ? 90 : 80);
    CHECK_STR(argv[6], tag);
  }
  CHECK_EQ(mm(NULL, a, a, a, m, n, k, 1), CUDA_SUCCESS);
  CHECK_STR(last_launch().tag, sm >= 90 ? "mm_a1_sm90" : "mm_a1_sm80");
  printf("OK\n");
  return 0;
}
