/* rules_triton: checked int64 grid arithmetic of the generated launchers (triton_aot.grid.to_c).
 * A result that overflows, INT64_MIN / -1 and a zero divisor all give INT64_MIN, which every later
 * operation passes on and the launcher rejects (negative).  Inline: the arithmetic of every
 * launch.  Shared by the CUDA (trt_runtime.h) and HIP (trt_hip_runtime.h) runtimes. */
#ifndef RULES_TRITON_TRT_GRID_H_
#define RULES_TRITON_TRT_GRID_H_

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define TRT_GRID_INLINE static __inline__ __attribute__((unused, always_inline))
#else
#define TRT_GRID_INLINE static inline
#endif

#define TRT_GRID_INVALID INT64_MIN
TRT_GRID_INLINE int64_t trt_grid_add(int64_t a, int64_t b) {
  int64_t r;
  if (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID || __builtin_add_overflow(a, b, &r))
    return TRT_GRID_INVALID;
  return r;
}
TRT_GRID_INLINE int64_t trt_grid_sub(int64_t a, int64_t b) {
  int64_t r;
  if (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID || __builtin_sub_overflow(a, b, &r))
    return TRT_GRID_INVALID;
  return r;
}
TRT_GRID_INLINE int64_t trt_grid_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID || __builtin_mul_overflow(a, b, &r))
    return TRT_GRID_INVALID;
  return r;
}
TRT_GRID_INLINE int64_t trt_grid_neg(int64_t a) {
  return a == TRT_GRID_INVALID ? TRT_GRID_INVALID : -a;
}
TRT_GRID_INLINE int64_t trt_grid_div(int64_t a, int64_t b) {
  return (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID || b == 0) ? TRT_GRID_INVALID : a / b;
}
TRT_GRID_INLINE int64_t trt_grid_mod(int64_t a, int64_t b) {
  return (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID || b == 0) ? TRT_GRID_INVALID : a % b;
}
TRT_GRID_INLINE int64_t trt_grid_cdiv(int64_t a, int64_t b) {
  return trt_grid_div(trt_grid_sub(trt_grid_add(a, b), 1), b);
}

/* min(a, b) and max(a, b) of the grid language; an invalid operand makes the result invalid. */
TRT_GRID_INLINE int64_t trt_grid_min(int64_t a, int64_t b) {
  return (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID) ? TRT_GRID_INVALID : (a < b ? a : b);
}
TRT_GRID_INLINE int64_t trt_grid_max(int64_t a, int64_t b) {
  return (a == TRT_GRID_INVALID || b == TRT_GRID_INVALID) ? TRT_GRID_INVALID : (a > b ? a : b);
}

#endif /* RULES_TRITON_TRT_GRID_H_ */
