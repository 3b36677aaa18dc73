/* rules_triton runtime: what every generated CUDA kernel library calls (runtime/trt_runtime.c):
 * the CUDA table of the runtime core (trt_core.h) and the CUDA-only features.
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

/* ---- the backend table (trt_core.h) ---------------------------------------------------------- */
#define TRT_STATUS CUresult
#define TRT_SUCCESS CUDA_SUCCESS
#define TRT_ERROR_INVALID_VALUE CUDA_ERROR_INVALID_VALUE
#define TRT_ERROR_OUT_OF_MEMORY CUDA_ERROR_OUT_OF_MEMORY
#define TRT_ERROR_NOT_SUPPORTED CUDA_ERROR_NOT_SUPPORTED
#define TRT_ERROR_NO_DEVICE CUDA_ERROR_NO_DEVICE
#define TRT_ERROR_SYMBOL_NOT_FOUND CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND
#define TRT_ERROR_NO_BINARY CUDA_ERROR_NO_BINARY_FOR_GPU
#define TRT_STREAM CUstream
#define TRT_DEVICEPTR CUdeviceptr
#define TRT_MODULE CUmodule
#define TRT_FUNCTION CUfunction
#define TRT_ARCH int /* the SM: 80 for sm_80 */
#define TRT_RT(name) trt_##name

/* ---- driver entry points -------------------------------------------------------------------- */
#define TRT_LIBRARIES "libcuda.so.1"
#define TRT_API_MODULE_LOAD_DATA "cuModuleLoadData"
#define TRT_API_MODULE_UNLOAD "cuModuleUnload"
#define TRT_API_MODULE_GET_FUNCTION "cuModuleGetFunction"
#define TRT_API_LAUNCH_KERNEL "cuLaunchKernel"
#define TRT_API_MEM_ALLOC_ASYNC "cuMemAllocAsync" /* CUDA 11.2 */
#define TRT_API_MEM_FREE_ASYNC "cuMemFreeAsync"   /* CUDA 11.2 */
/* Beyond the core's: X(field, name, required, (parameters)); optional ones are NULL on older
 * drivers, and only the features that need them fail. */
#define TRT_BACKEND_ENTRIES(X)                                                                  \
  X(ctx_get_current, "cuCtxGetCurrent", 1, (CUcontext *))                                      \
  X(ctx_get_device, "cuCtxGetDevice", 1, (CUdevice *))                                         \
  X(device_get_attribute, "cuDeviceGetAttribute", 1, (int *, CUdevice_attribute, CUdevice))    \
  X(func_set_attribute, "cuFuncSetAttribute", 1, (CUfunction, CUfunction_attribute, int))      \
  X(ctx_get_id, "cuCtxGetId", 0, (CUcontext, unsigned long long *)) /* CUDA 12.0 */            \
  X(launch_kernel_ex, "cuLaunchKernelEx", 0,                        /* CUDA 11.8 */            \
    (const CUlaunchConfig *, CUfunction, void **, void **))                                    \
  /* CUDA 12.0 and 10.0: the reusable scratch per stream, never under capture */               \
  X(stream_get_id, "cuStreamGetId", 0, (CUstream, unsigned long long *))                       \
  X(stream_is_capturing, "cuStreamIsCapturing", 0, (CUstream, CUstreamCaptureStatus *))        \
  /* CUDA 12.0: host TMA descriptors */                                                        \
  X(tensor_map_encode_tiled, "cuTensorMapEncodeTiled", 0,                                      \
    (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,               \
     const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,        \
     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill))                     \
  /* reset_to_zero (CUDA 3.2; optional so that libraries without it never need them) */        \
  X(memset_d8_async, "cuMemsetD8Async", 0, (CUdeviceptr, unsigned char, size_t, CUstream))     \
  X(memset_d16_async, "cuMemsetD16Async", 0, (CUdeviceptr, unsigned short, size_t, CUstream))  \
  X(memset_d32_async, "cuMemsetD32Async", 0, (CUdeviceptr, unsigned int, size_t, CUstream))    \
  X(memset_d2d8_async, "cuMemsetD2D8Async", 0,                                                 \
    (CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream))                            \
  X(memset_d2d16_async, "cuMemsetD2D16Async", 0,                                               \
    (CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream))                           \
  X(memset_d2d32_async, "cuMemsetD2D32Async", 0,                                               \
    (CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream))

/* trt_target, trt_kernel_info, trt_kernel and the functions every backend has. */
#include "trt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RULES_TRITON_TRT_RUNTIME_H_ */
