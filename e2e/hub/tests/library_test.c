/* library_test: the hub-built kernel library, linked and launched on rules_triton's fake CUDA
 * driver (CPU only). argv[1]: the fake libcuda.so.1. The generated code opens the driver with
 * dlopen("libcuda.so.1"), so the fake's folder goes on LD_LIBRARY_PATH and the test re-executes
 * itself once. Exit code 0: pass; 1: a check failed; 2: set-up failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "kernels/axpy.h"

static int failures = 0;
#define CHECK(cond, ...)          \
  do {                            \
    if (!(cond)) {                \
      ++failures;                 \
      printf("FAIL %s: ", #cond); \
      printf(__VA_ARGS__);        \
      printf("\n");               \
    }                             \
  } while (0)

#define RESOLVE(lib, var, name) ((*(void **)&var = dlsym(lib, name)) != NULL)

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: %s FAKE_LIBCUDA\n", argv[0]);
    return 2;
  }
  char fake_dir[PATH_MAX];
  if (!realpath(argv[1], fake_dir)) {
    printf("no fake driver at %s\n", argv[1]);
    return 2;
  }
  dirname(fake_dir);
  if (!getenv("HUB_TEST_REEXECUTED")) {
    setenv("LD_LIBRARY_PATH", fake_dir, 1);
    setenv("HUB_TEST_REEXECUTED", "1", 1);
    execv("/proc/self/exe", argv);
    printf("cannot re-execute with LD_LIBRARY_PATH set\n");
    return 2;
  }

  void (*f_reset)(void);
  void (*f_set_device)(int, int, int, int);
  CUcontext (*f_create_context)(int);
  void (*f_set_current)(CUcontext);
  int (*f_num_launches)(void);
  int (*f_get_launch)(int, fake_cuda_launch *);
  int (*f_num_loads)(void);
  int (*f_get_load)(int, fake_cuda_load *);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib || !RESOLVE(lib, f_reset, "fake_cuda_reset") || !RESOLVE(lib, f_set_device, "fake_cuda_set_device") ||
      !RESOLVE(lib, f_create_context, "fake_cuda_create_context") ||
      !RESOLVE(lib, f_set_current, "fake_cuda_set_current") ||
      !RESOLVE(lib, f_num_launches, "fake_cuda_num_launches") ||
      !RESOLVE(lib, f_get_launch, "fake_cuda_get_launch") || !RESOLVE(lib, f_num_loads, "fake_cuda_num_loads") ||
      !RESOLVE(lib, f_get_load, "fake_cuda_get_load")) {
    printf("cannot use the fake libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  f_reset();
  f_set_device(0, 9, 0, 232448); /* sm_90 */
  f_set_current(f_create_context(0));

  const CUdeviceptr x = 0x100000, y = 0x200000, out = 0x300000; /* 16-byte aligned */
  const int32_t sizes[] = {4096, 1000};                           /* aligned variant, generic one */
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    int before = f_num_launches();
    CUresult r = axpy_default(NULL, x, y, out, 2.0f, sizes[i]);
    CHECK(r == CUDA_SUCCESS, "n=%d: CUresult %d", sizes[i], (int)r);
    CHECK(f_num_launches() == before + 1, "n=%d: one launch", sizes[i]);
    fake_cuda_launch launch;
    if (f_get_launch(f_num_launches() - 1, &launch)) {
      unsigned grid = (unsigned)((sizes[i] + 511) / 512);
      CHECK(launch.grid[0] == grid && launch.grid[1] == 1 && launch.grid[2] == 1,
            "n=%d: grid %u,%u,%u, expected cdiv(n, 512) = %u", sizes[i], launch.grid[0], launch.grid[1],
            launch.grid[2], grid);
      CHECK(launch.block[0] == 128, "n=%d: 4 warps = 128 threads, got %u", sizes[i], launch.block[0]);
    }
  }
  /* One image per specialization, each a real cubin (ELF) from the hub's ptxas. */
  CHECK(f_num_loads() == 2, "2 specializations: 2 module loads, got %d", f_num_loads());
  for (int i = 0; i < f_num_loads(); ++i) {
    fake_cuda_load load;
    CHECK(f_get_load(i, &load) && strcmp(load.tag, "elf") == 0 && load.elf_size > 0, "load %d: an ELF image", i);
  }

  printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
