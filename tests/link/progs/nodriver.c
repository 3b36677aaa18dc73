/* No libcuda.so.1 can be found: every entry point that needs the driver returns
 * CUDA_ERROR_NO_DEVICE; nothing crashes, exits or prints. Links no fake. */
#include <stdint.h>

#include LIB_HEADER
#include "check.h"

int main(void) {
  const CUdeviceptr a = 0x100000;
  CHECK_EQ(add(NULL, a, a, a, 1024, 1, 0), CUDA_ERROR_NO_DEVICE);
  CHECK_EQ(add_default(NULL, a, a, a, 1024, 1), CUDA_ERROR_NO_DEVICE);
  CHECK_EQ(add(NULL, a, a, a, 0, 1, 0), CUDA_ERROR_NO_DEVICE); /* dispatcher picks a target first */
  CHECK_EQ(load_add(), CUDA_ERROR_NO_DEVICE);
  CHECK_EQ(unload_add(), CUDA_ERROR_NO_DEVICE);
  CHECK_EQ(add(NULL, a, a, a, 1024, 1, 7), CUDA_ERROR_INVALID_VALUE); /* checked before the driver */
  CHECK_EQ(add_get_num_algos(), 2);
  CHECK_STR(add_get_algo_info(1), "BLOCK=64 num_warps=2 num_stages=2");
  /* still the same answer on a second try (the failed dlopen is remembered, not retried) */
  CHECK_EQ(add(NULL, a, a, a, 1024, 1, 0), CUDA_ERROR_NO_DEVICE);
  printf("OK\n");
  return 0;
}
