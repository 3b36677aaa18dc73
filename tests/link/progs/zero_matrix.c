/* reset_to_zero of a strided matrix against the fake driver (the `zm` library of libs.py):
 *   zm(stream, c_ptr, M, N, stride_cm, stride_cn, algo_id) zeroes the fp16 M x N matrix
 *   c_ptr[M, N, stride_cm, stride_cn], then launches M programs.
 * Row-major: M rows of N elements, stride_cm apart. Column-major: N rows of M elements,
 * stride_cn apart. A single row or column: whatever its other stride. No unit stride, or
 * columns that overlap: CUDA_ERROR_INVALID_VALUE, nothing zeroed or launched. */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define C ((CUdeviceptr)0x100000)
#define STREAM ((CUstream)0x77)

static int base_memsets, base_launches;

static void section(void) {
  fake_cuda_set_current(fake_cuda_create_context(0));
  base_memsets = fake_cuda_num_memsets();
  base_launches = fake_cuda_num_launches();
}

static int memsets(void) { return fake_cuda_num_memsets() - base_memsets; }
static int launches(void) { return fake_cuda_num_launches() - base_launches; }

static void check_memset(int i, int bits, size_t pitch, size_t width, size_t height) {
  fake_cuda_memset m;
  CHECK(fake_cuda_get_memset(base_memsets + i, &m));
  CHECK_EQ(m.bits, bits);
  CHECK_EQ(m.two_d, 1);
  CHECK_EQ(m.ptr, C);
  CHECK_EQ(m.pitch, pitch);
  CHECK_EQ(m.width, width);
  CHECK_EQ(m.height, height);
  CHECK_EQ(m.value, 0);
  CHECK(m.stream == STREAM);
}

int main(void) {
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);

  /* row-major 4 x 6, rows 8 elements apart: 4 rows of 6 halfs, pitch 16 bytes */
  section();
  CHECK_EQ(zm(STREAM, C, 4, 6, 8, 1, 0), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 1);
  check_memset(0, 16, 16, 6, 4);
  CHECK_EQ(launches(), 1);

  /* column-major 4 x 6 (a transposed view), columns 5 elements apart: 6 rows of 4 halfs */
  section();
  CHECK_EQ(zm(STREAM, C, 4, 6, 1, 5, 0), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 1);
  check_memset(0, 16, 10, 4, 6);
  CHECK_EQ(launches(), 1);

  /* one row with a column stride of 3: 6 single elements, 6 bytes apart */
  section();
  CHECK_EQ(zm(STREAM, C, 1, 6, 100, 3, 0), CUDA_SUCCESS);
  check_memset(0, 16, 6, 1, 6);

  /* one column: its column stride does not matter */
  section();
  CHECK_EQ(zm(STREAM, C, 5, 1, 7, 99, 0), CUDA_SUCCESS);
  check_memset(0, 16, 14, 1, 5);

  /* no unit stride (every other element of a wider matrix): refused, nothing happens */
  section();
  CHECK_EQ(zm(STREAM, C, 4, 6, 12, 2, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 0);

  /* column-major with columns closer than a column's length (overlapping): refused */
  section();
  CHECK_EQ(zm(STREAM, C, 4, 6, 1, 3, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 0);

  /* a negative stride: refused */
  section();
  CHECK_EQ(zm(STREAM, C, 4, 6, 1, -4, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(memsets(), 0);

  /* an empty matrix (no rows): nothing to zero, an empty grid: nothing launched */
  section();
  CHECK_EQ(zm(STREAM, C, 0, 6, 1, 0, 0), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 0);

  printf("OK\n");
  return 0;
}
