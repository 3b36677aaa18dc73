/* rules_triton HIP runtime (see trt_hip_runtime.h): runtime table, per-device module cache,
 * launch.  Mirrors trt_runtime.c; what differs is HIP's: no contexts (the current device is the
 * cache key), hsaco images matched to the device's gfx arch exactly, hipModuleLaunchKernel.
 * Nothing here exits, aborts or prints. */
#include "trt_hip_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRT_LOAD_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define TRT_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static trt_driver trt_hip_drv;
static pthread_once_t trt_hip_drv_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t trt_hip_lock = PTHREAD_MUTEX_INITIALIZER;

#define TRT_RESOLVE(lib, field, name)                       \
  do {                                                      \
    void *trt_sym_ = dlsym((lib), (name));                  \
    memcpy(&trt_hip_drv.field, &trt_sym_, sizeof trt_sym_); \
  } while (0)

/* The unversioned name first (what ROCm's ldconfig entry and Triton's driver use), then the
 * sonames ROCm 7 and 6 install. */
static const char *const trt_hip_lib_names[] = {"libamdhip64.so", "libamdhip64.so.7",
                                                "libamdhip64.so.6", NULL};

static void trt_hip_driver_init(void) {
  void *lib = NULL;
  int i;
  for (i = 0; lib == NULL && trt_hip_lib_names[i] != NULL; ++i)
    lib = dlopen(trt_hip_lib_names[i], RTLD_NOW | RTLD_LOCAL); /* never dlclose'd */
  if (lib == NULL) {
    trt_hip_drv.status = hipErrorNoDevice;
    return;
  }
  TRT_RESOLVE(lib, get_device, "hipGetDevice");
  TRT_RESOLVE(lib, get_device_properties, "hipGetDevicePropertiesR0600");
  TRT_RESOLVE(lib, device_get_attribute, "hipDeviceGetAttribute");
  TRT_RESOLVE(lib, module_load_data, "hipModuleLoadData");
  TRT_RESOLVE(lib, module_unload, "hipModuleUnload");
  TRT_RESOLVE(lib, module_get_function, "hipModuleGetFunction");
  TRT_RESOLVE(lib, launch_kernel, "hipModuleLaunchKernel");
  TRT_RESOLVE(lib, malloc_async, "hipMallocAsync");
  TRT_RESOLVE(lib, free_async, "hipFreeAsync");
  if (!trt_hip_drv.get_device || !trt_hip_drv.get_device_properties ||
      !trt_hip_drv.device_get_attribute || !trt_hip_drv.module_load_data ||
      !trt_hip_drv.module_unload || !trt_hip_drv.module_get_function ||
      !trt_hip_drv.launch_kernel) {
    trt_hip_drv.status = hipErrorSharedObjectSymbolNotFound;
    return;
  }
  trt_hip_drv.status = hipSuccess;
}

hipError_t trt_hip_driver_get(const trt_driver **out) {
  pthread_once(&trt_hip_drv_once, trt_hip_driver_init);
  *out = &trt_hip_drv;
  return trt_hip_drv.status;
}

/* The current device: its ordinal is the cache key (HIP loads modules per device). */
static hipError_t trt_hip_device(const trt_driver *d, unsigned long long *key) {
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

int trt_hip_pick_target(const trt_target *targets, int n, const char *arch) {
  size_t len = strcspn(arch, ":");
  int i;
  for (i = 0; i < n; ++i)
    if (strlen(targets[i].arch) == len && strncmp(targets[i].arch, arch, len) == 0) return i;
  return -1;
}


/* Loads the hsaco on device `key`. Caller holds trt_hip_lock. */
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
  r = d->module_load_data(mod, k->hsaco);
  if (r != hipSuccess) return r;
  r = d->module_get_function(fn, *mod, k->kernel_name);
  if (r != hipSuccess) {
    d->module_unload(*mod);
    *mod = NULL;
  }
  return r;
}

static hipError_t trt_kernel_load_key(const trt_driver *d, trt_kernel *k, unsigned long long key,
                                      hipFunction_t *out) {
  hipError_t r = hipSuccess;
  trt_slot *s;
  pthread_mutex_lock(&trt_hip_lock);
  s = trt_slot_find(&k->slots, key);
  if (s != NULL && s->value != 0) {
    *out = (hipFunction_t)s->value;
  } else {
    hipModule_t mod = NULL;
    hipFunction_t fn = NULL;
    r = trt_module_load(d, k->info, key, &mod, &fn);
    if (r == hipSuccess) {
      s = trt_slot_get_or_add(&k->slots, key);
      if (s == NULL) {
        d->module_unload(mod);
        r = hipErrorOutOfMemory;
      } else {
        s->module = mod;
        TRT_STORE_RELEASE(&s->value, (uintptr_t)fn);
        *out = fn;
      }
    }
  }
  pthread_mutex_unlock(&trt_hip_lock);
  return r;
}

static hipError_t trt_kernel_function_in(const trt_driver *d, trt_kernel *k,
                                         unsigned long long key, hipFunction_t *out) {
  trt_slot *s = trt_slot_find(&k->slots, key);
  if (s != NULL) {
    uintptr_t v = TRT_LOAD_ACQUIRE(&s->value);
    if (v != 0) {
      *out = (hipFunction_t)v;
      return hipSuccess;
    }
  }
  return trt_kernel_load_key(d, k, key, out);
}

static hipError_t trt_kernel_function(trt_kernel *k, const trt_driver **drv,
                                      hipFunction_t *out) {
  unsigned long long key = 0;
  hipError_t r = trt_hip_driver_get(drv);
  if (r != hipSuccess) return r;
  r = trt_hip_device(*drv, &key);
  if (r != hipSuccess) return r;
  return trt_kernel_function_in(*drv, k, key, out);
}

hipError_t trt_hip_kernel_load(trt_kernel *k) {
  const trt_driver *d;
  hipFunction_t fn;
  return trt_kernel_function(k, &d, &fn);
}

hipError_t trt_hip_kernel_unload(trt_kernel *k) {
  const trt_driver *d;
  unsigned long long key = 0;
  trt_slot *s;
  hipError_t r = trt_hip_driver_get(&d);
  if (r != hipSuccess) return r;
  r = trt_hip_device(d, &key);
  if (r != hipSuccess) return r;
  pthread_mutex_lock(&trt_hip_lock);
  s = trt_slot_find(&k->slots, key);
  if (s != NULL && s->value != 0) {
    TRT_STORE_RELEASE(&s->value, (uintptr_t)0);
    r = d->module_unload((hipModule_t)s->module);
    s->module = NULL;
  }
  pthread_mutex_unlock(&trt_hip_lock);
  return r;
}

/* Stream-ordered scratch, `per_wg` bytes for each of `wgs` workgroups, aligned to `align`
 * (hipMallocAsync gives 256 bytes; larger alignments over-allocate and round up). */
static hipError_t trt_scratch_alloc(const trt_driver *d, unsigned long long per_wg,
                                    unsigned long long align, unsigned long long wgs,
                                    hipStream_t stream, void **raw, hipDeviceptr_t *aligned) {
  unsigned long long bytes = 0;
  *raw = NULL;
  *aligned = NULL;
  if (per_wg == 0) return hipSuccess;
  if (d->malloc_async == NULL || d->free_async == NULL) return hipErrorNotSupported;
  if (align == 0 || (align & (align - 1)) != 0) return hipErrorInvalidValue;
  if (__builtin_mul_overflow(per_wg, wgs, &bytes)) return hipErrorInvalidValue;
  if (align > 256 && __builtin_add_overflow(bytes, align - 1, &bytes)) return hipErrorInvalidValue;
  if ((unsigned long long)(size_t)bytes != bytes) return hipErrorInvalidValue;
  {
    hipError_t r = d->malloc_async(raw, (size_t)bytes, stream);
    if (r != hipSuccess) {
      *raw = NULL;
      return r;
    }
  }
  *aligned = (hipDeviceptr_t)(((uintptr_t)*raw + (uintptr_t)(align - 1)) & ~(uintptr_t)(align - 1));
  return hipSuccess;
}

hipError_t trt_hip_kernel_launch_in(const trt_driver *d, unsigned long long key, trt_kernel *k,
                                    hipStream_t stream, const int64_t grid[3], void **params,
                                    hipDeviceptr_t scratch[2]) {
  const trt_kernel_info *info = k->info;
  hipFunction_t fn = NULL;
  void *gs_raw = NULL, *ps_raw = NULL;
  unsigned long long wgs = 0;
  hipError_t r, r2;
  /* An empty grid is a successful no-op; it needs neither the runtime nor a device. */
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return hipSuccess;
  if (grid[0] < 0 || grid[1] < 0 || grid[2] < 0) return hipErrorInvalidValue;
  if ((unsigned long long)grid[0] > 0xFFFFFFFFull || (unsigned long long)grid[1] > 0xFFFFFFFFull ||
      (unsigned long long)grid[2] > 0xFFFFFFFFull)
    return hipErrorInvalidValue;
  if (__builtin_mul_overflow((unsigned long long)grid[0], (unsigned long long)grid[1], &wgs) ||
      __builtin_mul_overflow(wgs, (unsigned long long)grid[2], &wgs))
    return hipErrorInvalidValue;
  if (d == NULL)
    r = trt_kernel_function(k, &d, &fn);
  else
    r = trt_kernel_function_in(d, k, key, &fn);
  if (r != hipSuccess) return r;
  r = trt_scratch_alloc(d, info->global_scratch_size, info->global_scratch_align, wgs, stream,
                        &gs_raw, &scratch[0]);
  if (r != hipSuccess) return r;
  r = trt_scratch_alloc(d, info->profile_scratch_size, info->profile_scratch_align, wgs, stream,
                        &ps_raw, &scratch[1]);
  if (r == hipSuccess)
    r = d->launch_kernel(fn, (unsigned int)grid[0], (unsigned int)grid[1], (unsigned int)grid[2],
                         info->block_x, 1, 1, info->shared, stream, params, NULL);
  if (ps_raw != NULL) {
    r2 = d->free_async(ps_raw, stream);
    if (r == hipSuccess) r = r2;
  }
  if (gs_raw != NULL) {
    r2 = d->free_async(gs_raw, stream);
    if (r == hipSuccess) r = r2;
  }
  return r;
}

hipError_t trt_hip_select_target(trt_slot **cache, const trt_target *targets, int n,
                                 const trt_driver **drv, unsigned long long *key, int *out) {
  const trt_driver *d;
  trt_slot *s;
  char arch[64];
  int t;
  hipError_t r = trt_hip_driver_get(&d);
  if (r != hipSuccess) return r;
  *drv = d;
  r = trt_hip_device(d, key);
  if (r != hipSuccess) return r;
  s = trt_slot_find(cache, *key);
  if (s != NULL) {
    uintptr_t v = TRT_LOAD_ACQUIRE(&s->value);
    if (v != 0) {
      *out = (int)(v - 1);
      return hipSuccess;
    }
  }
  r = trt_hip_device_arch(d, (int)*key, arch);
  if (r != hipSuccess) return r;
  t = trt_hip_pick_target(targets, n, arch);
  if (t < 0) return hipErrorNoBinaryForGpu;
  pthread_mutex_lock(&trt_hip_lock);
  s = trt_slot_get_or_add(cache, *key);
  if (s != NULL) TRT_STORE_RELEASE(&s->value, (uintptr_t)t + 1);
  pthread_mutex_unlock(&trt_hip_lock);
  *out = t;
  return hipSuccess;
}
