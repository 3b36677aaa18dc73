/* The awkward_names library (tests/link/test_param_names.py): its C API takes the renamed
 * parameters by position, and the grid reads the one named `int` in the kernel (trt_int in C).
 * usage: param_names N_SEQS N */
#include <stdbool.h>
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

int main(int argc, char **argv) {
  CHECK(argc == 3);
  fake_cuda_reset();
  fake_cuda_set_device(0, 8, 0, 101376);
  fake_cuda_set_current(fake_cuda_create_context(0));
  CHECK_EQ(awkward_names_default(NULL, 0x100000, 0x200000, atoi(argv[1]), atoi(argv[2]), 2.0f,
                                 true),
           CUDA_SUCCESS);
  fake_cuda_launch l = last_launch();
  CHECK_STR(l.name, "awkward_names_kernel");
  printf("grid %u %u %u\n", l.grid[0], l.grid[1], l.grid[2]);
  return 0;
}
