/* A real Triton cubin embedded by codegen reaches cuModuleLoadData byte for byte.
 * usage: real CUBIN_SIZE CUBIN_FNV1A64_HEX */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

int main(int argc, char **argv) {
  fake_cuda_load ld;
  fake_cuda_launch l;
  CHECK(argc == 3);
  fake_cuda_reset();
  fake_cuda_set_current(fake_cuda_create_context(0));
  CHECK_EQ(scale(NULL, 0x1000, 0x2000, 1000, 2.0f, 0), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_loads(), 1);
  CHECK(fake_cuda_get_load(0, &ld));
  CHECK_STR(ld.tag, "elf");
  CHECK_EQ(ld.elf_size, strtoull(argv[1], NULL, 10));
  CHECK_EQ(ld.elf_fnv1a64, strtoull(argv[2], NULL, 16));
  l = last_launch();
  CHECK_STR(l.name, "scale_kernel");
  CHECK_EQ(l.grid[0], 4); /* cdiv(1000, 256) */
  CHECK_EQ(l.block[0], 4 * 32);
  printf("OK\n");
  return 0;
}
