/* smoke_app: calls the AOT-compiled kernel through its C API; no Python, no Triton at run time.
 *
 * Without a CUDA driver (CI) the call returns CUDA_ERROR_NO_DEVICE; with one it needs a current
 * context and device memory, which a real program would set up with the driver API. Prints the
 * CUresult and exits 0 when it is one of the results expected on the machine it runs on.
 */
#include <stdio.h>

#include "kernels/relu_scale.h"

int main(void) {
  printf("algos: %d (%s)\n", relu_scale_get_num_algos(), relu_scale_get_algo_info(0));
  /* This program makes no context, so nothing is launched and the pointers are never used. */
  CUresult r = relu_scale_default(NULL, 0, 0, 2.0f, 1000);
  printf("relu_scale_default: CUresult %d\n", (int)r);
  /* no driver: CUDA_ERROR_NO_DEVICE; a driver but no current context: INVALID_CONTEXT */
  return (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_CONTEXT) ? 0 : 1;
}
