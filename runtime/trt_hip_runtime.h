/* rules_triton HIP runtime: what every generated HIP kernel library calls
 * (runtime/trt_hip_runtime.c, the `@rules_triton//runtime:hip` cc_library).
 *
 * The HIP counterpart of trt_runtime.h, with the same structure and guarantees: compiled once,
 * every symbol hidden (and prefixed trt_hip_, so a process can link CUDA and HIP libraries side
 * by side); no ROCm at build or link time: libamdhip64.so is dlopen'ed on first use.
 *
 * Error contract (hipError_t; see docs/design.md):
 *   libamdhip64 cannot be dlopen'ed                    -> hipErrorNoDevice
 *   a required entry point is missing                  -> hipErrorSharedObjectSymbolNotFound
 *   no hsaco for the current device's gfx arch         -> hipErrorNoBinaryForGpu
 *   LDS above the device's per-block limit, or scratch without hipMallocAsync
 *                                                      -> hipErrorNotSupported
 *   negative grid or grid beyond 32 bits               -> hipErrorInvalidValue
 *   out of memory for a cache slot                     -> hipErrorOutOfMemory
 *   any other HIP error is returned unchanged. Nothing here exits, aborts or prints. */
#ifndef RULES_TRITON_TRT_HIP_RUNTIME_H_
#define RULES_TRITON_TRT_HIP_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#include "trt_grid.h"
#include "trt_slots.h" /* the per-context cache lists */
#include "trt_hip.h"

#if defined(__GNUC__) || defined(__clang__)
#define TRT_HIP_INTERNAL __attribute__((visibility("hidden")))
#else
#define TRT_HIP_INTERNAL
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef hipError_t (*trt_hip_pfn_get_device)(int *);
typedef hipError_t (*trt_hip_pfn_get_props)(void *, int);
typedef hipError_t (*trt_hip_pfn_device_get_attribute)(int *, int, int);
typedef hipError_t (*trt_hip_pfn_module_load_data)(hipModule_t *, const void *);
typedef hipError_t (*trt_hip_pfn_module_unload)(hipModule_t);
typedef hipError_t (*trt_hip_pfn_module_get_function)(hipFunction_t *, hipModule_t, const char *);
typedef hipError_t (*trt_hip_pfn_launch_kernel)(hipFunction_t, unsigned int, unsigned int,
                                                unsigned int, unsigned int, unsigned int,
                                                unsigned int, unsigned int, hipStream_t, void **,
                                                void **);
typedef hipError_t (*trt_hip_pfn_malloc_async)(void **, size_t, hipStream_t);
typedef hipError_t (*trt_hip_pfn_free_async)(void *, hipStream_t);

/* The names below are the CUDA runtime's (trt_runtime.h) so that the generated C reads alike;
 * they are types, local to each translation unit: a library includes one runtime header. */
typedef struct trt_driver {
  hipError_t status; /* hipSuccess once every required entry point resolved */
  trt_hip_pfn_get_device get_device;
  trt_hip_pfn_get_props get_device_properties; /* hipGetDevicePropertiesR0600 */
  trt_hip_pfn_device_get_attribute device_get_attribute;
  trt_hip_pfn_module_load_data module_load_data;
  trt_hip_pfn_module_unload module_unload;
  trt_hip_pfn_module_get_function module_get_function;
  trt_hip_pfn_launch_kernel launch_kernel;
  /* optional: only scratch allocation needs them */
  trt_hip_pfn_malloc_async malloc_async;
  trt_hip_pfn_free_async free_async;
} trt_driver;

/* Per-device cache (key: the device ordinal), as trt_runtime.h's per-context one: prepended
 * under the lock, never freed, read lock-free; value 0 = nothing cached, else a hipFunction_t
 * (kernel slots) or target index + 1 (dispatcher slots). */

typedef struct trt_target {
  const char *arch; /* "gfx942": matched exactly against the device's gcnArchName */
} trt_target;

typedef struct trt_kernel_info {
  const char *kernel_name; /* hsaco entry point */
  const char *arch;        /* gfx arch of the hsaco */
  const char *hsaco;
  unsigned long long hsaco_size;
  unsigned int block_x; /* num_warps * wavefront size */
  unsigned int shared;  /* LDS bytes passed as sharedMemBytes, as Triton's launcher does */
  unsigned long long global_scratch_size; /* per workgroup */
  unsigned long long global_scratch_align;
  unsigned long long profile_scratch_size; /* per workgroup */
  unsigned long long profile_scratch_align;
} trt_kernel_info;

typedef struct trt_kernel {
  const trt_kernel_info *info;
  trt_slot *slots;
} trt_kernel;

/* Resolves the HIP runtime once per process; *out is valid even on error. */
TRT_HIP_INTERNAL hipError_t trt_hip_driver_get(const trt_driver **out);
/* Index into `targets` of the target for the current device, cached per device (lock-free hit);
 * also hands back the driver table and the device's cache key. */
TRT_HIP_INTERNAL hipError_t trt_hip_select_target(trt_slot **cache, const trt_target *targets,
                                                  int n, const trt_driver **drv,
                                                  unsigned long long *key, int *out);
/* The index of the target whose arch is `arch` (features after ':' ignored); -1 when none. */
TRT_HIP_INTERNAL int trt_hip_pick_target(const trt_target *targets, int n, const char *arch);
/* Loads `k` on the current device (idempotent). */
TRT_HIP_INTERNAL hipError_t trt_hip_kernel_load(trt_kernel *k);
/* Unloads `k` from the current device only; must not race with its launches there. */
TRT_HIP_INTERNAL hipError_t trt_hip_kernel_unload(trt_kernel *k);
/* Launches `k` on `grid` workgroups; params' last two entries point at scratch[0..1] (global
 * and profile scratch), filled in here.  d == NULL: look the driver and device up.  An empty
 * grid is hipSuccess with no launch. */
TRT_HIP_INTERNAL hipError_t trt_hip_kernel_launch_in(const trt_driver *d, unsigned long long key,
                                                     trt_kernel *k, hipStream_t stream,
                                                     const int64_t grid[3], void **params,
                                                     hipDeviceptr_t scratch[2]);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RULES_TRITON_TRT_HIP_RUNTIME_H_ */
