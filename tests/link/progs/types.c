/* Every scalar type reaches the kernel with its own size and representation (fp32 as a 4-byte
 * float, i1 as one byte, fp16/bf16 as raw 16-bit patterns). */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define EXPECT_PARAM(i, value)                                  \
  do {                                                          \
    __typeof__(value) v_ = (value);                             \
    CHECK_EQ(l.param_size[i], sizeof v_);                       \
    CHECK(memcmp(l.param_bytes[i], &v_, sizeof v_) == 0);       \
  } while (0)

int main(void) {
  fake_cuda_launch l;
  fake_cuda_reset();
  fake_cuda_set_current(fake_cuda_create_context(0));
  CHECK_EQ(types_lib(NULL, (CUdeviceptr)0xABC0, true, (int8_t)-5, (int16_t)-300,
                            (int32_t)-70000, (int64_t)-5000000000000LL, (uint8_t)1, (uint8_t)200,
                            (uint16_t)60000, (uint32_t)4000000000u, (uint64_t)18000000000000000000ull,
                            (uint16_t)0x3C00, (uint16_t)0x3F80, 1.5f, 2.25, 0),
           CUDA_SUCCESS);
  l = last_launch();
  CHECK_EQ(l.num_params, 15 + 2);
  EXPECT_PARAM(0, (CUdeviceptr)0xABC0);
  EXPECT_PARAM(1, (int8_t)1); /* i1 */
  EXPECT_PARAM(2, (int8_t)-5);
  EXPECT_PARAM(3, (int16_t)-300);
  EXPECT_PARAM(4, (int32_t)-70000);
  EXPECT_PARAM(5, (int64_t)-5000000000000LL);
  EXPECT_PARAM(6, (uint8_t)1); /* u1 */
  EXPECT_PARAM(7, (uint8_t)200);
  EXPECT_PARAM(8, (uint16_t)60000);
  EXPECT_PARAM(9, (uint32_t)4000000000u);
  EXPECT_PARAM(10, (uint64_t)18000000000000000000ull);
  EXPECT_PARAM(11, (uint16_t)0x3C00); /* fp16 1.0 */
  EXPECT_PARAM(12, (uint16_t)0x3F80); /* bf16 1.0 */
  EXPECT_PARAM(13, 1.5f);             /* fp32: 4 bytes, float bits (not a double) */
  EXPECT_PARAM(14, 2.25);             /* fp64 */
  EXPECT_PARAM(15, (CUdeviceptr)0);   /* global_scratch */
  /* false reaches the kernel as 0 */
  CHECK_EQ(types_lib(NULL, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0.0, 0),
           CUDA_SUCCESS);
  l = last_launch();
  EXPECT_PARAM(1, (int8_t)0);
  printf("OK\n");
  return 0;
}
