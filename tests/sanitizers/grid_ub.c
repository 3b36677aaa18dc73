/* Grid arithmetic on extreme int64 arguments (tests/sanitizers/test_sanitizers.py builds this with
 * -fsanitize=address,undefined against the fake driver).
 *
 * Library `wide` (x: *fp32, n: i64, m: i64) with the grid
 *     n * m,  cdiv(n, m) + n / m,  -n / -m
 * The launcher must compute it without undefined behaviour (signed overflow, INT64_MIN / -1,
 * which also raises SIGFPE on x86) and reject the results it cannot launch with
 * CUDA_ERROR_INVALID_VALUE, launching nothing (docs/design.md: "negative, or ... beyond 32 bits:
 * CUDA_ERROR_INVALID_VALUE"; "never exit/abort").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_cuda.h"
#include "wide.h"

#define X ((CUdeviceptr)0x100000)

static int failures;

static void expect(int64_t n, int64_t m, CUresult want) {
  int before = fake_cuda_num_launches();
  CUresult got = wide(NULL, X, n, m, 0);
  if (got != want || fake_cuda_num_launches() != before + (want == CUDA_SUCCESS)) {
    fprintf(stderr, "FAIL wide(n=%lld, m=%lld) returned %d (expected %d), launches %d -> %d\n",
            (long long)n, (long long)m, (int)got, (int)want, before, fake_cuda_num_launches());
    ++failures;
  }
}

int main(void) {
  fake_cuda_reset();
  fake_cuda_set_current(fake_cuda_create_context(0));
  expect(3, 2, CUDA_SUCCESS); /* grid 6, 3, 1 */
  expect(INT64_MAX, 2, CUDA_ERROR_INVALID_VALUE);         /* n * m overflows */
  expect(INT64_MAX, INT64_MAX, CUDA_ERROR_INVALID_VALUE); /* n * m, n + m - 1 overflow */
  expect(INT64_MIN, 1, CUDA_ERROR_INVALID_VALUE);         /* -n overflows */
  expect(INT64_MIN, -1, CUDA_ERROR_INVALID_VALUE);        /* n * m and n / m overflow */
  expect(1, INT64_MIN, CUDA_ERROR_INVALID_VALUE);         /* -m overflows */
  if (failures) return 1;
  printf("PASS grid_extremes\n");
  return 0;
}
