/* rules_triton runtime core: what every backend's runtime (trt_runtime.h for CUDA,
 * trt_hip_runtime.h for HIP) declares alike, written once over the backend's table.
 *
 * Not included on its own: a backend header first defines its table, then includes this file.
 * The table is a set of macros, because C has no type parameters and the launch path must stay
 * as direct as a hand-written one (no function pointers between the generated launcher and the
 * driver's launch):
 *   TRT_STATUS                the API's status type (CUresult, hipError_t)
 *   TRT_SUCCESS, TRT_ERROR_INVALID_VALUE, TRT_ERROR_OUT_OF_MEMORY, TRT_ERROR_NOT_SUPPORTED,
 *   TRT_ERROR_NO_DEVICE, TRT_ERROR_SYMBOL_NOT_FOUND, TRT_ERROR_NO_BINARY
 *                             the statuses the core returns of its own (docs/design.md)
 *   TRT_STREAM, TRT_DEVICEPTR, TRT_MODULE, TRT_FUNCTION
 *                             the API's handle types
 *   TRT_ARCH                  the type that names a target (an SM number, a gfx name)
 *   TRT_RT(name)              the link name of a runtime function: trt_name, trt_hip_name, so
 *                             that a process can link libraries of several backends
 *   TRT_API_MODULE_LOAD_DATA, TRT_API_MODULE_UNLOAD, TRT_API_MODULE_GET_FUNCTION,
 *   TRT_API_LAUNCH_KERNEL, TRT_API_MEM_ALLOC_ASYNC, TRT_API_MEM_FREE_ASYNC
 *                             the names of the entry points the core calls (their signatures are
 *                             the same in every backend, over the types above)
 *   TRT_LIBRARIES             what to dlopen, in order: "libcuda.so.1"
 *   TRT_BACKEND_ENTRIES(X)    the backend's own entry points, X(field, name, required, (params))
 * The code over the same table is trt_core.inc; a backend's .c file includes it once. */
#ifndef RULES_TRITON_TRT_CORE_H_
#define RULES_TRITON_TRT_CORE_H_

#include <stddef.h>
#include <stdint.h>

#include "trt_grid.h"  /* the checked grid arithmetic the launchers call */
#include "trt_slots.h" /* the per-context (per-device) cache lists */

#if defined(__GNUC__) || defined(__clang__)
#define TRT_INTERNAL __attribute__((visibility("hidden")))
#define TRT_INLINE static __inline__ __attribute__((unused, always_inline))
#define TRT_THREAD_LOCAL __thread
#else
#define TRT_INTERNAL
#define TRT_INLINE static inline
#ifdef __cplusplus
#define TRT_THREAD_LOCAL thread_local
#else
#define TRT_THREAD_LOCAL _Thread_local
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The entry points the core calls, as X(field, name, required, (parameters)); required 0: only
 * the features that need it fail without it (here: scratch). Every one returns TRT_STATUS. */
#define TRT_CORE_ENTRIES(X)                                                                     \
  X(module_load_data, TRT_API_MODULE_LOAD_DATA, 1, (TRT_MODULE *, const void *))                \
  X(module_unload, TRT_API_MODULE_UNLOAD, 1, (TRT_MODULE))                                      \
  X(module_get_function, TRT_API_MODULE_GET_FUNCTION, 1,                                        \
    (TRT_FUNCTION *, TRT_MODULE, const char *))                                                 \
  X(launch_kernel, TRT_API_LAUNCH_KERNEL, 1,                                                    \
    (TRT_FUNCTION, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,        \
     unsigned int, unsigned int, TRT_STREAM, void **, void **))                                 \
  X(mem_alloc_async, TRT_API_MEM_ALLOC_ASYNC, 0, (TRT_DEVICEPTR *, size_t, TRT_STREAM))         \
  X(mem_free_async, TRT_API_MEM_FREE_ASYNC, 0, (TRT_DEVICEPTR, TRT_STREAM))

/* The driver table: every entry point, resolved once per process (NULL when missing). Pointers
 * of our own types, not the API header's names, so that its renaming macros (_v2, per-thread
 * default stream) cannot rewrite them. */
#define TRT_DRIVER_FIELD(field, name, required, params) TRT_STATUS(*field) params;
typedef struct trt_driver {
  TRT_STATUS status; /* TRT_SUCCESS once every required entry point resolved */
  TRT_CORE_ENTRIES(TRT_DRIVER_FIELD)
  TRT_BACKEND_ENTRIES(TRT_DRIVER_FIELD)
} trt_driver;

typedef struct trt_target {
  TRT_ARCH arch; /* e.g. 80 (CUDA), "gfx942" (HIP) */
  int has_ptx;   /* the dispatcher may fall back to this target's embedded PTX (CUDA) */
} trt_target;

/* A kernel's launch description: a static const of the generated file. Fields a backend has no
 * use for keep their neutral value (no PTX, one CTA per cluster, no cooperative or PDL launch):
 * the compile tool refuses those features for such targets. */
typedef struct trt_kernel_info {
  const char *kernel_name; /* the image's entry point */
  TRT_ARCH arch;           /* the image's target */
  const char *image;       /* cubin, hsaco */
  const char *ptx;         /* NUL-terminated PTX, or NULL when not embedded */
  unsigned int block_x;    /* num_warps * warp_size */
  unsigned int num_ctas;   /* cluster size along x */
  unsigned int shared;     /* dynamic shared memory (LDS) in bytes */
  int cooperative;
  int pdl;
  unsigned long long global_scratch_size; /* per CTA */
  unsigned long long global_scratch_align;
  unsigned long long profile_scratch_size; /* per CTA */
  unsigned long long profile_scratch_align;
} trt_kernel_info;

/* One loadable kernel: its static description and its per-context modules. */
typedef struct trt_kernel {
  const trt_kernel_info *info;
  trt_slot *slots;
} trt_kernel;

/* Resolves the driver once per process; *out is valid even on error (status says why). */
TRT_INTERNAL TRT_STATUS TRT_RT(driver_get)(const trt_driver **out);
/* Index into `targets` of the best target for the current context's device, cached per context
 * (lock-free hit); also hands back the driver table and the context's cache key. */
TRT_INTERNAL TRT_STATUS TRT_RT(select_target)(trt_slot **cache, const trt_target *targets, int n,
                                              const trt_driver **drv, unsigned long long *key,
                                              int *out);
/* The same, also handing back the device's SM (major * 10 + minor; 0 for a backend without SM
 * numbers) from the same cache: the tuned dispatch (NAME_auto) looks its table up by it. */
TRT_INTERNAL TRT_STATUS TRT_RT(select_target_sm)(trt_slot **cache, const trt_target *targets,
                                                 int n, const trt_driver **drv,
                                                 unsigned long long *key, int *out, int *sm);
/* Loads `k` into the current context (idempotent). */
TRT_INTERNAL TRT_STATUS TRT_RT(kernel_load)(trt_kernel *k);
/* Unloads `k` from the current context only.  Must not race with launches of the same kernel in
 * the same context (as with any module unload). */
TRT_INTERNAL TRT_STATUS TRT_RT(kernel_unload)(trt_kernel *k);
/* Launches `k` on a grid of `grid` (in clusters along x when num_ctas > 1, as Triton's own
 * launcher does).  The last two entries of `params` point at scratch[0] and scratch[1] (global
 * and profile scratch, which every Triton kernel takes); they are filled in here.  `d` and `key`
 * are the driver table and the current context's cache key when the caller (the dispatcher) has
 * them already; d == NULL means "look them up".  An empty grid is TRT_SUCCESS, no launch. */
TRT_INTERNAL TRT_STATUS TRT_RT(kernel_launch_slow)(const trt_driver *d, unsigned long long key,
                                                   trt_kernel *k, TRT_STREAM stream,
                                                   const int64_t grid[3], void **params,
                                                   TRT_DEVICEPTR scratch[2]);

/* The launch, inline: a plain launch of a kernel already loaded in this context (no scratch, no
 * cluster, cooperative or PDL attribute) goes straight to the driver's launch from the launcher,
 * so the dispatched path makes no call into the runtime beyond the target lookup. `info` is a
 * static const of the generated file, so the compiler folds the feature tests away. Everything
 * else (first use in a context, scratch, attributes, no driver table yet) takes
 * kernel_launch_slow, which has the same contract. */
TRT_INLINE TRT_STATUS TRT_RT(kernel_launch_in)(const trt_driver *d, unsigned long long key,
                                               trt_kernel *k, TRT_STREAM stream,
                                               const int64_t grid[3], void **params,
                                               TRT_DEVICEPTR scratch[2]) {
  const trt_kernel_info *info = k->info;
  const trt_slot *s;
  unsigned long long ctas = 0;
  if (d == NULL || info->num_ctas != 1 || info->cooperative || info->pdl ||
      info->global_scratch_size != 0 || info->profile_scratch_size != 0)
    return TRT_RT(kernel_launch_slow)(d, key, k, stream, grid, params, scratch);
  /* An empty grid is a successful no-op; the same checks as the slow path otherwise. */
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return TRT_SUCCESS;
  if (grid[0] < 0 || grid[1] < 0 || grid[2] < 0 || (unsigned long long)grid[0] > 0xFFFFFFFFull ||
      (unsigned long long)grid[1] > 0xFFFFFFFFull || (unsigned long long)grid[2] > 0xFFFFFFFFull ||
      __builtin_mul_overflow((unsigned long long)grid[0], (unsigned long long)grid[1], &ctas) ||
      __builtin_mul_overflow(ctas, (unsigned long long)grid[2], &ctas))
    return TRT_ERROR_INVALID_VALUE;
  for (s = __atomic_load_n(&k->slots, __ATOMIC_ACQUIRE); s != NULL; s = s->next) {
    if (s->key == key) {
      uintptr_t v = __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
      if (v == 0) break;
      return d->launch_kernel((TRT_FUNCTION)v, (unsigned int)grid[0], (unsigned int)grid[1],
                              (unsigned int)grid[2], info->block_x, 1, 1, info->shared, stream,
                              params, NULL);
    }
  }
  return TRT_RT(kernel_launch_slow)(d, key, k, stream, grid, params, scratch);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RULES_TRITON_TRT_CORE_H_ */
