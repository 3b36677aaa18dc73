/* ptx_fallback: the PTX fallback and CUDA_ERROR_NO_BINARY_FOR_GPU on a real GPU.
 *
 * Three libraries of the same add kernel: add_sm80_ptx (cuda:80, embed_ptx = True), add_sm80
 * (cuda:80, no PTX) and add_sm80_sm100_ptx (cuda:80 + cuda:100, embed_ptx = True: the PTX is the
 * portable sm_80 one; Triton's sm_100a PTX would serve no GPU but sm_100). On a device no cubin
 * fits (an H100 is sm_90):
 *   - add_sm80_ptx and add_sm80_sm100_ptx load (the driver JIT-compiles the sm_80 PTX) and
 *     compute out = x + y bit-exactly;
 *   - add_sm80 fails with CUDA_ERROR_NO_BINARY_FOR_GPU, from load_add_sm80() and from the launch.
 * On an sm_8x device all run from the sm_80 cubin (the cubin runs on every 8.x >= 8.0), on an
 * sm_100 one add_sm80_sm100_ptx runs its sm_100a cubin.
 * Prints the SM it saw (cuDeviceGetAttribute COMPUTE_CAPABILITY_MAJOR/MINOR) and the driver.
 *
 * With the fake driver of tests/fake_cuda (found through LD_LIBRARY_PATH; CPU-only CI), the SM is
 * PTX_FALLBACK_FAKE_SM (e.g. 90), no memory is touched, and the loaded image's kind (PTX or
 * ELF cubin) is read from the fake's records and checked too.
 * Exit code: 0 every expectation held, 1 one failed, 77 no driver or no GPU.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu_ptx/add_sm80.h"
#include "tests/gpu_ptx/add_sm80_ptx.h"
#include "tests/gpu_ptx/add_sm80_sm100_ptx.h"

typedef CUresult (*fn_init)(unsigned int);
typedef CUresult (*fn_dev_get)(CUdevice *, int);
typedef CUresult (*fn_dev_attr)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*fn_drv_ver)(int *);
typedef CUresult (*fn_ctx_retain)(CUcontext *, CUdevice);
typedef CUresult (*fn_ctx_set)(CUcontext);
typedef CUresult (*fn_alloc)(CUdeviceptr *, size_t);
typedef CUresult (*fn_free)(CUdeviceptr);
typedef CUresult (*fn_htod)(CUdeviceptr, const void *, size_t);
typedef CUresult (*fn_dtoh)(void *, CUdeviceptr, size_t);
typedef CUresult (*fn_sync)(void);
typedef CUresult (*fn_err_name)(CUresult, const char **);

/* The fake driver's control and inspection API (tests/fake_cuda/fake_cuda.h). */
typedef struct {
  int seq, module_id;
  CUcontext ctx;
  char tag[96];
  int is_ptx, sm;
  unsigned long long elf_size, elf_fnv1a64;
  int unloaded;
} fake_load;
typedef void (*fn_fake_set_device)(int, int, int, int);
typedef CUcontext (*fn_fake_create_context)(int);
typedef int (*fn_fake_num_loads)(void);
typedef int (*fn_fake_get_load)(int, fake_load *);

static void *cu;
static int failures;

static const char *name_of(CUresult r) {
  static char buf[32];
  const char *s = NULL;
  fn_err_name f = (fn_err_name)dlsym(cu, "cuGetErrorName");
  if (f != NULL && f(r, &s) == CUDA_SUCCESS && s != NULL) return s;
  if (r == CUDA_SUCCESS) return "CUDA_SUCCESS";
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  snprintf(buf, sizeof buf, "CUresult %d", (int)r);
  return buf;
}

static void expect(int ok, const char *what) {
  printf("  %s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static void *sym(const char *name) {
  void *p = dlsym(cu, name);
  if (p == NULL) {
    printf("ptx_fallback: SKIP: the driver has no %s\n", name);
    exit(77);
  }
  return p;
}

/* A library with the PTX fallback: loads, launches and (on a GPU) computes x + y bit-exactly;
 * with the fake driver, the image it loaded is the cubin when one fits, else the sm_80 PTX. */
#define check_ptx_library(lib, targets, cubin_fits)                                              \
  do {                                                                                          \
    int loads_before = fake_num_loads ? fake_num_loads() : 0;                                   \
    printf(#lib " (%s, PTX embedded):\n", targets);                                             \
    r = load_##lib();                                                                           \
    printf("  load_" #lib "() = %s\n", name_of(r));                                             \
    expect(r == CUDA_SUCCESS, (cubin_fits) ? "loads (a cubin)" : "loads (driver JIT-compiles the sm_80 PTX)"); \
    if (!fake) /* out = x first: a launch that did nothing leaves it != x + y */                 \
      ((fn_htod)sym("cuMemcpyHtoD_v2"))(out, hx, n * sizeof(float));                            \
    r = lib##_default(0, x, y, out, n);                                                         \
    printf("  " #lib "_default() = %s\n", name_of(r));                                          \
    expect(r == CUDA_SUCCESS, "launches");                                                      \
    if (fake && fake_get_load && fake_num_loads() > loads_before) {                             \
      fake_load l;                                                                              \
      fake_get_load(fake_num_loads() - 1, &l);                                                  \
      printf("  the fake driver loaded a %s image", l.is_ptx ? "PTX" : "cubin");                \
      if (l.is_ptx) printf(" (.target sm_%d)", l.sm);                                           \
      printf("\n");                                                                             \
      expect(l.is_ptx == !(cubin_fits), (cubin_fits) ? "the cubin was loaded" : "the PTX was loaded"); \
      if (l.is_ptx) expect(l.sm == 80, "the PTX is the portable sm_80 one");                    \
    }                                                                                           \
    if (!fake && r == CUDA_SUCCESS) {                                                           \
      int i, bad = 0;                                                                           \
      r = ((fn_sync)sym("cuCtxSynchronize"))();                                                 \
      printf("  cuCtxSynchronize() = %s\n", name_of(r));                                        \
      expect(r == CUDA_SUCCESS, "runs");                                                        \
      ((fn_dtoh)sym("cuMemcpyDtoH_v2"))(hout, out, n * sizeof(float));                         \
      for (i = 0; i < n; ++i) bad += hout[i] != hx[i] + hy[i];                                  \
      printf("  %d of %d results differ from x + y\n", bad, n);                                 \
      expect(bad == 0, "out = x + y bit-exactly");                                              \
    }                                                                                           \
  } while (0)

int main(void) {
  const int n = 1 << 20;
  int major = 0, minor = 0, sm, driver = 0, fake;
  CUdeviceptr x = 0, y = 0, out = 0;
  float *hx = NULL, *hy = NULL, *hout = NULL;
  CUresult r;
  fn_fake_num_loads fake_num_loads;
  fn_fake_get_load fake_get_load;

  cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cu == NULL) {
    printf("ptx_fallback: SKIP: no CUDA driver (libcuda.so.1): %s\n", dlerror());
    return 77;
  }
  fake = dlsym(cu, "fake_cuda_create_context") != NULL;
  fake_num_loads = (fn_fake_num_loads)dlsym(cu, "fake_cuda_num_loads");
  fake_get_load = (fn_fake_get_load)dlsym(cu, "fake_cuda_get_load");
  if (((fn_init)sym("cuInit"))(0) != CUDA_SUCCESS) {
    printf("ptx_fallback: SKIP: cuInit failed (no GPU?)\n");
    return 77;
  }
  if (fake) {
    const char *want = getenv("PTX_FALLBACK_FAKE_SM");
    int s = want ? atoi(want) : 90;
    CUcontext ctx;
    major = s / 10;
    minor = s % 10;
    ((fn_fake_set_device)sym("fake_cuda_set_device"))(0, major, minor, 232448);
    ctx = ((fn_fake_create_context)sym("fake_cuda_create_context"))(0);
    ((fn_ctx_set)sym("cuCtxSetCurrent"))(ctx);
    printf("ptx_fallback: fake driver (tests/fake_cuda)\n");
  } else {
    CUdevice dev;
    CUcontext ctx;
    int i;
    if (((fn_dev_get)sym("cuDeviceGet"))(&dev, 0) != CUDA_SUCCESS) {
      printf("ptx_fallback: SKIP: no CUDA device\n");
      return 77;
    }
    ((fn_dev_attr)sym("cuDeviceGetAttribute"))(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    ((fn_dev_attr)sym("cuDeviceGetAttribute"))(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    ((fn_drv_ver)sym("cuDriverGetVersion"))(&driver);
    r = ((fn_ctx_retain)sym("cuDevicePrimaryCtxRetain"))(&ctx, dev);
    if (r == CUDA_SUCCESS) r = ((fn_ctx_set)sym("cuCtxSetCurrent"))(ctx);
    if (r != CUDA_SUCCESS) {
      printf("ptx_fallback: no context: %s\n", name_of(r));
      return 1;
    }
    hx = malloc(n * sizeof(float));
    hy = malloc(n * sizeof(float));
    hout = malloc(n * sizeof(float));
    for (i = 0; i < n; ++i) {
      hx[i] = (float)i * 0.5f;
      hy[i] = 1.0f - (float)i / 3.0f;
    }
    r = ((fn_alloc)sym("cuMemAlloc_v2"))(&x, n * sizeof(float));
    if (r == CUDA_SUCCESS) r = ((fn_alloc)sym("cuMemAlloc_v2"))(&y, n * sizeof(float));
    if (r == CUDA_SUCCESS) r = ((fn_alloc)sym("cuMemAlloc_v2"))(&out, n * sizeof(float));
    if (r == CUDA_SUCCESS) r = ((fn_htod)sym("cuMemcpyHtoD_v2"))(x, hx, n * sizeof(float));
    if (r == CUDA_SUCCESS) r = ((fn_htod)sym("cuMemcpyHtoD_v2"))(y, hy, n * sizeof(float));
    if (r != CUDA_SUCCESS) {
      printf("ptx_fallback: memory setup failed: %s\n", name_of(r));
      return 1;
    }
  }
  if (fake) {
    x = 0x10000;
    y = 0x20000;
    out = 0x30000;
  }
  sm = major * 10 + minor;
  printf("ptx_fallback: device 0 is sm_%d (compute capability %d.%d)", sm, major, minor);
  if (driver) printf(", driver CUDA %d.%d", driver / 1000, driver % 1000 / 10);
  printf("\n");

  /* sm_80 cubin runs on 8.x (x >= 0); elsewhere only the PTX can. */
  const int cubin_fits = major == 8;

  check_ptx_library(add_sm80_ptx, "cuda:80", major == 8);
  check_ptx_library(add_sm80_sm100_ptx, "cuda:80 + cuda:100", major == 8 || sm == 100);

  printf("add_sm80 (cuda:80, no PTX):\n");
  r = load_add_sm80();
  printf("  load_add_sm80() = %s\n", name_of(r));
  expect(cubin_fits ? r == CUDA_SUCCESS : r == CUDA_ERROR_NO_BINARY_FOR_GPU,
         cubin_fits ? "loads (the sm_80 cubin)" : "CUDA_ERROR_NO_BINARY_FOR_GPU: no image for this SM");
  r = add_sm80_default(0, x, y, out, n);
  printf("  add_sm80_default() = %s\n", name_of(r));
  expect(cubin_fits ? r == CUDA_SUCCESS : r == CUDA_ERROR_NO_BINARY_FOR_GPU,
         cubin_fits ? "launches" : "the launch fails the same way (nothing launched)");
  if (!fake) {
    ((fn_sync)sym("cuCtxSynchronize"))();
    ((fn_free)sym("cuMemFree_v2"))(x);
    ((fn_free)sym("cuMemFree_v2"))(y);
    ((fn_free)sym("cuMemFree_v2"))(out);
  }
  printf("ptx_fallback: %s (sm_%d)\n", failures ? "FAILED" : "PASS", sm);
  return failures ? 1 : 0;
}
