/* reset_to_zero against the fake driver (the `zero` library of libs.py):
 *   zero(stream, c_ptr, b_ptr, x_ptr, d_ptr, M, N, stride_cm, n, algo_id), zero_auto(...)
 * algo 0 zeroes c_ptr[M, N, stride_cm] (fp32, 2-D), algo 1 b_ptr[n] (fp16), x_ptr[M, N,
 * stride_cm] (i8, 2-D) and d_ptr[n] (fp64), algo 2 nothing. Checks that each region is one
 * memset of the right kind (element size from the type, narrowed by the address's alignment),
 * pointer, pitch, width, height and value, on the launch's stream, before the launch; that a
 * zero extent zeroes nothing and still launches, an empty grid zeroes and launches nothing,
 * invalid extents and failed loads change no memory and launch nothing, a failed memset is
 * returned and nothing launched, and that NAME_auto zeroes too. */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define C ((CUdeviceptr)0x100000)
#define B ((CUdeviceptr)0x200000)
#define X ((CUdeviceptr)0x300001) /* i8: any address */
#define D ((CUdeviceptr)0x400000)
#define STREAM ((CUstream)0x77)

/* Each section runs in a fresh context (the fake is reset once: the runtime's caches outlive a
 * reset) and counts records from its start. */
static int base_memsets, base_launches, base_loads;

static void section(void) {
  fake_cuda_set_current(fake_cuda_create_context(0));
  base_memsets = fake_cuda_num_memsets();
  base_launches = fake_cuda_num_launches();
  base_loads = fake_cuda_num_loads();
}

static int memsets(void) { return fake_cuda_num_memsets() - base_memsets; }
static int launches(void) { return fake_cuda_num_launches() - base_launches; }

static fake_cuda_memset memset_at(int i) {
  fake_cuda_memset m;
  CHECK(fake_cuda_get_memset(base_memsets + i, &m));
  return m;
}

static void check_memset(int i, int bits, int two_d, CUdeviceptr ptr, size_t pitch, size_t width,
                         size_t height) {
  fake_cuda_memset m = memset_at(i);
  CHECK_EQ(m.bits, bits);
  CHECK_EQ(m.two_d, two_d);
  CHECK_EQ(m.ptr, ptr);
  CHECK_EQ(m.pitch, pitch);
  CHECK_EQ(m.width, width);
  CHECK_EQ(m.height, height);
  CHECK_EQ(m.value, 0);
  CHECK(m.stream == STREAM);
}

static int last_tag_is(const char *tag) {
  fake_cuda_launch l = last_launch();
  return strcmp(l.tag, tag) == 0;
}

/* the last launch came after every memset, on the same stream */
static void check_launch_after_memsets(void) {
  fake_cuda_launch l = last_launch();
  int i;
  CHECK(l.stream == STREAM);
  for (i = 0; i < memsets(); ++i) CHECK(memset_at(i).seq < l.seq);
}

int main(void) {
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  /* algo 0, 16-byte aligned c (the c_ptr%16 variant): one cuMemsetD2D32Async, then the launch */
  section();
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 9, 10, 0), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 1);
  check_memset(0, 32, 1, C, 9 * 4, 7, 40);
  CHECK_EQ(launches(), 1);
  CHECK(last_tag_is("zero_a0_c16"));
  CHECK_EQ(last_launch().grid[0], 3);
  CHECK_EQ(last_launch().grid[1], 4);
  check_launch_after_memsets();

  /* the generic variant zeroes too; a 2-byte aligned c narrows to 16-bit units, an odd one to
   * bytes (width counts the call's units) */
  section();
  CHECK_EQ(zero(STREAM, C + 2, B, X, D, 5, 7, 8, 10, 0), CUDA_SUCCESS);
  check_memset(0, 16, 1, C + 2, 8 * 4, 14, 5);
  CHECK(last_tag_is("zero_a0_gen"));
  CHECK_EQ(zero(STREAM, C + 1, B, X, D, 5, 7, 8, 10, 0), CUDA_SUCCESS);
  check_memset(1, 8, 1, C + 1, 8 * 4, 28, 5);
  CHECK_EQ(launches(), 2);

  /* algo 1: three regions in parameter order: b (fp16, 1-D), x (i8, 2-D), d (fp64, 1-D: 32-bit
   * units, two per element) */
  section();
  CHECK_EQ(zero(STREAM, C, B, X, D, 3, 5, 6, 10, 1), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 3);
  check_memset(0, 16, 0, B, 0, 10, 1);
  check_memset(1, 8, 1, X, 6, 5, 3);
  check_memset(2, 32, 0, D, 0, 20, 1);
  CHECK_EQ(launches(), 1);
  CHECK(last_tag_is("zero_a1"));
  check_launch_after_memsets();

  /* algo 2 has no reset_to_zero: no memset */
  section();
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 9, 10, 2), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 1);

  /* a zero extent zeroes nothing and still launches */
  section();
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 0, 9, 10, 0), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 1);
  CHECK_EQ(zero(STREAM, C, B, X, D, 3, 0, 0, 0, 1), CUDA_SUCCESS); /* all three regions empty */
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 2);

  /* an empty grid (M = 0) launches nothing but still zeroes what is not empty, as Triton's
   * pre_hook runs whatever the grid */
  section();
  CHECK_EQ(zero(STREAM, C, B, X, D, 0, 5, 6, 10, 1), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 2); /* b and d; x has 0 rows */
  check_memset(0, 16, 0, B, 0, 10, 1);
  check_memset(1, 32, 0, D, 0, 20, 1);
  CHECK_EQ(launches(), 0);
  CHECK_EQ(fake_cuda_num_loads(), base_loads); /* nothing to launch: nothing loaded */

  /* invalid extents: CUDA_ERROR_INVALID_VALUE, no memset (not even of valid regions), no launch */
  section();
  CHECK_EQ(zero(STREAM, C, B, X, D, -1, 7, 9, 10, 0), CUDA_ERROR_INVALID_VALUE); /* rows < 0 */
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, -7, 9, 10, 0), CUDA_ERROR_INVALID_VALUE); /* cols < 0 */
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 6, 10, 0), CUDA_ERROR_INVALID_VALUE); /* stride < cols */
  CHECK_EQ(zero(STREAM, C, B, X, D, 3, 5, 6, -1, 1), CUDA_ERROR_INVALID_VALUE); /* count < 0 */
  CHECK_EQ(zero(STREAM, C, B, X, D, 3, 5, 4, 10, 1), CUDA_ERROR_INVALID_VALUE); /* x: stride < cols */
  CHECK_EQ(zero(STREAM, C, B, X, D, 0, 5, 6, -1, 1), CUDA_ERROR_INVALID_VALUE); /* empty grid too */
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 0);

  /* a failed load (checked before any memset) changes no memory */
  section();
  fake_cuda_fail("cuModuleLoadData", CUDA_ERROR_OUT_OF_MEMORY, 1);
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 9, 10, 0), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK_EQ(memsets(), 0);
  CHECK_EQ(launches(), 0);

  /* a failed memset is returned and nothing is launched (the kernel would accumulate into
   * whatever was there); the next call works */
  section();
  fake_cuda_fail("cuMemsetD2D32Async", CUDA_ERROR_ILLEGAL_ADDRESS, 1);
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 9, 10, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK_EQ(launches(), 0);
  fake_cuda_fail("cuMemsetD2D8Async", CUDA_ERROR_INVALID_VALUE, 1); /* algo 1's second region */
  CHECK_EQ(zero(STREAM, C, B, X, D, 3, 5, 6, 10, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(launches(), 0);
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 9, 10, 0), CUDA_SUCCESS);
  CHECK_EQ(launches(), 1);

  /* under CUDA-graph capture the memset goes to the capturing stream like the launch */
  section();
  fake_cuda_set_capturing(STREAM, 1);
  CHECK_EQ(zero(STREAM, C, B, X, D, 40, 7, 9, 10, 0), CUDA_SUCCESS);
  check_memset(0, 32, 1, C, 9 * 4, 7, 40);
  check_launch_after_memsets();
  fake_cuda_set_capturing(STREAM, 0);

  /* NAME_default and the tuned dispatch (no table: the default algo 0) zero too */
  section();
  CHECK_EQ(zero_default(STREAM, C, B, X, D, 40, 7, 9, 10), CUDA_SUCCESS);
  CHECK_EQ(zero_auto(STREAM, C, B, X, D, 40, 7, 9, 10), CUDA_SUCCESS);
  CHECK_EQ(memsets(), 2);
  check_memset(1, 32, 1, C, 9 * 4, 7, 40);
  CHECK_EQ(launches(), 2);
  check_launch_after_memsets();

  /* the algo info names the regions */
  CHECK(strstr(zero_get_algo_info(0), "reset_to_zero=c_ptr[M, N, stride_cm]") != NULL);
  CHECK(strstr(zero_get_algo_info(1), "reset_to_zero=b_ptr[n];x_ptr[M, N, stride_cm];d_ptr[n]") !=
        NULL);
  CHECK(strstr(zero_get_algo_info(2), "reset_to_zero") == NULL);
  printf("OK\n");
  return 0;
}
