/* rules_triton: the few HIP runtime declarations that HIP kernel libraries and their runtime
 * (trt_hip_runtime.c) use, so that neither ROCm nor its headers are needed to build them.
 *
 * Types, values and signatures are those of ROCm 6's <hip/hip_runtime_api.h> (checked against
 * the copy shipped in the triton wheel by tests/link/test_hip_runtime.py).  When the real header
 * is available (compiled with __HIP_PLATFORM_AMD__, e.g. by hipcc) it is used instead, so code
 * that mixes HIP and these libraries sees one set of types; include it first if in doubt. */
#ifndef RULES_TRITON_TRT_HIP_H_
#define RULES_TRITON_TRT_HIP_H_

#if !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H) && defined(__HIP_PLATFORM_AMD__) && \
    defined(__has_include)
#if __has_include(<hip/hip_runtime_api.h>)
#include <hip/hip_runtime_api.h>
#endif
#endif

#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_API_H
/* hipError_t: the values the runtime and the generated C use (the real enum has more; any
 * value the HIP runtime returns is passed through unchanged). */
typedef enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNotInitialized = 3,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidImage = 200,
  hipErrorInvalidContext = 201,
  hipErrorNoBinaryForGpu = 209,
  hipErrorSharedObjectSymbolNotFound = 302,
  hipErrorNotFound = 500,
  hipErrorLaunchOutOfResources = 701,
  hipErrorNotSupported = 801
} hipError_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef void *hipDeviceptr_t;
#endif

/* hipDeviceAttributeMaxSharedMemoryPerBlock of hipDeviceAttribute_t (ROCm 6). */
#define TRT_HIP_ATTR_MAX_SHARED_PER_BLOCK 74
/* hipDeviceProp_tR0600 (hipGetDevicePropertiesR0600, ROCm 6.0+): size and gcnArchName. */
#define TRT_HIP_PROPS_R0600_SIZE 1472
#define TRT_HIP_PROPS_R0600_ARCH_OFFSET 1160
#define TRT_HIP_PROPS_ARCH_SIZE 256

#endif /* RULES_TRITON_TRT_HIP_H_ */
