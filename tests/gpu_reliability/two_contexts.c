/* Two CUDA contexts on one GPU, through a triton_kernel_library (//tests/gpu_reliability:rel_add,
 * out = x + y in fp32, algo 0 BLOCK=1024 and algo 1 BLOCK=256, aligned and generic variants).
 *
 *   1. contexts A and B on device 0 (cuCtxCreate): launches in both, every algo, aligned and
 *      unaligned sizes, results checked on the host;
 *   2. unload in A: B keeps working; A works again (reloads on first use);
 *   3. concurrently: a thread in A launches and unloads in turn while a thread in B launches;
 *   4. A destroyed: B keeps working; a new context C (often at A's address) works too, so no
 *      module of the destroyed context is reused.
 *
 * The driver is opened with dlopen, like the generated library does: nothing links libcuda.
 * Prints "PASS two_contexts" and exits 0, or "FAIL ..." and exits 1; with no driver or no GPU it
 * prints "SKIP ..." and exits 77 (the CPU-only build machines run it that way as a test).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu_reliability/rel_add.h"

#define SKIP_EXIT 77

typedef CUresult (*pfn_init)(unsigned int);
typedef CUresult (*pfn_device_get_count)(int *);
typedef CUresult (*pfn_device_get)(CUdevice *, int);
typedef CUresult (*pfn_ctx_create_v2)(CUcontext *, unsigned int, CUdevice);
typedef CUresult (*pfn_ctx_create_v4)(CUcontext *, void *, unsigned int, CUdevice);
typedef CUresult (*pfn_ctx_destroy)(CUcontext);
typedef CUresult (*pfn_ctx_set_current)(CUcontext);
typedef CUresult (*pfn_ctx_synchronize)(void);
typedef CUresult (*pfn_mem_alloc)(CUdeviceptr *, size_t);
typedef CUresult (*pfn_mem_free)(CUdeviceptr);
typedef CUresult (*pfn_memcpy_htod)(CUdeviceptr, const void *, size_t);
typedef CUresult (*pfn_memcpy_dtoh)(void *, CUdeviceptr, size_t);
typedef CUresult (*pfn_get_error_name)(CUresult, const char **);

static struct {
  pfn_init init;
  pfn_device_get_count device_get_count;
  pfn_device_get device_get;
  pfn_ctx_create_v2 ctx_create_v2;
  pfn_ctx_create_v4 ctx_create_v4;
  pfn_ctx_destroy ctx_destroy;
  pfn_ctx_set_current ctx_set_current;
  pfn_ctx_synchronize ctx_synchronize;
  pfn_mem_alloc mem_alloc;
  pfn_mem_free mem_free;
  pfn_memcpy_htod htod;
  pfn_memcpy_dtoh dtoh;
  pfn_get_error_name error_name;
} cu;

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  return p;
}

#define LOAD(field, name) memcpy(&cu.field, &(void *){sym(lib, name)}, sizeof(void *))

static const char *err_name(CUresult r) {
  const char *name = NULL;
  if (cu.error_name == NULL || cu.error_name(r, &name) != CUDA_SUCCESS || name == NULL)
    return "?";
  return name;
}

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int failures;

#define FAIL(...)                                 \
  do {                                            \
    pthread_mutex_lock(&fail_lock);               \
    ++failures;                                   \
    fprintf(stdout, "FAIL two_contexts: ");       \
    fprintf(stdout, __VA_ARGS__);                 \
    fprintf(stdout, "\n");                        \
    fflush(stdout);                               \
    pthread_mutex_unlock(&fail_lock);             \
  } while (0)

#define CU_OK(call)                                                                     \
  do {                                                                                  \
    CUresult r_ = (call);                                                               \
    if (r_ != CUDA_SUCCESS) {                                                           \
      FAIL("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #call, (int)r_, err_name(r_)); \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

/* Runs out = x + y with n elements (unaligned offset when `offset`), checks every element.
 * `seed` makes each context's data different. Returns 0 on success. */
static int add_and_check(const char *where, int n, int offset, int algo, float seed) {
  size_t bytes = (size_t)(n + 4) * sizeof(float);
  float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes), *ho = (float *)malloc(bytes);
  CUdeviceptr dx = 0, dy = 0, dout = 0;
  int i, bad = 0;
  if (!hx || !hy || !ho) {
    FAIL("%s: out of host memory", where);
    return 1;
  }
  for (i = 0; i < n + 4; ++i) {
    hx[i] = seed + (float)i;
    hy[i] = 0.5f * (float)(i % 1000) - seed;
    ho[i] = -1.0f;
  }
  CU_OK(cu.mem_alloc(&dx, bytes));
  CU_OK(cu.mem_alloc(&dy, bytes));
  CU_OK(cu.mem_alloc(&dout, bytes));
  CU_OK(cu.htod(dx, hx, bytes));
  CU_OK(cu.htod(dy, hy, bytes));
  CU_OK(cu.htod(dout, ho, bytes));
  {
    CUdeviceptr off = (CUdeviceptr)(offset ? sizeof(float) : 0);
    CUresult r = rel_add(NULL, dx + off, dy + off, dout + off, n, algo);
    if (r != CUDA_SUCCESS) {
      FAIL("%s: rel_add(n=%d, offset=%d, algo=%d) returned %d (%s)", where, n, offset, algo,
           (int)r, err_name(r));
      bad = 1;
    }
  }
  CU_OK(cu.ctx_synchronize());
  CU_OK(cu.dtoh(ho, dout, bytes));
  for (i = 0; !bad && i < n; ++i) {
    int j = i + (offset ? 1 : 0);
    float want = hx[j] + hy[j];
    if (fabsf(ho[j] - want) > 1e-3f * (1.0f + fabsf(want))) {
      FAIL("%s: out[%d] = %g, expected %g (n=%d, offset=%d, algo=%d)", where, i, ho[j], want, n,
           offset, algo);
      bad = 1;
    }
  }
  if (!bad && offset && ho[0] != -1.0f) {
    FAIL("%s: wrote before the output (n=%d, algo=%d)", where, n, algo);
    bad = 1;
  }
  if (!bad && ho[n + (offset ? 1 : 0)] != -1.0f) {
    FAIL("%s: wrote past the end of the output (n=%d, offset=%d, algo=%d)", where, n, offset, algo);
    bad = 1;
  }
  CU_OK(cu.mem_free(dx));
  CU_OK(cu.mem_free(dy));
  CU_OK(cu.mem_free(dout));
  free(hx);
  free(hy);
  free(ho);
  return bad;
}

/* Every algo, the aligned variant (n % 16 == 0, aligned pointers) and the generic one. */
static int all_cases(const char *where, float seed) {
  int algo, bad = 0;
  for (algo = 0; algo < rel_add_get_num_algos(); ++algo) {
    bad |= add_and_check(where, 1 << 20, 0, algo, seed);
    bad |= add_and_check(where, 100003, 1, algo, seed);
  }
  return bad;
}

static CUcontext ctx_create(CUdevice dev, CUcontext *out) {
  CUresult r = CUDA_ERROR_NOT_SUPPORTED;
  if (cu.ctx_create_v2 != NULL)
    r = cu.ctx_create_v2(out, 0, dev);
  else if (cu.ctx_create_v4 != NULL)
    r = cu.ctx_create_v4(out, NULL, 0, dev);
  if (r != CUDA_SUCCESS) {
    FAIL("cuCtxCreate returned %d (%s)", (int)r, err_name(r));
    *out = NULL;
  }
  return *out;
}

/* ---- phase 3: launch + unload in A on one thread, launches in B on another ---------------- */

static CUcontext ctx_a, ctx_b;

static void *unloader(void *arg) {
  int k;
  (void)arg;
  cu.ctx_set_current(ctx_a);
  for (k = 0; k < 10; ++k) {
    CUresult r;
    add_and_check("phase 3, context A", 65536, k & 1, k % 2, 3.0f);
    r = unload_rel_add();
    if (r != CUDA_SUCCESS) FAIL("unload_rel_add in A returned %d (%s)", (int)r, err_name(r));
  }
  return NULL;
}

static void *launcher(void *arg) {
  int k;
  (void)arg;
  cu.ctx_set_current(ctx_b);
  for (k = 0; k < 40; ++k) add_and_check("phase 3, context B", 65536 + k, k & 1, k % 2, 4.0f);
  return NULL;
}

int main(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CUdevice dev = 0;
  CUcontext ctx_c = NULL;
  int count = 0;
  CUresult r;
  pthread_t t1, t2;

  if (lib == NULL) {
    printf("SKIP two_contexts: no CUDA driver (%s)\n", dlerror());
    return SKIP_EXIT;
  }
  LOAD(init, "cuInit");
  LOAD(device_get_count, "cuDeviceGetCount");
  LOAD(device_get, "cuDeviceGet");
  LOAD(ctx_create_v2, "cuCtxCreate_v2");
  LOAD(ctx_create_v4, "cuCtxCreate_v4");
  LOAD(ctx_destroy, "cuCtxDestroy_v2");
  LOAD(ctx_set_current, "cuCtxSetCurrent");
  LOAD(ctx_synchronize, "cuCtxSynchronize");
  LOAD(mem_alloc, "cuMemAlloc_v2");
  LOAD(mem_free, "cuMemFree_v2");
  LOAD(htod, "cuMemcpyHtoD_v2");
  LOAD(dtoh, "cuMemcpyDtoH_v2");
  LOAD(error_name, "cuGetErrorName");
  if (!cu.init || !cu.device_get_count || !cu.device_get || !(cu.ctx_create_v2 || cu.ctx_create_v4) ||
      !cu.ctx_destroy || !cu.ctx_set_current || !cu.ctx_synchronize || !cu.mem_alloc ||
      !cu.mem_free || !cu.htod || !cu.dtoh) {
    printf("FAIL two_contexts: the driver lacks an entry point this test uses\n");
    return 1;
  }
  r = cu.init(0);
  if (r == CUDA_SUCCESS) r = cu.device_get_count(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    printf("SKIP two_contexts: no GPU (cuInit/cuDeviceGetCount: %d %s, %d devices)\n", (int)r,
           err_name(r), count);
    return SKIP_EXIT;
  }
  CU_OK(cu.device_get(&dev, 0));

  /* 1. two contexts on one GPU, launches in both */
  if (!ctx_create(dev, &ctx_a) || !ctx_create(dev, &ctx_b)) return 1;
  CU_OK(cu.ctx_set_current(ctx_a));
  all_cases("phase 1, context A", 1.0f);
  CU_OK(cu.ctx_set_current(ctx_b));
  all_cases("phase 1, context B", 2.0f);

  /* 2. unload in A: B keeps working, A reloads on first use */
  CU_OK(cu.ctx_set_current(ctx_a));
  CU_OK(unload_rel_add());
  CU_OK(unload_rel_add()); /* a no-op the second time */
  CU_OK(cu.ctx_set_current(ctx_b));
  all_cases("phase 2, context B after unload in A", 5.0f);
  CU_OK(cu.ctx_set_current(ctx_a));
  all_cases("phase 2, context A after its unload", 6.0f);
  CU_OK(load_rel_add());

  /* 3. concurrently */
  if (pthread_create(&t1, NULL, unloader, NULL) != 0 || pthread_create(&t2, NULL, launcher, NULL) != 0) {
    FAIL("pthread_create");
    return 1;
  }
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);

  /* 4. destroy A: B keeps working, a new context works */
  CU_OK(cu.ctx_set_current(NULL));
  CU_OK(cu.ctx_destroy(ctx_a));
  CU_OK(cu.ctx_set_current(ctx_b));
  all_cases("phase 4, context B after A was destroyed", 7.0f);
  if (!ctx_create(dev, &ctx_c)) return 1;
  printf("context A was %p, new context C is %p%s\n", (void *)ctx_a, (void *)ctx_c,
         ctx_a == ctx_c ? " (same address)" : "");
  all_cases("phase 4, new context C", 8.0f);
  CU_OK(unload_rel_add());
  CU_OK(cu.ctx_set_current(NULL));
  CU_OK(cu.ctx_destroy(ctx_c));
  CU_OK(cu.ctx_destroy(ctx_b));

  if (failures) {
    printf("FAIL two_contexts: %d failures\n", failures);
    return 1;
  }
  printf("PASS two_contexts (%d algos, aligned and unaligned, 3 contexts on device 0)\n",
         rel_add_get_num_algos());
  return 0;
}
