/* Launch-overhead harness of the GPU benchmark; API in launch_bench.h. */
#include "bench/gpu/launch_bench.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gpu/tiny1.h"
#include "bench/gpu/tiny8.h"
#include "bench/gpu/tiny_auto.h"

#define LB_N 1000 /* not a multiple of 16: tiny8's specialised variants all fail */
#define LB_BLOCK 1024

typedef CUresult (*pfn_init)(unsigned int);
typedef CUresult (*pfn_device_get)(CUdevice *, int);
typedef CUresult (*pfn_device_get_attribute)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*pfn_primary_ctx_retain)(CUcontext *, CUdevice);
typedef CUresult (*pfn_ctx_set_current)(CUcontext);
typedef CUresult (*pfn_ctx_get_current)(CUcontext *);
typedef CUresult (*pfn_ctx_get_id)(CUcontext, unsigned long long *);
typedef CUresult (*pfn_mem_alloc)(CUdeviceptr *, size_t);
typedef CUresult (*pfn_stream_create)(CUstream *, unsigned int);
typedef CUresult (*pfn_stream_synchronize)(CUstream);
typedef CUresult (*pfn_event_create)(CUevent *, unsigned int);
typedef CUresult (*pfn_event_record)(CUevent, CUstream);
typedef CUresult (*pfn_event_synchronize)(CUevent);
typedef CUresult (*pfn_event_elapsed_time)(float *, CUevent, CUevent);
typedef CUresult (*pfn_module_load_data)(CUmodule *, const void *);
typedef CUresult (*pfn_module_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_launch_kernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                      unsigned int, unsigned int, unsigned int, unsigned int,
                                      CUstream, void **, void **);
typedef CUresult (*pfn_get_error_string)(CUresult, const char **);
/* fake driver (tests/fake_cuda) control API */
typedef void (*pfn_fake_set_device)(int, int, int, int);
typedef CUcontext (*pfn_fake_create_context)(int);

static struct {
  int ready;
  int fake;
  int sm;
  char error[4608];
  pfn_init init;
  pfn_device_get device_get;
  pfn_device_get_attribute device_get_attribute;
  pfn_primary_ctx_retain primary_ctx_retain;
  pfn_ctx_set_current ctx_set_current;
  pfn_ctx_get_current ctx_get_current;
  pfn_ctx_get_id ctx_get_id;
  pfn_mem_alloc mem_alloc;
  pfn_stream_create stream_create;
  pfn_stream_synchronize stream_synchronize;
  pfn_event_create event_create;
  pfn_event_record event_record;
  pfn_event_synchronize event_synchronize;
  pfn_event_elapsed_time event_elapsed_time;
  pfn_module_load_data module_load_data;
  pfn_module_get_function module_get_function;
  pfn_launch_kernel launch_kernel;
  pfn_get_error_string get_error_string;
  CUcontext ctx;
  CUstream stream;
  CUevent ev0, ev1;
  CUdeviceptr x, y, out;
  int32_t n;
  /* the raw path */
  void *cubin;
  size_t cubin_size;
  char kernel_name[128];
  unsigned int block_threads;
  unsigned int shared;
  CUmodule module;
  CUfunction function;
  CUdeviceptr no_scratch;
  void *params[6];
} lb;

static int fail(int code, const char *fmt, const char *detail) {
  snprintf(lb.error, sizeof lb.error, fmt, detail);
  return code;
}

static int cu_fail(CUresult r, const char *what) {
  const char *s = NULL;
  if (lb.get_error_string) lb.get_error_string(r, &s);
  snprintf(lb.error, sizeof lb.error, "%s failed: CUresult %d (%s)", what, (int)r,
           s ? s : "?");
  return r == CUDA_ERROR_NO_DEVICE ? 77 : (int)r;
}

#define RESOLVE(field, name)                   \
  do {                                         \
    void *sym_ = dlsym(lib, (name));           \
    memcpy(&lb.field, &sym_, sizeof sym_);     \
  } while (0)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "key": 123 from the variant metadata JSON (a flat search is enough for this file). */
static long json_int(const char *text, const char *key, long fallback) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *p = strstr(text, pattern);
  if (!p) return fallback;
  return strtol(p + strlen(pattern), NULL, 10);
}

static int json_str(const char *text, const char *key, char *out, size_t size) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
  const char *p = strstr(text, pattern);
  if (!p) return 0;
  p += strlen(pattern);
  const char *end = strchr(p, '"');
  if (!end || (size_t)(end - p) >= size) return 0;
  memcpy(out, p, (size_t)(end - p));
  out[end - p] = '\0';
  return 1;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = (char *)malloc((size_t)len + 1);
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[len] = '\0';
    *size = (size_t)len;
  }
  return buf;
}

int lb_init(int device, const char *cubin_dir) {
  if (lb.ready) return 0;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail(77, "no CUDA driver: dlopen(libcuda.so.1) failed: %s", dlerror());
  RESOLVE(init, "cuInit");
  RESOLVE(device_get, "cuDeviceGet");
  RESOLVE(device_get_attribute, "cuDeviceGetAttribute");
  RESOLVE(primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  RESOLVE(ctx_set_current, "cuCtxSetCurrent");
  RESOLVE(ctx_get_current, "cuCtxGetCurrent");
  RESOLVE(ctx_get_id, "cuCtxGetId");
  RESOLVE(mem_alloc, "cuMemAlloc_v2");
  RESOLVE(stream_create, "cuStreamCreate");
  RESOLVE(stream_synchronize, "cuStreamSynchronize");
  RESOLVE(event_create, "cuEventCreate");
  RESOLVE(event_record, "cuEventRecord");
  RESOLVE(event_synchronize, "cuEventSynchronize");
  RESOLVE(event_elapsed_time, "cuEventElapsedTime");
  RESOLVE(module_load_data, "cuModuleLoadData");
  RESOLVE(module_get_function, "cuModuleGetFunction");
  RESOLVE(launch_kernel, "cuLaunchKernel");
  RESOLVE(get_error_string, "cuGetErrorString");
  pfn_fake_set_device fake_set_device;
  pfn_fake_create_context fake_create_context;
  {
    void *a = dlsym(lib, "fake_cuda_set_device"), *b = dlsym(lib, "fake_cuda_create_context");
    memcpy(&fake_set_device, &a, sizeof a);
    memcpy(&fake_create_context, &b, sizeof b);
  }
  lb.fake = fake_set_device != NULL && fake_create_context != NULL;
  if (!lb.init || !lb.ctx_set_current || !lb.module_load_data || !lb.module_get_function ||
      !lb.launch_kernel)
    return fail(-1, "libcuda.so.1 lacks a required entry point%s", "");
  CUresult r = lb.init(0);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuInit");

  if (lb.fake) {
    /* CPU-only test run on tests/fake_cuda: an sm_90 device, fake buffer addresses. */
    fake_set_device(device, 9, 0, 232448);
    lb.ctx = fake_create_context(device);
    lb.sm = 90;
    lb.x = 0x100000;
    lb.y = 0x200000;
    lb.out = 0x300000;
    lb.stream = NULL;
    if ((r = lb.ctx_set_current(lb.ctx)) != CUDA_SUCCESS) return cu_fail(r, "cuCtxSetCurrent");
  } else {
    if (!lb.device_get || !lb.device_get_attribute || !lb.primary_ctx_retain || !lb.mem_alloc ||
        !lb.stream_create || !lb.stream_synchronize || !lb.event_create || !lb.event_record ||
        !lb.event_synchronize || !lb.event_elapsed_time)
      return fail(-1, "libcuda.so.1 lacks a required entry point%s", "");
    CUdevice dev;
    int major = 0, minor = 0;
    if ((r = lb.device_get(&dev, device)) != CUDA_SUCCESS) return cu_fail(r, "cuDeviceGet");
    lb.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    lb.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    lb.sm = 10 * major + minor;
    if ((r = lb.primary_ctx_retain(&lb.ctx, dev)) != CUDA_SUCCESS)
      return cu_fail(r, "cuDevicePrimaryCtxRetain");
    if ((r = lb.ctx_set_current(lb.ctx)) != CUDA_SUCCESS) return cu_fail(r, "cuCtxSetCurrent");
    CUdeviceptr *bufs[3] = {&lb.x, &lb.y, &lb.out};
    for (int i = 0; i < 3; ++i)
      if ((r = lb.mem_alloc(bufs[i], 4096 * sizeof(float))) != CUDA_SUCCESS)
        return cu_fail(r, "cuMemAlloc");
    if ((r = lb.stream_create(&lb.stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
      return cu_fail(r, "cuStreamCreate");
    if ((r = lb.event_create(&lb.ev0, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (r = lb.event_create(&lb.ev1, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
      return cu_fail(r, "cuEventCreate");
  }
  int arch;
  if (lb.sm == 90) {
    arch = 90;
  } else if (lb.sm >= 80 && lb.sm < 90) {
    arch = 80;
  } else {
    char sm[16];
    snprintf(sm, sizeof sm, "%d", lb.sm);
    return fail(-1, "the benchmark has cubins for sm_80 and sm_90, the device is sm_%s", sm);
  }

  char path[4096], *meta;
  size_t meta_size;
  snprintf(path, sizeof path, "%s/tiny1_a0_s0_sm%d.json", cubin_dir, arch);
  if (!(meta = (char *)read_file(path, &meta_size))) return fail(-1, "cannot read %s", path);
  if (!json_str(meta, "kernel_name", lb.kernel_name, sizeof lb.kernel_name))
    return fail(-1, "no kernel_name in %s", path);
  lb.block_threads = (unsigned int)(json_int(meta, "num_warps", 4) * json_int(meta, "warp_size", 32));
  lb.shared = (unsigned int)json_int(meta, "shared", 0);
  if (json_int(meta, "global_scratch_size", 0) != 0 || json_int(meta, "profile_scratch_size", 0) != 0)
    return fail(-1, "%s: the raw path does not allocate scratch memory", path);
  free(meta);
  if (lb.shared > 49152) return fail(-1, "%s: raw path expects <= 48 KiB shared memory", path);
  snprintf(path, sizeof path, "%s/tiny1_a0_s0_sm%d.cubin", cubin_dir, arch);
  if (!(lb.cubin = read_file(path, &lb.cubin_size))) return fail(-1, "cannot read %s", path);

  lb.n = LB_N;
  lb.no_scratch = 0;
  /* what the generated launcher passes: the arguments, then global and profile scratch */
  lb.params[0] = &lb.x;
  lb.params[1] = &lb.y;
  lb.params[2] = &lb.out;
  lb.params[3] = &lb.n;
  lb.params[4] = &lb.no_scratch;
  lb.params[5] = &lb.no_scratch;
  lb.ready = 1;
  return 0;
}

const char *lb_error(void) { return lb.error; }
int lb_sm(void) { return lb.sm; }
int lb_is_fake(void) { return lb.fake; }

const char *lb_method_name(int method) {
  switch (method) {
    case LB_RAW: return "raw cuLaunchKernel";
    case LB_DISPATCH1: return "dispatcher, 1 variant";
    case LB_DISPATCH8: return "dispatcher, 8 variants (last matches)";
    case LB_AUTO: return "tuned dispatch (NAME_auto)";
  }
  return NULL;
}

static int load_raw(void) {
  CUresult r;
  if (lb.function) return 0;
  if ((r = lb.module_load_data(&lb.module, lb.cubin)) != CUDA_SUCCESS)
    return cu_fail(r, "cuModuleLoadData");
  if ((r = lb.module_get_function(&lb.function, lb.module, lb.kernel_name)) != CUDA_SUCCESS)
    return cu_fail(r, "cuModuleGetFunction");
  return 0;
}

static inline CUresult launch_raw(void) {
  unsigned int grid = (unsigned int)((lb.n + LB_BLOCK - 1) / LB_BLOCK);
  return lb.launch_kernel(lb.function, grid, 1, 1, lb.block_threads, 1, 1, lb.shared, lb.stream,
                          lb.params, NULL);
}
static inline CUresult launch_dispatch1(void) { return tiny1(lb.stream, lb.x, lb.y, lb.out, lb.n, 0); }
static inline CUresult launch_dispatch8(void) { return tiny8(lb.stream, lb.x, lb.y, lb.out, lb.n, 0); }
static inline CUresult launch_auto(void) { return tiny_auto_auto(lb.stream, lb.x, lb.y, lb.out, lb.n); }

static CUresult launch(int method) {
  switch (method) {
    case LB_RAW: return launch_raw();
    case LB_DISPATCH1: return launch_dispatch1();
    case LB_DISPATCH8: return launch_dispatch8();
    case LB_AUTO: return launch_auto();
  }
  return CUDA_ERROR_INVALID_VALUE;
}

static CUresult sync_stream(void) {
  return lb.fake ? CUDA_SUCCESS : lb.stream_synchronize(lb.stream);
}

static int check_method(int method) {
  if (!lb.ready) return fail(-1, "lb_init has not succeeded%s", "");
  if (method < 0 || method >= LB_NUM_METHODS) return fail(-1, "unknown method%s", "");
  return 0;
}

int lb_first_call(int method, double *first_us, double *second_us) {
  int rc;
  CUresult r;
  if ((rc = check_method(method))) return rc;
  double t0 = now_s();
  if (method == LB_RAW && (rc = load_raw())) return rc;
  if ((r = launch(method)) != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
  if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  double t1 = now_s();
  if ((r = launch(method)) != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
  if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  double t2 = now_s();
  *first_us = 1e6 * (t1 - t0);
  *second_us = 1e6 * (t2 - t1);
  return 0;
}

/* One loop per method, so that the loop body is the launch call and nothing else. */
#define LOOP(fn)                                   \
  for (long i = 0; i < iters; ++i) {               \
    if ((r = fn()) != CUDA_SUCCESS) break;         \
  }

static CUresult run_loop(int method, long iters) {
  CUresult r = CUDA_SUCCESS;
  switch (method) {
    case LB_RAW: LOOP(launch_raw); break;
    case LB_DISPATCH1: LOOP(launch_dispatch1); break;
    case LB_DISPATCH8: LOOP(launch_dispatch8); break;
    case LB_AUTO: LOOP(launch_auto); break;
  }
  return r;
}

static int prepare(int method) {
  int rc;
  CUresult r;
  if ((rc = check_method(method))) return rc;
  if (method == LB_RAW && (rc = load_raw())) return rc;
  /* warm-up: modules loaded, caches filled */
  if ((r = run_loop(method, 100)) != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
  if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  return 0;
}

int lb_time(int method, long iters, double *enqueue_s, double *total_s, double *gpu_s) {
  int rc;
  CUresult r;
  if ((rc = prepare(method))) return rc;
  if (!lb.fake && (r = lb.event_record(lb.ev0, lb.stream)) != CUDA_SUCCESS)
    return cu_fail(r, "cuEventRecord");
  double t0 = now_s();
  r = run_loop(method, iters);
  double t1 = now_s();
  if (r != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
  if (!lb.fake && (r = lb.event_record(lb.ev1, lb.stream)) != CUDA_SUCCESS)
    return cu_fail(r, "cuEventRecord");
  if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  double t2 = now_s();
  *enqueue_s = t1 - t0;
  *total_s = t2 - t0;
  *gpu_s = 0;
  if (!lb.fake) {
    float ms = 0;
    if ((r = lb.event_elapsed_time(&ms, lb.ev0, lb.ev1)) != CUDA_SUCCESS)
      return cu_fail(r, "cuEventElapsedTime");
    *gpu_s = 1e-3 * ms;
  }
  return 0;
}

int lb_time_batched(int method, long iters, long batch, double *enqueue_s) {
  int rc;
  CUresult r;
  if ((rc = prepare(method))) return rc;
  if (batch <= 0) batch = 1;
  double total = 0;
  for (long done = 0; done < iters; done += batch) {
    long count = iters - done < batch ? iters - done : batch;
    double t0 = now_s();
    r = run_loop(method, count);
    total += now_s() - t0;
    if (r != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
    if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  }
  *enqueue_s = total;
  return 0;
}

int lb_time_block(int method, long iters, double *host_s) {
  int rc;
  CUresult r;
  if ((rc = check_method(method))) return rc;
  if (method == LB_RAW && (rc = load_raw())) return rc;
  double t0 = now_s();
  r = run_loop(method, iters);
  *host_s = now_s() - t0;
  if (r != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
  return 0;
}

int lb_sync(void) {
  CUresult r;
  if (!lb.ready) return fail(-1, "lb_init has not succeeded%s", "");
  if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  return 0;
}

int lb_time_queued(int method, long iters, double *gpu_s) {
  int rc;
  CUresult r;
  float ms = 0;
  if ((rc = check_method(method))) return rc;
  if (lb.fake) return fail(-1, "lb_time_queued needs a real GPU%s", "");
  if (method == LB_RAW && (rc = load_raw())) return rc;
  if ((r = lb.event_record(lb.ev0, lb.stream)) != CUDA_SUCCESS) return cu_fail(r, "cuEventRecord");
  if ((r = run_loop(method, iters)) != CUDA_SUCCESS) return cu_fail(r, lb_method_name(method));
  if ((r = lb.event_record(lb.ev1, lb.stream)) != CUDA_SUCCESS) return cu_fail(r, "cuEventRecord");
  if ((r = sync_stream()) != CUDA_SUCCESS) return cu_fail(r, "cuStreamSynchronize");
  if ((r = lb.event_elapsed_time(&ms, lb.ev0, lb.ev1)) != CUDA_SUCCESS)
    return cu_fail(r, "cuEventElapsedTime");
  *gpu_s = 1e-3 * ms;
  return 0;
}

static volatile unsigned long long lb_sink; /* keeps the lookup loop from being optimised away */

int lb_time_context_lookup(long iters, double *get_current_ns, double *get_id_ns) {
  CUcontext ctx = NULL;
  unsigned long long id = 0, sum = 0;
  CUresult r;
  if (!lb.ready) return fail(-1, "lb_init has not succeeded%s", "");
  if (!lb.ctx_get_current || !lb.ctx_get_id)
    return fail(-1, "libcuda.so.1 lacks cuCtxGetCurrent or cuCtxGetId%s", "");
  double t0 = now_s();
  for (long i = 0; i < iters; ++i)
    if ((r = lb.ctx_get_current(&ctx)) != CUDA_SUCCESS) return cu_fail(r, "cuCtxGetCurrent");
  double t1 = now_s();
  for (long i = 0; i < iters; ++i) {
    if ((r = lb.ctx_get_id(ctx, &id)) != CUDA_SUCCESS) return cu_fail(r, "cuCtxGetId");
    sum += id;
  }
  double t2 = now_s();
  *get_current_ns = 1e9 * (t1 - t0) / (double)iters;
  *get_id_ns = 1e9 * (t2 - t1) / (double)iters;
  lb_sink = sum;
  return 0;
}

int lb_buffers(unsigned long long *x, unsigned long long *y, unsigned long long *out, int *n,
               void **stream) {
  if (!lb.ready) return fail(-1, "lb_init has not succeeded%s", "");
  *x = lb.x;
  *y = lb.y;
  *out = lb.out;
  *n = lb.n;
  *stream = (void *)lb.stream;
  return 0;
}
