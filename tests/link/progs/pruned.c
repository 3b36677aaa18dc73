/* A library whose specializations keep only some algos (tests/link/test_tuning.py): which
 * variant mm(..., algo) and mm_auto launch for a call.
 * usage: pruned M N K K_OFFSET ALGO EXPECTED_TAG AUTO_EXPECTED_TAG
 * K_OFFSET is added to the pointers (0: 16-byte aligned); AUTO_EXPECTED_TAG "-" skips mm_auto. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include LIB_HEADER
#include "fake_util.h"

int main(int argc, char **argv) {
  CUcontext ctx;
  CUdeviceptr a;
  CHECK(argc == 8);
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  ctx = fake_cuda_create_context(0);
  fake_cuda_set_current(ctx);
  a = 0x100000 + (CUdeviceptr)atoi(argv[4]);
  CHECK_EQ(mm(NULL, a, a, a, atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[5])),
           CUDA_SUCCESS);
  CHECK_STR(last_launch().tag, argv[6]);
  if (strcmp(argv[7], "-") != 0) {
    CHECK_EQ(mm_auto(NULL, a, a, a, atoi(argv[1]), atoi(argv[2]), atoi(argv[3])), CUDA_SUCCESS);
    CHECK_STR(last_launch().tag, argv[7]);
  }
  printf("OK\n");
  return 0;
}
