/* rules_triton HIP runtime (see trt_hip_runtime.h): the HIP hooks of the runtime core
 * (trt_core.inc): no contexts (the current device is the cache key), hsaco images matched to the
 * device's gfx arch exactly, hipModuleLaunchKernel. Nothing here exits, aborts or prints. */
#include "trt_hip_runtime.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The driver table, module cache, scratch and launch that every backend shares. */
#include "trt_core.inc"

/* The current device: its ordinal is the cache key (HIP loads modules per device). */
static hipError_t trt_current_key(const trt_driver *d, unsigned long long *key) {
  int dev = -1;
  hipError_t r = d->get_device(&dev);
  if (r != hipSuccess) return r;
  if (dev < 0) return hipErrorInvalidDevice;
  *key = (unsigned long long)dev;
  return hipSuccess;
}

/* The device's gfx arch ("gfx942" of "gfx942:sramecc+:xnack-"), NUL-terminated in `arch`. */
static hipError_t trt_hip_device_arch(const trt_driver *d, int dev, char arch[64]) {
  /* hipDeviceProp_tR0600, as raw bytes (8-byte aligned, with room to spare). */
  unsigned long long props[(TRT_HIP_PROPS_R0600_SIZE + 1024) / 8];
  const char *name;
  size_t n = 0;
  hipError_t r;
  memset(props, 0, sizeof props);
  r = d->get_device_properties(props, dev);
  if (r != hipSuccess) return r;
  name = (const char *)props + TRT_HIP_PROPS_R0600_ARCH_OFFSET;
  while (n < TRT_HIP_PROPS_ARCH_SIZE && n < 63 && name[n] != '\0' && name[n] != ':') {
    arch[n] = name[n];
    ++n;
  }
  arch[n] = '\0';
  return hipSuccess;
}

static int trt_pick_target(const trt_target *targets, int n, const char *arch) {
  size_t len = strcspn(arch, ":");
  int i;
  for (i = 0; i < n; ++i)
    if (strlen(targets[i].arch) == len && strncmp(targets[i].arch, arch, len) == 0) return i;
  return -1;
}

static hipError_t trt_current_target(const trt_driver *d, unsigned long long key,
                                     const trt_target *targets, int n, int *target, int *sm) {
  char arch[64];
  hipError_t r = trt_hip_device_arch(d, (int)key, arch);
  if (r != hipSuccess) return r;
  *sm = 0; /* gfx archs have no SM number */
  *target = trt_pick_target(targets, n, arch);
  /* AMD code objects run only on their own arch: no fallback */
  return *target < 0 ? hipErrorNoBinaryForGpu : hipSuccess;
}

/* Loads the hsaco on device `key`. Caller holds trt_lock. */
static hipError_t trt_module_load(const trt_driver *d, const trt_kernel_info *k,
                                  unsigned long long key, hipModule_t *mod, hipFunction_t *fn) {
  char arch[64];
  hipError_t r = trt_hip_device_arch(d, (int)key, arch);
  if (r != hipSuccess) return r;
  if (strcmp(arch, k->arch) != 0) return hipErrorNoBinaryForGpu;
  /* A kernel that cannot get its LDS must never be launched. */
  if (k->shared > 0) {
    int max_shared = 0;
    r = d->device_get_attribute(&max_shared, TRT_HIP_ATTR_MAX_SHARED_PER_BLOCK, (int)key);
    if (r != hipSuccess) return r;
    if (max_shared < 0 || (unsigned int)max_shared < k->shared) return hipErrorNotSupported;
  }
  r = d->module_load_data(mod, k->image);
  if (r != hipSuccess) return r;
  r = d->module_get_function(fn, *mod, k->kernel_name);
  if (r != hipSuccess) {
    d->module_unload(*mod);
    *mod = NULL;
  }
  return r;
}

/* Cluster, cooperative and PDL launches: the compile tool refuses them for hip targets. */
static hipError_t trt_launch_ex(const trt_driver *d, const trt_kernel_info *k, hipFunction_t fn,
                                unsigned int gx, unsigned int gy, unsigned int gz,
                                hipStream_t stream, void **params) {
  (void)d, (void)k, (void)fn, (void)gx, (void)gy, (void)gz, (void)stream, (void)params;
  return hipErrorNotSupported;
}

/* Scratch is allocated per launch (hipMallocAsync/hipFreeAsync on the stream): the reusable
 * per-stream buffer of the CUDA runtime is not implemented for HIP. */
static int trt_launch_reusing_scratch(const trt_driver *d, unsigned long long key,
                                      const trt_kernel_info *k, hipFunction_t fn,
                                      hipStream_t stream, const int64_t grid[3],
                                      unsigned long long gx, unsigned long long ctas,
                                      void **params, hipDeviceptr_t scratch[2], hipError_t *r) {
  (void)d, (void)key, (void)k, (void)fn, (void)stream, (void)grid, (void)gx, (void)ctas;
  (void)params, (void)scratch, (void)r;
  return 0;
}
