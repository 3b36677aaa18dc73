/* rules_triton HIP runtime: what every generated HIP kernel library calls
 * (runtime/trt_hip_runtime.c, the `@rules_triton//runtime:hip` cc_library).
 *
 * The HIP backend table of the runtime core (trt_core.h), with the same structure and guarantees
 * as the CUDA one (trt_runtime.h): compiled once, every symbol hidden (and prefixed trt_hip_, so
 * a process can link CUDA and HIP libraries side by side); no ROCm at build or link time:
 * libamdhip64.so is dlopen'ed on first use. HIP has no contexts: the current device is the cache
 * key, as HIP loads modules per device.
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

#include "trt_hip.h"

/* ---- the backend table (trt_core.h) ---------------------------------------------------------- */
#define TRT_STATUS hipError_t
#define TRT_SUCCESS hipSuccess
#define TRT_ERROR_INVALID_VALUE hipErrorInvalidValue
#define TRT_ERROR_OUT_OF_MEMORY hipErrorOutOfMemory
#define TRT_ERROR_NOT_SUPPORTED hipErrorNotSupported
#define TRT_ERROR_NO_DEVICE hipErrorNoDevice
#define TRT_ERROR_SYMBOL_NOT_FOUND hipErrorSharedObjectSymbolNotFound
#define TRT_ERROR_NO_BINARY hipErrorNoBinaryForGpu
#define TRT_STREAM hipStream_t
#define TRT_DEVICEPTR hipDeviceptr_t
#define TRT_MODULE hipModule_t
#define TRT_FUNCTION hipFunction_t
#define TRT_ARCH const char * /* the gfx arch: "gfx942", matched exactly */
#define TRT_RT(name) trt_hip_##name

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

typedef struct trt_driver {
  hipError_t status; /* hipSuccess once every required entry point resolved */
  trt_hip_pfn_get_device get_device;
  trt_hip_pfn_get_props get_device_properties; /* hipGetDevicePropertiesR0600 */
  trt_hip_pfn_device_get_attribute device_get_attribute;
  trt_hip_pfn_module_load_data module_load_data;
  trt_hip_pfn_module_unload module_unload;
  trt_hip_pfn_module_get_function module_get_function;
  trt_hip_pfn_launch_kernel launch_kernel; /* hipModuleLaunchKernel */
  /* optional: only scratch allocation needs them */
  trt_hip_pfn_malloc_async mem_alloc_async; /* hipMallocAsync */
  trt_hip_pfn_free_async mem_free_async;    /* hipFreeAsync */
} trt_driver;

/* trt_target, trt_kernel_info, trt_kernel and the functions every backend has. */
#include "trt_core.h"

#endif /* RULES_TRITON_TRT_HIP_RUNTIME_H_ */
