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

/* ---- runtime entry points -------------------------------------------------------------------
 * The unversioned library first (what ROCm's ldconfig entry and Triton's driver use), then the
 * sonames ROCm 7 and 6 install. */
#define TRT_LIBRARIES "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"
#define TRT_API_MODULE_LOAD_DATA "hipModuleLoadData"
#define TRT_API_MODULE_UNLOAD "hipModuleUnload"
#define TRT_API_MODULE_GET_FUNCTION "hipModuleGetFunction"
#define TRT_API_LAUNCH_KERNEL "hipModuleLaunchKernel"
#define TRT_API_MEM_ALLOC_ASYNC "hipMallocAsync" /* only scratch needs these two */
#define TRT_API_MEM_FREE_ASYNC "hipFreeAsync"
/* hipGetDevicePropertiesR0600 (ROCm 6.0+) is read as raw bytes (trt_hip.h's offsets). */
#define TRT_BACKEND_ENTRIES(X)                                                                  \
  X(get_device, "hipGetDevice", 1, (int *))                                                    \
  X(get_device_properties, "hipGetDevicePropertiesR0600", 1, (void *, int))                    \
  X(device_get_attribute, "hipDeviceGetAttribute", 1, (int *, int, int))

/* trt_target, trt_kernel_info, trt_kernel and the functions every backend has. */
#include "trt_core.h"

#endif /* RULES_TRITON_TRT_HIP_RUNTIME_H_ */
