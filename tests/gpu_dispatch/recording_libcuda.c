/* A recording libcuda.so.1 shim: forwards the driver entry points that generated rules_triton
 * code resolves to the real CUDA driver and records which image every launch came from, so a
 * test on a real GPU can tell which variant (cubin) the dispatcher launched. See
 * recording_libcuda.h for the contract; build:
 *
 *   cc -shared -fPIC -fvisibility=hidden -I<cuda.h dir> -Wl,-soname,libcuda.so.1 \
 *      -o libcuda.so.1 recording_libcuda.c -ldl -lpthread
 *
 * The real driver comes from $RULES_TRITON_REAL_LIBCUDA (an absolute path; never searched for:
 * searching for "libcuda.so.1" would find this shim). Without it every entry point returns
 * CUDA_ERROR_NO_DEVICE (what generated code returns when there is no driver).
 */
#include "recording_libcuda.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "build the shim without per-thread default stream macros: it must define the plain names"
#endif

#define EXPORT __attribute__((visibility("default")))

#define MAX_LOADS 4096
#define MAX_LAUNCHES 65536
#define MAX_FUNCS 4096

/* ---- the real driver ------------------------------------------------------------------------- */

typedef CUresult (*pfn_ctx_get_current)(CUcontext *);
typedef CUresult (*pfn_ctx_get_id)(CUcontext, unsigned long long *);
typedef CUresult (*pfn_ctx_get_device)(CUdevice *);
typedef CUresult (*pfn_device_get_attribute)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*pfn_module_load_data)(CUmodule *, const void *);
typedef CUresult (*pfn_module_unload)(CUmodule);
typedef CUresult (*pfn_module_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_func_set_attribute)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*pfn_launch_kernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                                      unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
typedef CUresult (*pfn_launch_kernel_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*pfn_mem_alloc_async)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pfn_mem_free_async)(CUdeviceptr, CUstream);
typedef CUresult (*pfn_memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*pfn_memset_d16_async)(CUdeviceptr, unsigned short, size_t, CUstream);
typedef CUresult (*pfn_memset_d32_async)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*pfn_memset_d2d8_async)(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream);
typedef CUresult (*pfn_memset_d2d16_async)(CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream);
typedef CUresult (*pfn_memset_d2d32_async)(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream);

static struct {
  int status; /* CUresult */
  char error[1024];
  char path[4096];
  void *handle;
  pfn_ctx_get_current ctx_get_current;
  pfn_ctx_get_device ctx_get_device;
  pfn_device_get_attribute device_get_attribute;
  pfn_module_load_data module_load_data;
  pfn_module_unload module_unload;
  pfn_module_get_function module_get_function;
  pfn_func_set_attribute func_set_attribute;
  pfn_launch_kernel launch_kernel;
  /* optional, as in generated code */
  pfn_ctx_get_id ctx_get_id;
  pfn_launch_kernel_ex launch_kernel_ex;
  pfn_mem_alloc_async mem_alloc_async;
  pfn_mem_free_async mem_free_async;
  /* reset_to_zero algos (split-K) zero their outputs through these */
  pfn_memset_d8_async memset_d8_async;
  pfn_memset_d16_async memset_d16_async;
  pfn_memset_d32_async memset_d32_async;
  pfn_memset_d2d8_async memset_d2d8_async;
  pfn_memset_d2d16_async memset_d2d16_async;
  pfn_memset_d2d32_async memset_d2d32_async;
} real;

static pthread_once_t real_once = PTHREAD_ONCE_INIT;

#define RESOLVE(field, name)                    \
  do {                                          \
    void *sym_ = dlsym(real.handle, (name));    \
    memcpy(&real.field, &sym_, sizeof sym_);    \
  } while (0)

static void open_real(void) {
  const char *path = getenv("RULES_TRITON_REAL_LIBCUDA");
  real.status = CUDA_ERROR_NO_DEVICE;
  if (path == NULL || path[0] == '\0') {
    snprintf(real.error, sizeof real.error, "RULES_TRITON_REAL_LIBCUDA is not set");
    return;
  }
  snprintf(real.path, sizeof real.path, "%s", path);
  if (path[0] != '/') {
    snprintf(real.error, sizeof real.error,
             "RULES_TRITON_REAL_LIBCUDA must be an absolute path (a bare name would find this shim): %s", path);
    return;
  }
  real.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (real.handle == NULL) {
    const char *why = dlerror();
    snprintf(real.error, sizeof real.error, "cannot dlopen %s: %s", path, why ? why : "unknown error");
    return;
  }
  if (dlsym(real.handle, "recorder_real_status") != NULL) {
    snprintf(real.error, sizeof real.error, "RULES_TRITON_REAL_LIBCUDA (%s) is this recording shim itself", path);
    real.handle = NULL;
    return;
  }
  RESOLVE(ctx_get_current, "cuCtxGetCurrent");
  RESOLVE(ctx_get_device, "cuCtxGetDevice");
  RESOLVE(device_get_attribute, "cuDeviceGetAttribute");
  RESOLVE(module_load_data, "cuModuleLoadData");
  RESOLVE(module_unload, "cuModuleUnload");
  RESOLVE(module_get_function, "cuModuleGetFunction");
  RESOLVE(func_set_attribute, "cuFuncSetAttribute");
  RESOLVE(launch_kernel, "cuLaunchKernel");
  RESOLVE(ctx_get_id, "cuCtxGetId");
  RESOLVE(launch_kernel_ex, "cuLaunchKernelEx");
  RESOLVE(mem_alloc_async, "cuMemAllocAsync");
  RESOLVE(mem_free_async, "cuMemFreeAsync");
  RESOLVE(memset_d8_async, "cuMemsetD8Async");
  RESOLVE(memset_d16_async, "cuMemsetD16Async");
  RESOLVE(memset_d32_async, "cuMemsetD32Async");
  RESOLVE(memset_d2d8_async, "cuMemsetD2D8Async");
  RESOLVE(memset_d2d16_async, "cuMemsetD2D16Async");
  RESOLVE(memset_d2d32_async, "cuMemsetD2D32Async");
  if (!real.ctx_get_current || !real.ctx_get_device || !real.device_get_attribute || !real.module_load_data ||
      !real.module_unload || !real.module_get_function || !real.func_set_attribute || !real.launch_kernel) {
    real.status = CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
    snprintf(real.error, sizeof real.error, "%s lacks a required driver entry point", path);
    return;
  }
  real.status = CUDA_SUCCESS;
  real.error[0] = '\0';
}

static int real_ready(void) {
  pthread_once(&real_once, open_real);
  return real.status == CUDA_SUCCESS;
}

/* ---- records --------------------------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int seq;
static recorder_load loads[MAX_LOADS];
static int num_loads; /* may exceed MAX_LOADS: counted, not stored */
static recorder_launch launches[MAX_LAUNCHES];
static int num_launches;
static struct {
  CUfunction function;
  CUmodule module;
  char name[RECORDER_NAME_LEN];
} funcs[MAX_FUNCS];
static int num_funcs;

static const char *const entry_names[] = {
    "cuCtxGetCurrent", "cuCtxGetDevice", "cuDeviceGetAttribute", "cuModuleLoadData",
    "cuModuleUnload",  "cuModuleGetFunction", "cuFuncSetAttribute", "cuLaunchKernel",
    "cuCtxGetId",      "cuLaunchKernelEx", "cuMemAllocAsync", "cuMemFreeAsync",
    "cuMemsetD8Async", "cuMemsetD16Async", "cuMemsetD32Async", "cuMemsetD2D8Async",
    "cuMemsetD2D16Async", "cuMemsetD2D32Async",
};
enum { NUM_ENTRIES = sizeof entry_names / sizeof entry_names[0] };
static int call_counts[NUM_ENTRIES];

static void count_call(int entry) { __atomic_fetch_add(&call_counts[entry], 1, __ATOMIC_RELAXED); }

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/* Extent of a little-endian ELF64 image: the furthest of the program header table, the section
 * header table and every section with file contents (same rule as tests/fake_cuda). */
static uint64_t elf_size(const unsigned char *e) {
  uint64_t phoff = rd(e + 0x20, 8), shoff = rd(e + 0x28, 8);
  uint64_t phentsize = rd(e + 0x36, 2), phnum = rd(e + 0x38, 2);
  uint64_t shentsize = rd(e + 0x3A, 2), shnum = rd(e + 0x3C, 2);
  uint64_t size = shoff + shentsize * shnum, i;
  if (phoff + phentsize * phnum > size) size = phoff + phentsize * phnum;
  for (i = 0; i < shnum; ++i) {
    const unsigned char *sh = e + shoff + i * shentsize;
    if (rd(sh + 4, 4) != 8 /* SHT_NOBITS */ && rd(sh + 0x18, 8) + rd(sh + 0x20, 8) > size)
      size = rd(sh + 0x18, 8) + rd(sh + 0x20, 8);
  }
  return size;
}

static void describe_image(const void *image, int *kind, uint64_t *size, uint64_t *hash) {
  const unsigned char *p = (const unsigned char *)image;
  uint64_t h = 0xcbf29ce484222325ull, n = 0, i; /* FNV-1a-64 offset basis */
  *kind = 0;
  if (p == NULL) {
    n = 0;
  } else if (memcmp(p, "\177ELF", 4) == 0 && p[4] == 2 /* ELFCLASS64 */ && p[5] == 1 /* little endian */) {
    *kind = 1;
    n = elf_size(p);
  } else if (rd(p, 4) == 0xBA55ED50u) { /* fatbin: u32 magic, u16 version, u16 header size, u64 payload */
    *kind = 3;
    n = rd(p + 6, 2) + rd(p + 8, 8);
  } else {
    *kind = 2; /* PTX (or anything else that is text) */
    n = strlen((const char *)p);
  }
  for (i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  *size = n;
  *hash = h;
}

/* Index of the latest successful load that returned `module`, or -1. Caller holds the lock. */
static int find_load(CUmodule module) {
  int i, n = num_loads < MAX_LOADS ? num_loads : MAX_LOADS;
  for (i = n - 1; i >= 0; --i)
    if (loads[i].result == CUDA_SUCCESS && loads[i].module == (void *)module) return i;
  return -1;
}

static void record_launch(int ex, CUfunction f, const unsigned int grid[3], const unsigned int block[3],
                          unsigned int shared, CUresult result) {
  recorder_launch *l;
  int i;
  pthread_mutex_lock(&lock);
  if (num_launches < MAX_LAUNCHES) {
    l = &launches[num_launches];
    memset(l, 0, sizeof *l);
    l->seq = ++seq;
    l->result = (int)result;
    l->ex = ex;
    l->function = (void *)f;
    l->load_index = -1;
    for (i = num_funcs - 1; i >= 0; --i) {
      if (funcs[i].function == f) {
        l->module = (void *)funcs[i].module;
        memcpy(l->name, funcs[i].name, sizeof l->name);
        l->load_index = find_load(funcs[i].module);
        break;
      }
    }
    if (l->load_index >= 0) {
      l->size = loads[l->load_index].size;
      l->fnv1a64 = loads[l->load_index].fnv1a64;
    }
    memcpy(l->grid, grid, sizeof l->grid);
    memcpy(l->block, block, sizeof l->block);
    l->shared = shared;
  }
  ++num_launches;
  pthread_mutex_unlock(&lock);
}

/* ---- forwarded driver entry points ----------------------------------------------------------- */

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx) {
  count_call(0);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  return real.ctx_get_current(pctx);
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device) {
  count_call(1);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  return real.ctx_get_device(device);
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  count_call(2);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  return real.device_get_attribute(pi, attrib, dev);
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  CUresult r;
  CUcontext ctx = NULL;
  int kind;
  uint64_t size, hash;
  count_call(3);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  r = real.module_load_data(module, image);
  describe_image(image, &kind, &size, &hash);
  real.ctx_get_current(&ctx);
  pthread_mutex_lock(&lock);
  if (num_loads < MAX_LOADS) {
    recorder_load *l = &loads[num_loads];
    memset(l, 0, sizeof *l);
    l->seq = ++seq;
    l->result = (int)r;
    l->module = (r == CUDA_SUCCESS && module != NULL) ? (void *)*module : NULL;
    l->ctx = (void *)ctx;
    l->kind = kind;
    l->size = size;
    l->fnv1a64 = hash;
  }
  ++num_loads;
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  CUresult r;
  count_call(4);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  r = real.module_unload(module);
  if (r == CUDA_SUCCESS) {
    int i;
    pthread_mutex_lock(&lock);
    i = find_load(module);
    if (i >= 0) {
      loads[i].unloaded = 1;
      loads[i].module = NULL; /* the driver may hand the same handle to a later load */
    }
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule module, const char *name) {
  CUresult r;
  count_call(5);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  r = real.module_get_function(hfunc, module, name);
  if (r == CUDA_SUCCESS && hfunc != NULL) {
    int i;
    pthread_mutex_lock(&lock);
    for (i = 0; i < num_funcs; ++i)
      if (funcs[i].function == *hfunc) break;
    if (i == num_funcs && num_funcs < MAX_FUNCS) ++num_funcs;
    if (i < MAX_FUNCS) {
      funcs[i].function = *hfunc;
      funcs[i].module = module;
      snprintf(funcs[i].name, sizeof funcs[i].name, "%s", name ? name : "");
    }
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  count_call(6);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  return real.func_set_attribute(hfunc, attrib, value);
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                               void **extra) {
  CUresult r;
  unsigned int grid[3] = {gridDimX, gridDimY, gridDimZ}, block[3] = {blockDimX, blockDimY, blockDimZ};
  count_call(7);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  r = real.launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                         kernelParams, extra);
  record_launch(0, f, grid, block, sharedMemBytes, r);
  return r;
}

/* Optional entry points: when the real driver lacks one, behave as generated code does when the
 * symbol is missing (cuCtxGetId: the context pointer is the key; the others: not supported). */
EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId) {
  count_call(8);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  if (real.ctx_get_id == NULL) {
    if (ctx == NULL) {
      CUresult r = real.ctx_get_current(&ctx);
      if (r != CUDA_SUCCESS) return r;
      if (ctx == NULL) return CUDA_ERROR_INVALID_CONTEXT;
    }
    *ctxId = (unsigned long long)(uintptr_t)ctx;
    return CUDA_SUCCESS;
  }
  return real.ctx_get_id(ctx, ctxId);
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
  CUresult r;
  unsigned int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, shared = 0;
  count_call(9);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  if (real.launch_kernel_ex == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  r = real.launch_kernel_ex(config, f, kernelParams, extra);
  if (config != NULL) {
    grid[0] = config->gridDimX;
    grid[1] = config->gridDimY;
    grid[2] = config->gridDimZ;
    block[0] = config->blockDimX;
    block[1] = config->blockDimY;
    block[2] = config->blockDimZ;
    shared = config->sharedMemBytes;
  }
  record_launch(1, f, grid, block, shared, r);
  return r;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  count_call(10);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  if (real.mem_alloc_async == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  return real.mem_alloc_async(dptr, bytesize, hStream);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  count_call(11);
  if (!real_ready()) return CUDA_ERROR_NO_DEVICE;
  if (real.mem_free_async == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  return real.mem_free_async(dptr, hStream);
}

/* Memsets are forwarded and counted, not recorded: they launch no module. */
#define FORWARD_MEMSET(entry, field, ...)                         \
  do {                                                            \
    count_call(entry);                                            \
    if (!real_ready()) return CUDA_ERROR_NO_DEVICE;               \
    if (real.field == NULL) return CUDA_ERROR_NOT_SUPPORTED;      \
    return real.field(__VA_ARGS__);                               \
  } while (0)

EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  FORWARD_MEMSET(12, memset_d8_async, d, v, n, s);
}
EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  FORWARD_MEMSET(13, memset_d16_async, d, v, n, s);
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  FORWARD_MEMSET(14, memset_d32_async, d, v, n, s);
}
EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s) {
  FORWARD_MEMSET(15, memset_d2d8_async, d, pitch, v, w, h, s);
}
EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, CUstream s) {
  FORWARD_MEMSET(16, memset_d2d16_async, d, pitch, v, w, h, s);
}
EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s) {
  FORWARD_MEMSET(17, memset_d2d32_async, d, pitch, v, w, h, s);
}

/* ---- inspection API -------------------------------------------------------------------------- */

EXPORT int recorder_real_status(void) {
  real_ready();
  return real.status;
}

EXPORT const char *recorder_real_error(void) {
  real_ready();
  return real.error;
}

EXPORT const char *recorder_real_path(void) {
  real_ready();
  return real.path;
}

EXPORT void *recorder_real_handle(void) {
  real_ready();
  return real.handle;
}

EXPORT int recorder_num_loads(void) {
  int n;
  pthread_mutex_lock(&lock);
  n = num_loads;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT int recorder_get_load(int i, recorder_load *out) {
  int ok;
  pthread_mutex_lock(&lock);
  ok = i >= 0 && i < num_loads && i < MAX_LOADS;
  if (ok) *out = loads[i];
  pthread_mutex_unlock(&lock);
  return ok ? 0 : -1;
}

EXPORT int recorder_num_launches(void) {
  int n;
  pthread_mutex_lock(&lock);
  n = num_launches;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT int recorder_get_launch(int i, recorder_launch *out) {
  int ok;
  pthread_mutex_lock(&lock);
  ok = i >= 0 && i < num_launches && i < MAX_LAUNCHES;
  if (ok) *out = launches[i];
  pthread_mutex_unlock(&lock);
  return ok ? 0 : -1;
}

EXPORT unsigned long long recorder_last_launch_hash(void) {
  unsigned long long h = 0;
  pthread_mutex_lock(&lock);
  if (num_launches > 0 && num_launches <= MAX_LAUNCHES && launches[num_launches - 1].load_index >= 0)
    h = launches[num_launches - 1].fnv1a64;
  pthread_mutex_unlock(&lock);
  return h;
}

EXPORT unsigned long long recorder_last_launch_size(void) {
  unsigned long long n = 0;
  pthread_mutex_lock(&lock);
  if (num_launches > 0 && num_launches <= MAX_LAUNCHES && launches[num_launches - 1].load_index >= 0)
    n = launches[num_launches - 1].size;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT int recorder_call_count(const char *entry) {
  int i;
  for (i = 0; i < NUM_ENTRIES; ++i)
    if (entry != NULL && strcmp(entry, entry_names[i]) == 0) return __atomic_load_n(&call_counts[i], __ATOMIC_RELAXED);
  return -1;
}
