/* rules_triton runtime: what every generated kernel library calls (runtime/trt_runtime.c).
 *
 * Compiled once (the `@rules_triton//runtime` cc_library), not pasted into each variant: one
 * driver table, one lock and one once-flag per process, shared by every kernel library linked
 * into it. Every symbol has hidden visibility, so nothing here is exported from a shared library;
 * only the generated C API is.
 *
 * No libcuda, no toolkit and no extra runtime library is needed at build or link time: the driver
 * is dlopen'ed on first use (link with -ldl -lpthread; on glibc >= 2.34 both are part of libc).
 * Compiles as C99+ and as C++11+ with -Wall -Wextra -Wpedantic.
 *
 * Error contract (see docs/design.md):
 *   libcuda.so.1 cannot be dlopen'ed            -> CUDA_ERROR_NO_DEVICE
 *   a required driver entry point is missing     -> CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND
 *   called before cuInit                         -> CUDA_ERROR_NOT_INITIALIZED (the driver's)
 *   no current context                           -> CUDA_ERROR_INVALID_CONTEXT
 *   no cubin/PTX usable on the context's device  -> CUDA_ERROR_NO_BINARY_FOR_GPU
 *   shared memory above the device opt-in limit, or a launch feature the driver lacks
 *                                                -> CUDA_ERROR_NOT_SUPPORTED
 *   negative grid or grid beyond 32 bits         -> CUDA_ERROR_INVALID_VALUE
 *   a host tensor descriptor TMA cannot address (base not 16-byte aligned, a stride not a
 *   multiple of 16 bytes, last stride not 1, a dimension outside [1, INT32_MAX])
 *                                                -> CUDA_ERROR_INVALID_VALUE, nothing launched
 *   a driver without cuTensorMapEncodeTiled (< 12.0) for such a kernel -> CUDA_ERROR_NOT_SUPPORTED
 *   a reset_to_zero region with a negative extent, a row stride below its row length, or a size
 *   beyond the address space                     -> CUDA_ERROR_INVALID_VALUE, nothing zeroed or
 *                                                   launched
 *   any other driver error is returned unchanged. Nothing here exits, aborts or prints.
 */
#ifndef RULES_TRITON_TRT_RUNTIME_H_
#define RULES_TRITON_TRT_RUNTIME_H_

#include <cuda.h>
#include <stdint.h>

#include "trt_grid.h" /* the checked grid arithmetic the launchers call */
#include "trt_slots.h" /* the per-context cache lists */

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

/* ---- driver entry points --------------------------------------------------------------------
 * Our own pointer typedefs (not cuda.h's names) so that -DCUDA_API_PER_THREAD_DEFAULT_STREAM or
 * the _v2 renaming macros in cuda.h cannot rewrite them. */
typedef CUresult (*trt_pfn_ctx_get_current)(CUcontext *);
typedef CUresult (*trt_pfn_ctx_get_id)(CUcontext, unsigned long long *);
typedef CUresult (*trt_pfn_ctx_get_device)(CUdevice *);
typedef CUresult (*trt_pfn_device_get_attribute)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*trt_pfn_module_load_data)(CUmodule *, const void *);
typedef CUresult (*trt_pfn_module_unload)(CUmodule);
typedef CUresult (*trt_pfn_module_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*trt_pfn_func_set_attribute)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*trt_pfn_launch_kernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                          unsigned int, unsigned int, unsigned int, unsigned int,
                                          CUstream, void **, void **);
typedef CUresult (*trt_pfn_launch_kernel_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*trt_pfn_mem_alloc_async)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*trt_pfn_mem_free_async)(CUdeviceptr, CUstream);
typedef CUresult (*trt_pfn_stream_get_id)(CUstream, unsigned long long *);
typedef CUresult (*trt_pfn_stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (*trt_pfn_memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*trt_pfn_memset_d16_async)(CUdeviceptr, unsigned short, size_t, CUstream);
typedef CUresult (*trt_pfn_memset_d32_async)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*trt_pfn_memset_d2d8_async)(CUdeviceptr, size_t, unsigned char, size_t, size_t,
                                              CUstream);
typedef CUresult (*trt_pfn_memset_d2d16_async)(CUdeviceptr, size_t, unsigned short, size_t,
                                               size_t, CUstream);
typedef CUresult (*trt_pfn_memset_d2d32_async)(CUdeviceptr, size_t, unsigned int, size_t, size_t,
                                               CUstream);
typedef CUresult (*trt_pfn_tensor_map_encode_tiled)(
    CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
    const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

typedef struct trt_driver {
  CUresult status; /* CUDA_SUCCESS once every required entry point resolved */
  /* required (present in every driver that can run Triton kernels) */
  trt_pfn_ctx_get_current ctx_get_current;
  trt_pfn_ctx_get_device ctx_get_device;
  trt_pfn_device_get_attribute device_get_attribute;
  trt_pfn_module_load_data module_load_data;
  trt_pfn_module_unload module_unload;
  trt_pfn_module_get_function module_get_function;
  trt_pfn_func_set_attribute func_set_attribute;
  trt_pfn_launch_kernel launch_kernel;
  /* optional: NULL on older drivers; only the features that need them fail */
  trt_pfn_ctx_get_id ctx_get_id;             /* CUDA 12.0 */
  trt_pfn_launch_kernel_ex launch_kernel_ex; /* CUDA 11.8 */
  trt_pfn_mem_alloc_async mem_alloc_async;   /* CUDA 11.2 */
  trt_pfn_mem_free_async mem_free_async;     /* CUDA 11.2 */
  trt_pfn_stream_get_id stream_get_id;       /* CUDA 12.0: reusable scratch per stream */
  trt_pfn_stream_is_capturing stream_is_capturing; /* CUDA 10.0: no reuse under capture */
  trt_pfn_tensor_map_encode_tiled tensor_map_encode_tiled; /* CUDA 12.0: host TMA descriptors */
  /* reset_to_zero (CUDA 3.2; optional so that libraries without it never need them) */
  trt_pfn_memset_d8_async memset_d8_async;
  trt_pfn_memset_d16_async memset_d16_async;
  trt_pfn_memset_d32_async memset_d32_async;
  trt_pfn_memset_d2d8_async memset_d2d8_async;
  trt_pfn_memset_d2d16_async memset_d2d16_async;
  trt_pfn_memset_d2d32_async memset_d2d32_async;
} trt_driver;


typedef struct trt_target {
  int arch;    /* e.g. 80 */
  int has_ptx; /* the dispatcher may fall back to this target's embedded PTX */
} trt_target;

typedef struct trt_kernel_info {
  const char *kernel_name; /* cubin entry point */
  int arch;                /* target SM of the cubin */
  const char *cubin;
  const char *ptx;       /* NUL-terminated PTX, or NULL when not embedded */
  unsigned int block_x;  /* num_warps * warp_size */
  unsigned int num_ctas; /* cluster size along x */
  unsigned int shared;   /* dynamic shared memory in bytes */
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
TRT_INTERNAL CUresult trt_driver_get(const trt_driver **out);
/* Cache key of the current context (cuCtxGetId, or the CUcontext on drivers without it). */
TRT_INTERNAL CUresult trt_context_key(const trt_driver *d, unsigned long long *key);
/* Index into `targets` of the best target for the current context's device, cached per context
 * (lock-free hit); also hands back the driver table and the context's cache key. */
TRT_INTERNAL CUresult trt_select_target(trt_slot **cache, const trt_target *targets, int n,
                                        const trt_driver **drv, unsigned long long *key, int *out);
/* The same, also handing back the device's SM (major * 10 + minor) from the same cache: the tuned
 * dispatch (NAME_auto) looks its table up by it. */
TRT_INTERNAL CUresult trt_select_target_sm(trt_slot **cache, const trt_target *targets, int n,
                                           const trt_driver **drv, unsigned long long *key,
                                           int *out, int *sm);
/* Exact SM, else the highest compatible lower SM of the same major, else the highest target whose
 * PTX can be JIT-compiled for this SM; -1 when nothing can run. */
TRT_INTERNAL int trt_pick_target(const trt_target *targets, int n, int sm);
/* Loads `k` into the current context (idempotent). */
TRT_INTERNAL CUresult trt_kernel_load(trt_kernel *k);
/* Unloads `k` from the current context only.  Must not race with launches of the same kernel in
 * the same context (as with any cuModuleUnload). */
TRT_INTERNAL CUresult trt_kernel_unload(trt_kernel *k);
/* Launches `k` on a grid of `grid` (in clusters along x when num_ctas > 1, as Triton's own
 * launcher does).  The last two entries of `params` point at scratch[0] and scratch[1] (global
 * and profile scratch, which every Triton kernel takes); they are filled in here.  `d` and `key`
 * are the driver table and the current context's cache key when the caller (the dispatcher) has
 * them already; d == NULL means "look them up".  An empty grid is CUDA_SUCCESS, no launch. */
TRT_INTERNAL CUresult trt_kernel_launch_slow(const trt_driver *d, unsigned long long key,
                                             trt_kernel *k, CUstream stream,
                                             const int64_t grid[3], void **params,
                                             CUdeviceptr scratch[2]);

/* ---- reset_to_zero ----------------------------------------------------------------------------
 * A region the launcher zeroes before the launch (Triton's reset_to_zero, a split-K config's
 * pre_hook=init_to_zero): `rows` rows of `cols` contiguous elements of `elem_size` bytes,
 * `row_stride` elements apart, from `ptr`. A 1-D region (`count` elements) has two_d == 0,
 * rows == 1, cols == count (row_stride unused). The extents are the launcher's int64 expressions,
 * checked here. */
typedef struct trt_zero_region {
  CUdeviceptr ptr;
  unsigned int elem_size; /* bytes per element, from the pointer's Triton type */
  int two_d;              /* 1: cuMemsetD2D*Async with pitch row_stride * elem_size */
  int64_t rows, cols, row_stride;
  /* 1 for 1-D regions and rows of contiguous elements; a strided matrix (4 extents) may have
   * col_stride != 1: it is then zeroed along its columns when row_stride == 1 (column-major) or
   * rows == 1, and refused (CUDA_ERROR_INVALID_VALUE) when neither dimension is contiguous. */
  int64_t col_stride;
} trt_zero_region;

/* trt_kernel_launch_slow's contract, with `zero[0..n)` zeroed on `stream` first: every check
 * (grid, regions, driver entry points, loading the kernel) comes before the first memset, so a
 * refused call changes no memory; a failed memset is returned and nothing is launched. Each
 * region is one cuMemsetD{8,16,32}Async (1-D) or cuMemsetD2D{8,16,32}Async (2-D), the widest
 * unit that divides the element size, the address and (2-D) the pitch; on a capturing stream
 * they become memset nodes of the graph. An empty region zeroes nothing; an empty grid zeroes the
 * regions and launches nothing (as Triton's pre_hook, which runs whatever the grid: accumulating
 * nothing leaves zeros). A call with nothing to zero and an empty grid needs no driver. */
TRT_INTERNAL CUresult trt_kernel_launch_zeroed(const trt_driver *d, unsigned long long key,
                                               trt_kernel *k, CUstream stream,
                                               const int64_t grid[3], void **params,
                                               CUdeviceptr scratch[2], const trt_zero_region *zero,
                                               int n);

/* Device attributes that grids may read (triton_aot.grid.DEVICE_ATTRS). */
enum trt_attr {
  TRT_ATTR_NUM_SMS = 0, /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
  TRT_NUM_ATTRS
};
/* Device attribute `which` of the current context's device as int64, read from the driver once
 * per context and cached (lock-free hit).  *d / *key: the driver table and the context's cache key
 * when the caller has them (the dispatcher), else *d == NULL: looked up here and handed back, so
 * that the launch that follows does not look them up again. */
TRT_INTERNAL CUresult trt_device_attribute(const trt_driver **d, unsigned long long *key,
                                           int which, int64_t *out);

/* ---- host tensor descriptors (tensordesc<...> kernel parameters) ------------------------------
 * What triton.compile decided for one descriptor parameter of one variant (its tensordesc_meta):
 * a static const of the generated launcher. Dimensions are in Triton's order, outermost first. */
typedef struct trt_tma_info {
  int data_type;          /* CUtensorMapDataType */
  int rank;               /* 1..5 */
  int swizzle;            /* CUtensorMapSwizzle */
  unsigned int elem_size; /* bytes per element */
  unsigned int box[5];    /* the TMA box (the block shape, each dimension at most 256) */
} trt_tma_info;

/* The last encoded CUtensorMap of one descriptor parameter of one launcher, per thread (the
 * launcher's `static TRT_THREAD_LOCAL`): reused while base, shape and strides are unchanged. The
 * encoding depends on nothing else (not the context: device addresses are process-wide), and
 * cuLaunchKernel copies the parameters before it returns, so the map can be passed by address. */
typedef struct trt_tma_cache {
  CUtensorMap map; /* 64-byte aligned by cuda.h */
  int valid;
  CUdeviceptr base;
  int64_t shape[5];
  int64_t strides[5]; /* elements, as TensorDescriptor(base, shape, strides) */
} trt_tma_cache;

/* Checks what TMA requires (see the error contract above) and encodes c->map exactly as Triton's
 * launcher does (cuTensorMapEncodeTiled: dimensions reversed, byte strides, element strides 1,
 * interleave none, L2 promotion 128B, out-of-bounds fill none); c->valid only on success. A call
 * refused before the driver is asked leaves the cache as it was.
 * d == NULL: the driver is looked up here. */
TRT_INTERNAL CUresult trt_tma_encode_slow(const trt_driver *d, const trt_tma_info *info,
                                          trt_tma_cache *c, CUdeviceptr base,
                                          const int64_t *shape, const int64_t *strides);

/* The launcher's call: reuses c->map when base, shape and strides equal the last encoded ones
 * (no driver call), else encodes (trt_tma_encode_slow). On success dims[] holds the shape as the
 * int32 kernel parameters Triton passes after the map. */
TRT_INLINE CUresult trt_tma_encode(const trt_driver *d, const trt_tma_info *info, trt_tma_cache *c,
                                   CUdeviceptr base, const int64_t *shape, const int64_t *strides,
                                   int32_t *dims) {
  int i, same = c->valid && c->base == base;
  for (i = 0; same && i < info->rank; ++i)
    same = c->shape[i] == shape[i] && c->strides[i] == strides[i];
  if (!same) {
    CUresult r = trt_tma_encode_slow(d, info, c, base, shape, strides);
    if (r != CUDA_SUCCESS) return r;
  }
  /* checked to fit by the encode that made c valid for exactly this shape */
  for (i = 0; i < info->rank; ++i) dims[i] = (int32_t)shape[i];
  return CUDA_SUCCESS;
}

/* The launch, inline: a plain launch of a kernel already loaded in this context (no scratch, no
 * cluster, cooperative or PDL attribute) goes straight to cuLaunchKernel from the launcher, so
 * the dispatched path makes no call into the runtime beyond the target lookup. `info` is a static
 * const of the generated file, so the compiler folds the feature tests away. Everything else
 * (first use in a context, scratch, cuLaunchKernelEx, no driver table yet) takes
 * trt_kernel_launch_slow, which has the same contract. */
TRT_INLINE CUresult trt_kernel_launch_in(const trt_driver *d, unsigned long long key,
                                         trt_kernel *k, CUstream stream, const int64_t grid[3],
                                         void **params, CUdeviceptr scratch[2]) {
  const trt_kernel_info *info = k->info;
  const trt_slot *s;
  unsigned long long ctas = 0;
  if (d == NULL || info->num_ctas != 1 || info->cooperative || info->pdl ||
      info->global_scratch_size != 0 || info->profile_scratch_size != 0)
    return trt_kernel_launch_slow(d, key, k, stream, grid, params, scratch);
  /* An empty grid is a successful no-op; the same checks as the slow path otherwise. */
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return CUDA_SUCCESS;
  if (grid[0] < 0 || grid[1] < 0 || grid[2] < 0 || (unsigned long long)grid[0] > 0xFFFFFFFFull ||
      (unsigned long long)grid[1] > 0xFFFFFFFFull || (unsigned long long)grid[2] > 0xFFFFFFFFull ||
      __builtin_mul_overflow((unsigned long long)grid[0], (unsigned long long)grid[1], &ctas) ||
      __builtin_mul_overflow(ctas, (unsigned long long)grid[2], &ctas))
    return CUDA_ERROR_INVALID_VALUE;
  for (s = __atomic_load_n(&k->slots, __ATOMIC_ACQUIRE); s != NULL; s = s->next) {
    if (s->key == key) {
      uintptr_t v = __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
      if (v == 0) break;
      return d->launch_kernel((CUfunction)v, (unsigned int)grid[0], (unsigned int)grid[1],
                              (unsigned int)grid[2], info->block_x, 1, 1, info->shared, stream,
                              params, NULL);
    }
  }
  return trt_kernel_launch_slow(d, key, k, stream, grid, params, scratch);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RULES_TRITON_TRT_RUNTIME_H_ */
