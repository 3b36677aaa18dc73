/* Per-context target selection of the `add` library (targets sm_80 [+PTX] and sm_90).
 * usage: arch MAJOR MINOR EXPECTED
 *   EXPECTED is the tag of the image that must launch, or a CUresult number that add() and
 *   load_add() must both return (with nothing launched). */
#include <ctype.h>
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

int main(int argc, char **argv) {
  CUcontext ctx;
  const CUdeviceptr a = 0x100000;
  CHECK(argc == 4);
  fake_cuda_reset();
  fake_cuda_set_device(0, atoi(argv[1]), atoi(argv[2]), 101376);
  ctx = fake_cuda_create_context(0);
  fake_cuda_set_current(ctx);
  if (isdigit((unsigned char)argv[3][0])) {
    int expected = atoi(argv[3]);
    CHECK_EQ(add(NULL, a, a, a, 1024, 1, 0), expected);
    CHECK_EQ(load_add(), expected);
    CHECK_EQ(fake_cuda_num_launches(), 0);
    CHECK_EQ(fake_cuda_num_loads(), 0);
  } else {
    CHECK_EQ(add(NULL, a, a, a, 1024, 1, 0), CUDA_SUCCESS);
    CHECK_STR(last_launch().tag, argv[3]);
    /* load_add loads the same target's variants: 4 of them, all of the chosen kind */
    CHECK_EQ(load_add(), CUDA_SUCCESS);
    CHECK_EQ(fake_cuda_num_loads(), 4);
    CHECK_EQ(count_loads(argv[3], ctx), 1);
  }
  printf("OK\n");
  return 0;
}
