/* rules_triton runtime (see trt_runtime.h): driver table, per-context module cache, launch.
 * Compiled once per build into the `@rules_triton//runtime` cc_library that every generated
 * kernel library depends on. Nothing here exits, aborts or prints. */
#include "trt_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* GCC/Clang atomic builtins work identically in C and C++ (unlike <stdatomic.h> vs <atomic>). */
#define TRT_LOAD_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define TRT_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Dynamic shared memory above this needs the per-function opt-in attribute. */
#define TRT_DEFAULT_SHARED_LIMIT 49152u

static trt_driver trt_drv;
static pthread_once_t trt_drv_once = PTHREAD_ONCE_INIT;
/* Serialises module loads/unloads and cache insertions of every kernel library in the process. */
static pthread_mutex_t trt_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlsym returns void*; memcpy into the function pointer is the conversion that is well-defined
 * in both C and C++ without -Wpedantic complaints. */
#define TRT_RESOLVE(lib, field, name)                 \
  do {                                                \
    void *trt_sym_ = dlsym((lib), (name));            \
    memcpy(&trt_drv.field, &trt_sym_, sizeof trt_sym_); \
  } while (0)

static void trt_driver_init(void) {
  /* Never dlclose'd: function pointers stay valid for the life of the process. */
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    trt_drv.status = CUDA_ERROR_NO_DEVICE;
    return;
  }
  TRT_RESOLVE(lib, ctx_get_current, "cuCtxGetCurrent");
  TRT_RESOLVE(lib, ctx_get_device, "cuCtxGetDevice");
  TRT_RESOLVE(lib, device_get_attribute, "cuDeviceGetAttribute");
  TRT_RESOLVE(lib, module_load_data, "cuModuleLoadData");
  TRT_RESOLVE(lib, module_unload, "cuModuleUnload");
  TRT_RESOLVE(lib, module_get_function, "cuModuleGetFunction");
  TRT_RESOLVE(lib, func_set_attribute, "cuFuncSetAttribute");
  TRT_RESOLVE(lib, launch_kernel, "cuLaunchKernel");
  TRT_RESOLVE(lib, ctx_get_id, "cuCtxGetId");
  TRT_RESOLVE(lib, launch_kernel_ex, "cuLaunchKernelEx");
  TRT_RESOLVE(lib, mem_alloc_async, "cuMemAllocAsync");
  TRT_RESOLVE(lib, mem_free_async, "cuMemFreeAsync");
  TRT_RESOLVE(lib, stream_get_id, "cuStreamGetId");
  TRT_RESOLVE(lib, stream_is_capturing, "cuStreamIsCapturing");
  TRT_RESOLVE(lib, tensor_map_encode_tiled, "cuTensorMapEncodeTiled");
  TRT_RESOLVE(lib, memset_d8_async, "cuMemsetD8Async");
  TRT_RESOLVE(lib, memset_d16_async, "cuMemsetD16Async");
  TRT_RESOLVE(lib, memset_d32_async, "cuMemsetD32Async");
  TRT_RESOLVE(lib, memset_d2d8_async, "cuMemsetD2D8Async");
  TRT_RESOLVE(lib, memset_d2d16_async, "cuMemsetD2D16Async");
  TRT_RESOLVE(lib, memset_d2d32_async, "cuMemsetD2D32Async");
  if (!trt_drv.ctx_get_current || !trt_drv.ctx_get_device || !trt_drv.device_get_attribute ||
      !trt_drv.module_load_data || !trt_drv.module_unload || !trt_drv.module_get_function ||
      !trt_drv.func_set_attribute || !trt_drv.launch_kernel) {
    trt_drv.status = CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
    return;
  }
  trt_drv.status = CUDA_SUCCESS;
}

/* Resolves the driver once per process (pthread_once makes the table visible to every thread). */
CUresult trt_driver_get(const trt_driver **out) {
  pthread_once(&trt_drv_once, trt_driver_init);
  *out = &trt_drv;
  return trt_drv.status;
}

/* ---- current context ----------------------------------------------------------------------- */

/* Cache key of the current context: cuCtxGetId is unique for the life of the process, so a new
 * context allocated at a destroyed one's address never sees stale modules.  Drivers without it
 * fall back to the CUcontext pointer. */
CUresult trt_context_key(const trt_driver *d, unsigned long long *key) {
  CUcontext ctx = NULL;
  CUresult r = d->ctx_get_current(&ctx);
  if (r != CUDA_SUCCESS) return r;
  if (ctx == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (d->ctx_get_id != NULL) return d->ctx_get_id(ctx, key);
  *key = (unsigned long long)(uintptr_t)ctx;
  return CUDA_SUCCESS;
}

/* Compute capability of the current context's device as major*10+minor (sm_86 -> 86). */
static CUresult trt_context_device(const trt_driver *d, CUdevice *dev, int *sm) {
  int major = 0, minor = 0;
  CUresult r = d->ctx_get_device(dev);
  if (r != CUDA_SUCCESS) return r;
  r = d->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, *dev);
  if (r != CUDA_SUCCESS) return r;
  r = d->device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, *dev);
  if (r != CUDA_SUCCESS) return r;
  *sm = major * 10 + minor;
  return CUDA_SUCCESS;
}

/* ---- binary compatibility -------------------------------------------------------------------
 * Triton 3.6 compiles arch >= 90 as arch-specific sm_XXa: those cubins and that PTX run only on
 * exactly that SM.  Older cubins run on later minors of the same major (sm_80 on sm_86/sm_89);
 * older PTX is JIT-compiled by the driver for any later SM. */
static int trt_cubin_runs_on(int arch, int sm) {
  return arch == sm || (arch < 90 && arch / 10 == sm / 10 && arch < sm);
}
static int trt_ptx_runs_on(int arch, int sm) { return arch == sm || (arch < 90 && arch < sm); }

/* Exact SM, else the highest compatible lower SM of the same major, else the highest target whose
 * PTX can be JIT-compiled for this SM; -1 when nothing can run. */
int trt_pick_target(const trt_target *targets, int n, int sm) {
  int best = -1, i;
  for (i = 0; i < n; ++i)
    if (trt_cubin_runs_on(targets[i].arch, sm) && (best < 0 || targets[i].arch > targets[best].arch))
      best = i;
  if (best >= 0) return best;
  for (i = 0; i < n; ++i)
    if (targets[i].has_ptx && trt_ptx_runs_on(targets[i].arch, sm) &&
        (best < 0 || targets[i].arch > targets[best].arch))
      best = i;
  return best;
}


/* ---- kernels ------------------------------------------------------------------------------- */

/* Loads the module into the current context. Caller holds trt_lock. */
static CUresult trt_module_load(const trt_driver *d, const trt_kernel_info *k, CUmodule *mod,
                                CUfunction *fn) {
  CUdevice dev = 0;
  int sm = 0;
  const void *image;
  CUresult r = trt_context_device(d, &dev, &sm);
  if (r != CUDA_SUCCESS) return r;
  if (trt_cubin_runs_on(k->arch, sm))
    image = k->cubin;
  else if (k->ptx != NULL && trt_ptx_runs_on(k->arch, sm))
    image = k->ptx;
  else
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  /* Check the opt-in limit before loading: a kernel that cannot get its shared memory must never
   * be launched (the driver would fail late, or worse, on some drivers silently clamp). */
  if (k->shared > TRT_DEFAULT_SHARED_LIMIT) {
    int optin = 0;
    r = d->device_get_attribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    if (r != CUDA_SUCCESS) return r;
    if (optin < 0 || (unsigned int)optin < k->shared) return CUDA_ERROR_NOT_SUPPORTED;
  }
  r = d->module_load_data(mod, image);
  if (r != CUDA_SUCCESS) return r;
  r = d->module_get_function(fn, *mod, k->kernel_name);
  if (r == CUDA_SUCCESS && k->shared > TRT_DEFAULT_SHARED_LIMIT)
    r = d->func_set_attribute(*fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)k->shared);
  /* Clusters above 8 CTAs are non-portable and must be allowed explicitly (Hopper/Blackwell). */
  if (r == CUDA_SUCCESS && k->num_ctas > 8)
    r = d->func_set_attribute(*fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  if (r != CUDA_SUCCESS) {
    d->module_unload(*mod);
    *mod = NULL;
  }
  return r;
}

/* Slow path: first use in this context. Loads once even when many threads race here. */
static CUresult trt_kernel_load_key(const trt_driver *d, trt_kernel *k, unsigned long long key,
                                    CUfunction *out) {
  CUresult r = CUDA_SUCCESS;
  trt_slot *s;
  pthread_mutex_lock(&trt_lock);
  s = trt_slot_find(&k->slots, key);
  if (s != NULL && s->value != 0) {
    *out = (CUfunction)s->value;
  } else {
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    r = trt_module_load(d, k->info, &mod, &fn);
    if (r == CUDA_SUCCESS) {
      s = trt_slot_get_or_add(&k->slots, key);
      if (s == NULL) {
        d->module_unload(mod);
        r = CUDA_ERROR_OUT_OF_MEMORY;
      } else {
        s->module = mod;
        TRT_STORE_RELEASE(&s->value, (uintptr_t)fn);
        *out = fn;
      }
    }
  }
  pthread_mutex_unlock(&trt_lock);
  return r;
}

/* The CUfunction for the context whose cache key is `key` (the current one), loading the module on
 * first use. Lock-free when cached. */
static CUresult trt_kernel_function_in(const trt_driver *d, trt_kernel *k, unsigned long long key,
                                       CUfunction *out) {
  trt_slot *s = trt_slot_find(&k->slots, key);
  if (s != NULL) {
    uintptr_t v = TRT_LOAD_ACQUIRE(&s->value);
    if (v != 0) {
      *out = (CUfunction)v;
      return CUDA_SUCCESS;
    }
  }
  return trt_kernel_load_key(d, k, key, out);
}

/* The same for the current context, resolving the driver and the context key first. */
static CUresult trt_kernel_function(trt_kernel *k, const trt_driver **drv, CUfunction *out) {
  unsigned long long key = 0;
  CUresult r = trt_driver_get(drv);
  if (r != CUDA_SUCCESS) return r;
  r = trt_context_key(*drv, &key);
  if (r != CUDA_SUCCESS) return r;
  return trt_kernel_function_in(*drv, k, key, out);
}

CUresult trt_kernel_load(trt_kernel *k) {
  const trt_driver *d;
  CUfunction fn;
  return trt_kernel_function(k, &d, &fn);
}

/* Unloads from the current context only; other contexts keep their modules.  Must not race with
 * launches of the same kernel in the same context (as with any cuModuleUnload). */
CUresult trt_kernel_unload(trt_kernel *k) {
  const trt_driver *d;
  unsigned long long key = 0;
  trt_slot *s;
  CUresult r = trt_driver_get(&d);
  if (r != CUDA_SUCCESS) return r;
  r = trt_context_key(d, &key);
  if (r != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&trt_lock);
  s = trt_slot_find(&k->slots, key);
  if (s != NULL && s->value != 0) {
    TRT_STORE_RELEASE(&s->value, (uintptr_t)0);
    r = d->module_unload((CUmodule)s->module);
    s->module = NULL;
  }
  pthread_mutex_unlock(&trt_lock);
  return r;
}

/* Stream-ordered scratch: `per_cta` bytes for each of `ctas` CTAs, aligned to `align`.
 * cuMemAllocAsync guarantees 256-byte alignment; larger alignments over-allocate and round up.
 * *raw is what must be freed (0 when nothing was allocated). */
static CUresult trt_scratch_alloc(const trt_driver *d, unsigned long long per_cta,
                                  unsigned long long align, unsigned long long ctas, CUstream stream,
                                  CUdeviceptr *raw, CUdeviceptr *aligned) {
  unsigned long long bytes = 0;
  *raw = 0;
  *aligned = 0;
  if (per_cta == 0) return CUDA_SUCCESS;
  if (d->mem_alloc_async == NULL || d->mem_free_async == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  if (align == 0 || (align & (align - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (__builtin_mul_overflow(per_cta, ctas, &bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (align > 256 && __builtin_add_overflow(bytes, align - 1, &bytes))
    return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned long long)(size_t)bytes != bytes) return CUDA_ERROR_INVALID_VALUE;
  {
    CUresult r = d->mem_alloc_async(raw, (size_t)bytes, stream);
    if (r != CUDA_SUCCESS) {
      *raw = 0;
      return r;
    }
  }
  *aligned = (CUdeviceptr)((*raw + (align - 1)) & ~(CUdeviceptr)(align - 1));
  return CUDA_SUCCESS;
}

/* ---- reusable scratch: one buffer per (context, stream) -------------------------------------
 * Launches on one stream run in order, so one buffer per stream can serve every scratch-using
 * kernel launched there without events: a kernel never overlaps the next one that reuses the
 * buffer. Two streams run concurrently, so each has its own buffer. Growth frees the old buffer
 * with cuMemFreeAsync on the same stream (after the kernels that used it) and allocates the new
 * one there. The slot's mutex is held from reading the buffer to enqueueing the launch: otherwise
 * thread A could read the buffer, thread B grow it (enqueue the free), and A enqueue a kernel on
 * freed memory. Not used (per-launch cuMemAllocAsync/cuMemFreeAsync instead) when the stream is
 * capturing a graph (the graph gets its own memory nodes; a cached pointer would outlive or race
 * with the replays), for CU_STREAM_PER_THREAD (one handle, one stream per thread), and on drivers
 * without cuCtxGetId/cuStreamGetId (their keys are handles, which the driver reuses after a
 * destroy while the old stream's work may still run). Buffers live until their context goes
 * away: one per stream that ever launched a scratch-using kernel. */
typedef struct trt_scratch_slot {
  struct trt_scratch_slot *next; /* immutable once published */
  unsigned long long ctx_key;
  unsigned long long stream_key;
  pthread_mutex_t lock; /* guards ptr and bytes, held across the launch */
  CUdeviceptr ptr;
  unsigned long long bytes;
} trt_scratch_slot;

static trt_scratch_slot *trt_scratch_slots = NULL;

/* The slot for (context, stream), or NULL when the buffer must not be reused (see above). */
static trt_scratch_slot *trt_scratch_slot_for(const trt_driver *d, unsigned long long ctx_key,
                                              CUstream stream) {
  unsigned long long stream_key = 0;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  trt_scratch_slot *s;
  if (d->ctx_get_id == NULL || d->stream_get_id == NULL || d->stream_is_capturing == NULL ||
      stream == CU_STREAM_PER_THREAD)
    return NULL;
  if (d->stream_is_capturing(stream, &status) != CUDA_SUCCESS ||
      status != CU_STREAM_CAPTURE_STATUS_NONE)
    return NULL;
  if (d->stream_get_id(stream, &stream_key) != CUDA_SUCCESS) return NULL;
  for (s = TRT_LOAD_ACQUIRE(&trt_scratch_slots); s != NULL; s = s->next)
    if (s->ctx_key == ctx_key && s->stream_key == stream_key) return s;
  pthread_mutex_lock(&trt_lock);
  for (s = trt_scratch_slots; s != NULL; s = s->next)
    if (s->ctx_key == ctx_key && s->stream_key == stream_key) break;
  if (s == NULL) {
    s = (trt_scratch_slot *)calloc(1, sizeof *s);
    if (s != NULL && pthread_mutex_init(&s->lock, NULL) != 0) {
      free(s);
      s = NULL;
    }
    if (s != NULL) {
      s->ctx_key = ctx_key;
      s->stream_key = stream_key;
      s->next = trt_scratch_slots;
      TRT_STORE_RELEASE(&trt_scratch_slots, s);
    }
  }
  pthread_mutex_unlock(&trt_lock);
  return s; /* NULL when out of memory: the per-launch path still works */
}

/* Caller holds s->lock. Makes the slot's buffer hold global then profile scratch for `ctas` CTAs
 * and points scratch[0], scratch[1] into it. */
static CUresult trt_scratch_reserve(const trt_driver *d, trt_scratch_slot *s,
                                    const trt_kernel_info *k, unsigned long long ctas,
                                    CUstream stream, CUdeviceptr scratch[2]) {
  unsigned long long gbytes = 0, pbytes = 0, need = 0, ga = k->global_scratch_align,
                     pa = k->profile_scratch_align;
  CUdeviceptr g, p;
  if (d->mem_alloc_async == NULL || d->mem_free_async == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  if (ga == 0 || (ga & (ga - 1)) != 0 || pa == 0 || (pa & (pa - 1)) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  /* worst case over any base address: enough for both regions at their alignments */
  if (__builtin_mul_overflow(k->global_scratch_size, ctas, &gbytes) ||
      __builtin_mul_overflow(k->profile_scratch_size, ctas, &pbytes) ||
      __builtin_add_overflow(gbytes, pbytes, &need) ||
      __builtin_add_overflow(need, (ga - 1) + (pa - 1), &need) ||
      (unsigned long long)(size_t)need != need)
    return CUDA_ERROR_INVALID_VALUE;
  if (s->bytes < need) {
    unsigned long long grow = s->bytes > need / 2 ? 2 * s->bytes : need; /* at least doubles */
    CUdeviceptr fresh = 0;
    CUresult r;
    if ((unsigned long long)(size_t)grow != grow) grow = need;
    if (s->ptr != 0) {
      /* stream-ordered: runs after every kernel this stream launched with the old buffer */
      r = d->mem_free_async(s->ptr, stream);
      if (r != CUDA_SUCCESS) return r; /* the old buffer stays valid and cached */
      s->ptr = 0;
      s->bytes = 0;
    }
    r = d->mem_alloc_async(&fresh, (size_t)grow, stream);
    if (r != CUDA_SUCCESS) return r;
    s->ptr = fresh;
    s->bytes = grow;
  }
  g = (s->ptr + (ga - 1)) & ~(CUdeviceptr)(ga - 1);
  p = (g + gbytes + (pa - 1)) & ~(CUdeviceptr)(pa - 1);
  scratch[0] = k->global_scratch_size != 0 ? g : 0;
  scratch[1] = k->profile_scratch_size != 0 ? p : 0;
  return CUDA_SUCCESS;
}

static CUresult trt_launch_ex(const trt_driver *d, const trt_kernel_info *k, CUfunction fn,
                              unsigned int gx, unsigned int gy, unsigned int gz, CUstream stream,
                              void **params) {
  CUlaunchAttribute attrs[4];
  CUlaunchConfig cfg;
  unsigned int n = 0;
  if (d->launch_kernel_ex == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  memset(attrs, 0, sizeof attrs);
  memset(&cfg, 0, sizeof cfg);
  if (k->pdl) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (k->cooperative) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n].value.cooperative = 1;
    ++n;
  }
  if (k->num_ctas != 1) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = k->num_ctas;
    attrs[n].value.clusterDim.y = 1;
    attrs[n].value.clusterDim.z = 1;
    ++n;
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attrs[n].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    ++n;
  }
  cfg.gridDimX = gx;
  cfg.gridDimY = gy;
  cfg.gridDimZ = gz;
  cfg.blockDimX = k->block_x;
  cfg.blockDimY = 1;
  cfg.blockDimZ = 1;
  cfg.sharedMemBytes = k->shared;
  cfg.hStream = stream;
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  return d->launch_kernel_ex(&cfg, fn, params, NULL);
}

static CUresult trt_launch_fn(const trt_driver *d, const trt_kernel_info *info, CUfunction fn,
                              unsigned long long gx, const int64_t grid[3], CUstream stream,
                              void **params) {
  if (info->num_ctas != 1 || info->cooperative || info->pdl)
    return trt_launch_ex(d, info, fn, (unsigned int)gx, (unsigned int)grid[1],
                         (unsigned int)grid[2], stream, params);
  return d->launch_kernel(fn, (unsigned int)gx, (unsigned int)grid[1], (unsigned int)grid[2],
                          info->block_x, 1, 1, info->shared, stream, params, NULL);
}

/* The checks of a non-empty grid: no negative dimension, x * num_ctas, y and z within 32 bits,
 * and the CTA count (for scratch) within 64 bits. */
static CUresult trt_grid_check(const trt_kernel_info *info, const int64_t grid[3],
                               unsigned long long *gx, unsigned long long *ctas) {
  if (grid[0] < 0 || grid[1] < 0 || grid[2] < 0) return CUDA_ERROR_INVALID_VALUE;
  if (__builtin_mul_overflow((unsigned long long)grid[0], (unsigned long long)info->num_ctas, gx) ||
      *gx > 0xFFFFFFFFull || (unsigned long long)grid[1] > 0xFFFFFFFFull ||
      (unsigned long long)grid[2] > 0xFFFFFFFFull)
    return CUDA_ERROR_INVALID_VALUE;
  if (__builtin_mul_overflow(*gx, (unsigned long long)grid[1], ctas) ||
      __builtin_mul_overflow(*ctas, (unsigned long long)grid[2], ctas))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* Launches the loaded `fn` of `k` (grid checked by trt_grid_check): scratch, then the launch. */
static CUresult trt_launch_loaded(const trt_driver *d, unsigned long long key, trt_kernel *k,
                                  CUfunction fn, CUstream stream, const int64_t grid[3],
                                  unsigned long long gx, unsigned long long ctas, void **params,
                                  CUdeviceptr scratch[2]) {
  const trt_kernel_info *info = k->info;
  CUdeviceptr gs_raw = 0, ps_raw = 0;
  CUresult r, r2;
  if (info->global_scratch_size != 0 || info->profile_scratch_size != 0) {
    trt_scratch_slot *slot = trt_scratch_slot_for(d, key, stream);
    if (slot != NULL) {
      pthread_mutex_lock(&slot->lock);
      r = trt_scratch_reserve(d, slot, info, ctas, stream, scratch);
      if (r == CUDA_SUCCESS) r = trt_launch_fn(d, info, fn, gx, grid, stream, params);
      pthread_mutex_unlock(&slot->lock);
      return r;
    }
  }
  r = trt_scratch_alloc(d, info->global_scratch_size, info->global_scratch_align, ctas, stream,
                        &gs_raw, &scratch[0]);
  if (r != CUDA_SUCCESS) return r;
  r = trt_scratch_alloc(d, info->profile_scratch_size, info->profile_scratch_align, ctas, stream,
                        &ps_raw, &scratch[1]);
  if (r == CUDA_SUCCESS) r = trt_launch_fn(d, info, fn, gx, grid, stream, params);
  /* Stream-ordered frees run after the kernel; they are issued even when the launch failed. */
  if (ps_raw != 0) {
    r2 = d->mem_free_async(ps_raw, stream);
    if (r == CUDA_SUCCESS) r = r2;
  }
  if (gs_raw != 0) {
    r2 = d->mem_free_async(gs_raw, stream);
    if (r == CUDA_SUCCESS) r = r2;
  }
  return r;
}

/* Launches kernel `k` on a grid of `grid` (in clusters along x when num_ctas > 1, as Triton's own
 * launcher does).  The last two entries of `params` (global_scratch and profile_scratch, which
 * every Triton 3.6 kernel takes) point at scratch[0] and scratch[1], which are filled in here.
 * `d` and `key` are the driver table and the current context's cache key when the caller (the
 * dispatcher) has them already, so that a dispatched launch asks the driver for the context once,
 * not twice; d == NULL means "look them up". */
CUresult trt_kernel_launch_slow(const trt_driver *d, unsigned long long key, trt_kernel *k,
                                     CUstream stream, const int64_t grid[3], void **params,
                                     CUdeviceptr scratch[2]) {
  CUfunction fn = NULL;
  unsigned long long gx = 0, ctas = 0;
  CUresult r;
  /* An empty grid is a successful no-op; it does not even need a driver or a context. */
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return CUDA_SUCCESS;
  r = trt_grid_check(k->info, grid, &gx, &ctas);
  if (r != CUDA_SUCCESS) return r;
  if (d == NULL) {
    r = trt_driver_get(&d);
    if (r != CUDA_SUCCESS) return r;
    r = trt_context_key(d, &key);
    if (r != CUDA_SUCCESS) return r;
  }
  r = trt_kernel_function_in(d, k, key, &fn);
  if (r != CUDA_SUCCESS) return r;
  return trt_launch_loaded(d, key, k, fn, stream, grid, gx, ctas, params, scratch);
}

/* ---- reset_to_zero: memsets on the launch stream before the launch ---------------------------- */

/* One region as a memset: the unit (1, 2 or 4 bytes: the widest dividing the element size, the
 * address and, for 2-D, the pitch: so any element size is zeroed exactly), the width in units,
 * the height, the pitch in bytes. Fails (nothing zeroed anywhere yet) on a negative extent, a
 * row stride below the row, or sizes beyond the address space; empty regions get height 0. */
typedef struct trt_memset_plan {
  unsigned int unit;
  size_t width, height, pitch;
} trt_memset_plan;

static CUresult trt_zero_plan(const trt_zero_region *zr, trt_memset_plan *p) {
  unsigned long long row_bytes = 0, pitch = 0, span = 0, end = 0;
  unsigned int unit = 4;
  trt_zero_region t = *zr;
  const trt_zero_region *z = &t;
  p->unit = 1;
  p->width = p->height = p->pitch = 0;
  if (t.col_stride != 1 && t.cols > 1 && t.rows >= 0) {
    /* A strided matrix whose rows are not contiguous: zero it as its columns (rows x cols with
     * strides (1, cs) is cols rows of `rows` contiguous elements, cs apart), when they are. */
    if (t.row_stride != 1 && t.rows > 1) return CUDA_ERROR_INVALID_VALUE;
    t.rows = zr->cols;
    t.cols = zr->rows;
    t.row_stride = zr->col_stride;
    t.col_stride = 1;
  }
  const int64_t stride = z->two_d ? z->row_stride : z->cols; /* 1-D: one row */
  if (z->rows < 0 || z->cols < 0 || stride < z->cols || z->elem_size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (__builtin_mul_overflow((unsigned long long)z->cols, z->elem_size, &row_bytes) ||
      __builtin_mul_overflow((unsigned long long)stride, z->elem_size, &pitch))
    return CUDA_ERROR_INVALID_VALUE;
  if (z->rows == 0 || z->cols == 0) return CUDA_SUCCESS; /* nothing to zero */
  /* the last byte zeroed: (rows - 1) * pitch + row bytes past ptr, within the address space */
  if (__builtin_mul_overflow((unsigned long long)(z->rows - 1), pitch, &span) ||
      __builtin_add_overflow(span, row_bytes, &span) ||
      __builtin_add_overflow((unsigned long long)z->ptr, span, &end) ||
      (unsigned long long)(size_t)span != span || (unsigned long long)(size_t)pitch != pitch)
    return CUDA_ERROR_INVALID_VALUE;
  while (unit > 1 && (z->elem_size % unit != 0 || z->ptr % unit != 0 ||
                      (z->two_d && pitch % unit != 0)))
    unit /= 2;
  p->unit = unit;
  p->width = (size_t)(row_bytes / unit);
  p->height = (size_t)z->rows;
  p->pitch = (size_t)pitch;
  return CUDA_SUCCESS;
}

static int trt_memset_available(const trt_driver *d, const trt_zero_region *z,
                                const trt_memset_plan *p) {
  if (z->two_d)
    return p->unit == 4 ? d->memset_d2d32_async != NULL
                        : p->unit == 2 ? d->memset_d2d16_async != NULL
                                       : d->memset_d2d8_async != NULL;
  return p->unit == 4 ? d->memset_d32_async != NULL
                      : p->unit == 2 ? d->memset_d16_async != NULL : d->memset_d8_async != NULL;
}

static CUresult trt_memset(const trt_driver *d, const trt_zero_region *z, const trt_memset_plan *p,
                           CUstream stream) {
  if (z->two_d) {
    if (p->unit == 4) return d->memset_d2d32_async(z->ptr, p->pitch, 0u, p->width, p->height, stream);
    if (p->unit == 2)
      return d->memset_d2d16_async(z->ptr, p->pitch, (unsigned short)0, p->width, p->height, stream);
    return d->memset_d2d8_async(z->ptr, p->pitch, (unsigned char)0, p->width, p->height, stream);
  }
  if (p->unit == 4) return d->memset_d32_async(z->ptr, 0u, p->width, stream);
  if (p->unit == 2) return d->memset_d16_async(z->ptr, (unsigned short)0, p->width, stream);
  return d->memset_d8_async(z->ptr, (unsigned char)0, p->width, stream);
}

/* The most regions one launcher zeroes: one per pointer argument (Triton kernels have far fewer
 * parameters than this). */
#define TRT_MAX_ZERO_REGIONS 64

CUresult trt_kernel_launch_zeroed(const trt_driver *d, unsigned long long key, trt_kernel *k,
                                  CUstream stream, const int64_t grid[3], void **params,
                                  CUdeviceptr scratch[2], const trt_zero_region *zero, int n) {
  trt_memset_plan plans[TRT_MAX_ZERO_REGIONS];
  CUfunction fn = NULL;
  unsigned long long gx = 0, ctas = 0;
  int i, empty = grid[0] == 0 || grid[1] == 0 || grid[2] == 0, any = 0;
  CUresult r;
  if (n < 0 || n > TRT_MAX_ZERO_REGIONS) return CUDA_ERROR_INVALID_VALUE;
  /* every check before the first memset: a refused call changes no memory */
  if (!empty) {
    r = trt_grid_check(k->info, grid, &gx, &ctas);
    if (r != CUDA_SUCCESS) return r;
  }
  for (i = 0; i < n; ++i) {
    r = trt_zero_plan(&zero[i], &plans[i]);
    if (r != CUDA_SUCCESS) return r;
    if (plans[i].height != 0) any = 1;
  }
  if (empty && !any) return CUDA_SUCCESS; /* nothing to do: no driver needed */
  if (d == NULL) {
    r = trt_driver_get(&d);
    if (r != CUDA_SUCCESS) return r;
    r = trt_context_key(d, &key);
    if (r != CUDA_SUCCESS) return r;
  }
  for (i = 0; i < n; ++i)
    if (plans[i].height != 0 && !trt_memset_available(d, &zero[i], &plans[i]))
      return CUDA_ERROR_NOT_SUPPORTED;
  if (!empty) {
    r = trt_kernel_function_in(d, k, key, &fn);
    if (r != CUDA_SUCCESS) return r;
  }
  for (i = 0; i < n; ++i) {
    if (plans[i].height == 0) continue;
    r = trt_memset(d, &zero[i], &plans[i], stream);
    if (r != CUDA_SUCCESS) return r; /* not launched: the kernel would accumulate into garbage */
  }
  if (empty) return CUDA_SUCCESS;
  return trt_launch_loaded(d, key, k, fn, stream, grid, gx, ctas, params, scratch);
}

/* ---- dispatcher: per-context target selection ---------------------------------------------- */

/* Index into `targets` for the current context's device, cached per context (lock-free hit).
 * Also hands back the driver table and the context's cache key, which the dispatcher passes on to
 * the variant it picks (trt_kernel_launch_in). */
/* A target slot's value: (device SM << 16) | (target index + 1), so that the tuned dispatch
 * (NAME_auto) gets the context's SM from the same lock-free lookup as the target. */
CUresult trt_select_target_sm(trt_slot **cache, const trt_target *targets, int n,
                              const trt_driver **drv, unsigned long long *key, int *out,
                              int *sm_out) {
  const trt_driver *d;
  trt_slot *s;
  CUdevice dev = 0;
  int sm = 0, t;
  CUresult r = trt_driver_get(&d);
  if (r != CUDA_SUCCESS) return r;
  *drv = d;
  r = trt_context_key(d, key);
  if (r != CUDA_SUCCESS) return r;
  s = trt_slot_find(cache, *key);
  if (s != NULL) {
    uintptr_t v = TRT_LOAD_ACQUIRE(&s->value);
    if (v != 0) {
      *out = (int)(v & 0xFFFFu) - 1;
      *sm_out = (int)(v >> 16);
      return CUDA_SUCCESS;
    }
  }
  r = trt_context_device(d, &dev, &sm);
  if (r != CUDA_SUCCESS) return r;
  t = trt_pick_target(targets, n, sm);
  if (t < 0) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  pthread_mutex_lock(&trt_lock);
  s = trt_slot_get_or_add(cache, *key);
  if (s != NULL && sm >= 0 && sm < 0x10000 && t < 0xFFFF)
    TRT_STORE_RELEASE(&s->value, ((uintptr_t)sm << 16) | ((uintptr_t)t + 1));
  pthread_mutex_unlock(&trt_lock);
  *out = t; /* still correct when the cache insert ran out of memory: just not cached */
  *sm_out = sm;
  return CUDA_SUCCESS;
}

CUresult trt_select_target(trt_slot **cache, const trt_target *targets, int n,
                           const trt_driver **drv, unsigned long long *key, int *out) {
  int sm = 0;
  return trt_select_target_sm(cache, targets, n, drv, key, out, &sm);
}

/* ---- device attributes for grids: per-context cache ------------------------------------------ */

static const CUdevice_attribute trt_attr_ids[TRT_NUM_ATTRS] = {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, /* TRT_ATTR_NUM_SMS */
};
/* One slot list per attribute; a slot's value is the attribute + 1 (0: not read yet). */
static trt_slot *trt_attr_cache[TRT_NUM_ATTRS];

CUresult trt_device_attribute(const trt_driver **d, unsigned long long *key, int which,
                              int64_t *out) {
  trt_slot *s;
  CUresult r = CUDA_SUCCESS;
  if (which < 0 || which >= TRT_NUM_ATTRS) return CUDA_ERROR_INVALID_VALUE;
  if (*d == NULL) {
    r = trt_driver_get(d);
    if (r != CUDA_SUCCESS) {
      *d = NULL;
      return r;
    }
    r = trt_context_key(*d, key);
    if (r != CUDA_SUCCESS) {
      *d = NULL;
      return r;
    }
  }
  s = trt_slot_find(&trt_attr_cache[which], *key);
  if (s != NULL) {
    uintptr_t v = TRT_LOAD_ACQUIRE(&s->value);
    if (v != 0) {
      *out = (int64_t)(v - 1);
      return CUDA_SUCCESS;
    }
  }
  /* Read under the lock, so that threads racing on a context's first launch read it once. */
  pthread_mutex_lock(&trt_lock);
  s = trt_slot_find(&trt_attr_cache[which], *key);
  if (s != NULL && s->value != 0) {
    *out = (int64_t)(s->value - 1);
  } else {
    CUdevice dev = 0;
    int value = 0;
    r = (*d)->ctx_get_device(&dev);
    if (r == CUDA_SUCCESS) r = (*d)->device_get_attribute(&value, trt_attr_ids[which], dev);
    if (r == CUDA_SUCCESS && value < 0) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
      s = trt_slot_get_or_add(&trt_attr_cache[which], *key);
      /* out of memory for the slot: still correct, just not cached */
      if (s != NULL) TRT_STORE_RELEASE(&s->value, (uintptr_t)value + 1);
      *out = value;
    }
  }
  pthread_mutex_unlock(&trt_lock);
  return r;
}

/* ---- host tensor descriptors ---------------------------------------------------------------- */

/* Largest byte stride cuTensorMapEncodeTiled takes (globalStrides[i] < 2^40). */
#define TRT_TMA_MAX_STRIDE_BYTES (1ull << 40)

CUresult trt_tma_encode_slow(const trt_driver *d, const trt_tma_info *info, trt_tma_cache *c,
                             CUdeviceptr base, const int64_t *shape, const int64_t *strides) {
  cuuint64_t dims[5], gstrides[5];
  cuuint32_t box[5], elem_strides[5] = {1, 1, 1, 1, 1};
  const int rank = info->rank;
  unsigned long long bytes = 0;
  int i;
  CUresult r;
  if (rank < 1 || rank > 5) return CUDA_ERROR_INVALID_VALUE;
  /* What cuTensorMapEncodeTiled requires of a tiled, non-interleaved map (and Triton's
   * TensorDescriptor asserts): a 16-byte aligned global address, a contiguous last dimension,
   * every other stride a positive multiple of 16 bytes below 2^40. Dimensions are at least 1 and
   * at most INT32_MAX: the kernel receives them as int32 (the driver allows up to 2^32). Checked
   * here, so a bad call fails the same way on every driver and launches nothing. */
  if (base % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  for (i = 0; i < rank; ++i)
    if (shape[i] < 1 || shape[i] > INT32_MAX) return CUDA_ERROR_INVALID_VALUE;
  if (strides[rank - 1] != 1) return CUDA_ERROR_INVALID_VALUE;
  for (i = 0; i + 1 < rank; ++i)
    if (strides[i] < 1 ||
        __builtin_mul_overflow((unsigned long long)strides[i], info->elem_size, &bytes) ||
        bytes % 16 != 0 || bytes >= TRT_TMA_MAX_STRIDE_BYTES)
      return CUDA_ERROR_INVALID_VALUE;
  if (d == NULL) {
    r = trt_driver_get(&d);
    if (r != CUDA_SUCCESS) return r;
  }
  if (d->tensor_map_encode_tiled == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  /* As Triton's fill_tma_descriptor: the driver's dimension 0 is the innermost. */
  for (i = 0; i < rank; ++i) {
    dims[rank - 1 - i] = (cuuint64_t)shape[i];
    box[rank - 1 - i] = info->box[i];
  }
  for (i = 0; i + 1 < rank; ++i)
    gstrides[rank - 2 - i] = (cuuint64_t)strides[i] * info->elem_size;
  /* Triton also fills this entry (the driver reads only rank - 1 strides) */
  gstrides[rank - 1] = dims[rank - 1] * (rank == 1 ? info->elem_size : gstrides[rank - 2]);
  /* a refused call (above) keeps the cached map, which is still right for its own arguments */
  c->valid = 0;
  r = d->tensor_map_encode_tiled(&c->map, (CUtensorMapDataType)info->data_type, (cuuint32_t)rank,
                                 (void *)(uintptr_t)base, dims, gstrides, box, elem_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)info->swizzle,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return r;
  c->base = base;
  for (i = 0; i < rank; ++i) {
    c->shape[i] = shape[i];
    c->strides[i] = strides[i];
  }
  c->valid = 1;
  return CUDA_SUCCESS;
}
