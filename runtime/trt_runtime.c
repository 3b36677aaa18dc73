/* rules_triton CUDA runtime (see trt_runtime.h): the runtime core (trt_core.inc: driver table,
 * per-context module cache, launch) with the CUDA hooks (contexts, SM targets and the PTX
 * fallback, cuLaunchKernelEx, per-stream scratch), and what only CUDA libraries have:
 * reset_to_zero, device attributes for grids, host tensor descriptors. Compiled once per build
 * into the `@rules_triton//runtime` cc_library that every generated CUDA kernel library depends
 * on. Nothing here exits, aborts or prints. */
#include "trt_runtime.h"
#include "trt_targets.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Dynamic shared memory above this needs the per-function opt-in attribute. */
#define TRT_DEFAULT_SHARED_LIMIT 49152u

/* The driver table, module cache, scratch and launch that every backend shares. */
#include "trt_core.inc"

/* ---- current context ----------------------------------------------------------------------- */

/* Cache key of the current context: cuCtxGetId is unique for the life of the process, so a new
 * context allocated at a destroyed one's address never sees stale modules.  Drivers without it
 * fall back to the CUcontext pointer. */
static CUresult trt_current_key(const trt_driver *d, unsigned long long *key) {
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
 * Which cubin or PTX runs on which SM (trt_cubin_runs_on, trt_ptx_runs_on) is the targets
 * table's rule (triton_aot/core/targets.py), generated into trt_targets.h. */

/* Exact SM, else the highest compatible lower SM of the same major, else the highest target whose
 * PTX can be JIT-compiled for this SM; -1 when nothing can run. */
static int trt_pick_target(const trt_target *targets, int n, int sm) {
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

static CUresult trt_current_target(const trt_driver *d, unsigned long long key,
                                   const trt_target *targets, int n, int *target, int *sm) {
  CUdevice dev = 0;
  CUresult r = trt_context_device(d, &dev, sm);
  (void)key; /* the current context's */
  if (r != CUDA_SUCCESS) return r;
  *target = trt_pick_target(targets, n, *sm);
  return *target < 0 ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_SUCCESS;
}

/* ---- kernels ------------------------------------------------------------------------------- */

/* Loads the module into the current context. Caller holds trt_lock. */
static CUresult trt_module_load(const trt_driver *d, const trt_kernel_info *k,
                                unsigned long long key, CUmodule *mod, CUfunction *fn) {
  CUdevice dev = 0;
  int sm = 0;
  const void *image;
  CUresult r = trt_context_device(d, &dev, &sm);
  (void)key; /* the current context's */
  if (r != CUDA_SUCCESS) return r;
  if (trt_cubin_runs_on(k->arch, sm))
    image = k->image;
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

static int trt_launch_reusing_scratch(const trt_driver *d, unsigned long long key,
                                      const trt_kernel_info *k, CUfunction fn, CUstream stream,
                                      const int64_t grid[3], unsigned long long gx,
                                      unsigned long long ctas, void **params,
                                      CUdeviceptr scratch[2], CUresult *r) {
  trt_scratch_slot *slot = trt_scratch_slot_for(d, key, stream);
  if (slot == NULL) return 0;
  pthread_mutex_lock(&slot->lock);
  *r = trt_scratch_reserve(d, slot, k, ctas, stream, scratch);
  if (*r == CUDA_SUCCESS) *r = trt_launch_fn(d, k, fn, gx, grid, stream, params);
  pthread_mutex_unlock(&slot->lock);
  return 1;
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
    r = trt_current(&d, &key);
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
    r = trt_current_key(*d, key);
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
