/* End to end with images compiled by Triton through triton_aot.compile: prints, for an aligned
 * and a misaligned call of scale(), the kind and FNV-1a hash of the launched image, or the error.
 * usage: e2e MAJOR MINOR */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

static void call(const char *label, CUdeviceptr x) {
  CUresult r = scale(NULL, x, 0x200000, 1000, 2.0f, 0);
  if (r != CUDA_SUCCESS) {
    printf("%s err %d\n", label, (int)r);
  } else {
    fake_cuda_launch l = last_launch();
    fake_cuda_load ld;
    CHECK(fake_cuda_get_load(l.module_id, &ld));
    CHECK_STR(l.name, "scale_kernel");
    CHECK_EQ(l.grid[0], 4);
    printf("%s %s %llx\n", label, ld.tag, ld.elf_fnv1a64);
  }
}

int main(int argc, char **argv) {
  CHECK(argc == 3);
  fake_cuda_reset();
  fake_cuda_set_device(0, atoi(argv[1]), atoi(argv[2]), 101376);
  fake_cuda_set_current(fake_cuda_create_context(0));
  call("aligned", 0x100000);
  call("misaligned", 0x100004);
  return 0;
}
