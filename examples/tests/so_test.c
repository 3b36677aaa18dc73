/* so_test: libexample_kernels.so as a foreign-language user sees it, through dlopen/dlsym only.
 *
 * Usage: so_test PATH/TO/libexample_kernels.so
 * Checks that every kernel's C API can be looked up by name, that internal symbols (variant
 * launchers, the shared runtime) cannot, that the algo queries work without a GPU, and that
 * without a CUDA driver every call that needs one returns CUDA_ERROR_NO_DEVICE (100) without
 * crashing. With a driver present (a GPU machine) the driver-less checks are skipped.
 * Exit code 0: pass; 1: a check failed; 2: bad usage or the library cannot be opened.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* CUresult values from docs/design.md (cuda.h is not needed for a dlopen client). */
enum { kSuccess = 0, kInvalidValue = 1, kNoDevice = 100 };

typedef int (*num_algos_fn)(void);
typedef const char *(*algo_info_fn)(int);
typedef int (*void_fn)(void);
/* add(stream, x, y, out, n, algo_id) */
typedef int (*add_fn)(void *, unsigned long long, unsigned long long, unsigned long long, int, int);

static const char *const kKernels[] = {"add", "big_smem", "matmul", "scalars", "scale", "softmax"};
static const int kNumAlgos[] = {2, 1, 4, 1, 2, 3};
#define NUM_KERNELS (int)(sizeof kKernels / sizeof kKernels[0])

static int failures = 0, checks = 0;

static void check(int ok, const char *what, const char *name) {
  ++checks;
  if (!ok) {
    ++failures;
    printf("FAIL: %s (%s)\n", what, name);
  }
}

static void *sym(void *lib, const char *fmt, const char *name) {
  char buf[128];
  void *p;
  snprintf(buf, sizeof buf, fmt, name);
  p = dlsym(lib, buf);
  check(p != NULL, "exported symbol missing", buf);
  return p;
}

int main(int argc, char **argv) {
  void *lib, *libcuda;
  int i, k;
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH/TO/libexample_kernels.so\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("FAIL: dlopen(%s): %s\n", argv[1], dlerror());
    return 2;
  }
  libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  for (k = 0; k < NUM_KERNELS; ++k) {
    const char *name = kKernels[k];
    void *launch = sym(lib, "%s", name);
    void *launch_default = sym(lib, "%s_default", name);
    void *load = sym(lib, "load_%s", name);
    void *unload = sym(lib, "unload_%s", name);
    void *num = sym(lib, "%s_get_num_algos", name);
    void *info = sym(lib, "%s_get_algo_info", name);
    num_algos_fn num_algos;
    algo_info_fn algo_info;
    void_fn load_fn, unload_fn;
    char buf[128];
    /* Internal names must not leak: variant launchers and their loaders are hidden. */
    snprintf(buf, sizeof buf, "%s_a0_s0_sm90", name);
    check(dlsym(lib, buf) == NULL, "variant launcher is exported", buf);
    snprintf(buf, sizeof buf, "load_%s_a0_s0_sm90", name);
    check(dlsym(lib, buf) == NULL, "variant loader is exported", buf);
    if (!launch || !launch_default || !load || !unload || !num || !info) continue;
    memcpy(&num_algos, &num, sizeof num);
    memcpy(&algo_info, &info, sizeof info);
    memcpy(&load_fn, &load, sizeof load);
    memcpy(&unload_fn, &unload, sizeof unload);
    check(num_algos() == kNumAlgos[k], "unexpected number of algos", name);
    for (i = 0; i < num_algos(); ++i)
      check(algo_info(i) != NULL && strstr(algo_info(i), "num_warps=") != NULL,
            "algo info lacks num_warps=", name);
    check(algo_info(-1) == NULL && algo_info(num_algos()) == NULL,
          "algo info out of range is not NULL", name);
    if (libcuda == NULL) {
      check(load_fn() == kNoDevice, "load without a driver is not CUDA_ERROR_NO_DEVICE", name);
      check(unload_fn() == kNoDevice, "unload without a driver is not CUDA_ERROR_NO_DEVICE", name);
    }
  }
  {
    void *p = dlsym(lib, "add");
    add_fn add;
    if (p != NULL) {
      memcpy(&add, &p, sizeof p);
      check(add(NULL, 0, 0, 0, 100, 2) == kInvalidValue, "add(algo_id=2) is not CUDA_ERROR_INVALID_VALUE", "add");
      check(add(NULL, 0, 0, 0, 100, -1) == kInvalidValue, "add(algo_id=-1) is not CUDA_ERROR_INVALID_VALUE", "add");
      if (libcuda == NULL)
        check(add(NULL, 0, 0, 0, 100, 0) == kNoDevice, "add without a driver is not CUDA_ERROR_NO_DEVICE", "add");
    }
  }
  /* The shared runtime is static in every translation unit. */
  check(dlsym(lib, "trt_driver_get") == NULL, "runtime symbol is exported", "trt_driver_get");
  check(dlsym(lib, "trt_kernel_launch") == NULL, "runtime symbol is exported", "trt_kernel_launch");
  printf("so_test: %s: %d checks, %d failed%s\n", argv[1], checks, failures,
         libcuda == NULL ? " (no CUDA driver: driver-less error checks included)" : " (CUDA driver present)");
  return failures == 0 ? 0 : 1;
}
