/* smoke_test: the e2e module's kernel library and app against rules_triton's fake CUDA driver
 * (CPU only). argv[1]: the fake libcuda.so.1, argv[2]: the smoke_app binary, argv[3..]: the
 * library's cubins (`cubin` output group), to tell which variant was launched by its hash.
 *
 * The generated code finds the driver with dlopen("libcuda.so.1"), so the fake's folder must be
 * on LD_LIBRARY_PATH before the process starts: the test re-executes itself once with it set.
 * Exit code 0: pass; 1: a check failed; 2: set-up failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "kernels/relu_scale.h"

static int failures = 0;
#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      ++failures;                        \
      printf("FAIL %s: ", #cond);        \
      printf(__VA_ARGS__);               \
      printf("\n");                      \
    }                                    \
  } while (0)

/* The fake's inspection API, resolved from the libcuda.so.1 the generated code opened. */
static void (*f_reset)(void);
static void (*f_set_device)(int, int, int, int);
static CUcontext (*f_create_context)(int);
static void (*f_set_current)(CUcontext);
static int (*f_num_launches)(void);
static int (*f_get_launch)(int, fake_cuda_launch *);
static int (*f_num_loads)(void);
static int (*f_get_load)(int, fake_cuda_load *);

#define MAX_CUBINS 8
static struct {
  char name[PATH_MAX];
  unsigned char *bytes;
  size_t size;
} cubins[MAX_CUBINS];
static int num_cubins;

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* The cubin file (basename without .cubin) of the last launch's module, or a description. */
static const char *last_variant(void) {
  static char out[PATH_MAX];
  fake_cuda_launch launch;
  if (f_num_launches() == 0 || !f_get_launch(f_num_launches() - 1, &launch)) return "<no launch>";
  for (int i = 0; i < f_num_loads(); ++i) {
    fake_cuda_load load;
    if (!f_get_load(i, &load) || load.module_id != launch.module_id) continue;
    for (int c = 0; c < num_cubins; ++c) {
      if (cubins[c].size >= load.elf_size && fnv1a64(cubins[c].bytes, load.elf_size) == load.elf_fnv1a64) {
        snprintf(out, sizeof out, "%s", cubins[c].name);
        return out;
      }
    }
    return "<unknown image>";
  }
  return "<no load>";
}

static int read_cubin(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f || num_cubins == MAX_CUBINS) return 0;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  cubins[num_cubins].bytes = malloc((size_t)size);
  cubins[num_cubins].size = fread(cubins[num_cubins].bytes, 1, (size_t)size, f);
  fclose(f);
  char copy[PATH_MAX];
  snprintf(copy, sizeof copy, "%s", path);
  char *base = basename(copy);
  char *dot = strrchr(base, '.');
  if (dot) *dot = '\0';
  snprintf(cubins[num_cubins].name, sizeof cubins[num_cubins].name, "%s", base);
  return ++num_cubins;
}

#define RESOLVE(lib, var, name) ((*(void **)&var = dlsym(lib, name)) != NULL)

int main(int argc, char **argv) {
  if (argc < 4) {
    printf("usage: %s FAKE_LIBCUDA SMOKE_APP CUBIN...\n", argv[0]);
    return 2;
  }
  char fake_dir[PATH_MAX];
  if (!realpath(argv[1], fake_dir)) {
    printf("no fake driver at %s\n", argv[1]);
    return 2;
  }
  dirname(fake_dir);
  if (!getenv("SMOKE_TEST_REEXECUTED")) {
    setenv("LD_LIBRARY_PATH", fake_dir, 1);
    setenv("SMOKE_TEST_REEXECUTED", "1", 1);
    execv("/proc/self/exe", argv);
    printf("cannot re-execute with LD_LIBRARY_PATH set\n");
    return 2;
  }
  for (int i = 3; i < argc; ++i) {
    if (!read_cubin(argv[i])) {
      printf("cannot read %s\n", argv[i]);
      return 2;
    }
  }
  CHECK(num_cubins == 4, "2 specializations x 2 targets = 4 cubins, got %d", num_cubins);

  /* the app, as a separate process on the fake driver: it makes no context */
  char command[3 * PATH_MAX];
  snprintf(command, sizeof command, "'%s'", argv[2]);
  FILE *app = popen(command, "r");
  char app_out[4096] = "";
  size_t got = app ? fread(app_out, 1, sizeof app_out - 1, app) : 0;
  app_out[got] = '\0';
  int app_status = app ? pclose(app) : -1;
  CHECK(WIFEXITED(app_status) && WEXITSTATUS(app_status) == 0, "smoke_app exits 0, output:\n%s", app_out);
  CHECK(strstr(app_out, "algos: 1 (BLOCK=256 num_warps=4") != NULL, "smoke_app lists its algo:\n%s", app_out);
  CHECK(strstr(app_out, "CUresult 201") != NULL, "no context: CUDA_ERROR_INVALID_CONTEXT (201):\n%s", app_out);

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
  f_set_device(1, 8, 6, 101376); /* sm_86: runs sm_80 cubins */
  f_set_device(2, 7, 5, 65536);  /* sm_75: below every target */
  CUcontext ctx[3];
  for (int d = 0; d < 3; ++d) ctx[d] = f_create_context(d);

  const CUdeviceptr x = 0x100000, out = 0x200000; /* 16-byte aligned */
  struct {
    int device;
    CUdeviceptr x;
    int32_t n;
    const char *variant;
  } cases[] = {
      {0, x, 4096, "relu_scale_a0_s0_sm90"},     /* aligned, n % 16 == 0 */
      {0, x + 4, 4096, "relu_scale_a0_s1_sm90"}, /* x one float into a buffer */
      {0, x, 1000, "relu_scale_a0_s1_sm90"},     /* n not a multiple of 16 */
      {1, x, 4096, "relu_scale_a0_s0_sm80"},
      {1, x, 1001, "relu_scale_a0_s1_sm80"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    f_set_current(ctx[cases[i].device]);
    int before = f_num_launches();
    CUresult r = relu_scale_default(NULL, cases[i].x, out, 0.5f, cases[i].n);
    CHECK(r == CUDA_SUCCESS, "case %zu: CUresult %d", i, (int)r);
    CHECK(f_num_launches() == before + 1, "case %zu: one launch", i);
    CHECK(strcmp(last_variant(), cases[i].variant) == 0, "case %zu: launched %s, expected %s", i, last_variant(),
          cases[i].variant);
    fake_cuda_launch launch;
    f_get_launch(f_num_launches() - 1, &launch);
    unsigned expected_grid = (unsigned)((cases[i].n + 255) / 256);
    CHECK(launch.grid[0] == expected_grid && launch.grid[1] == 1 && launch.grid[2] == 1,
          "case %zu: grid %u,%u,%u, expected cdiv(n, 256) = %u", i, launch.grid[0], launch.grid[1], launch.grid[2],
          expected_grid);
    CHECK(launch.block[0] == 128, "case %zu: 4 warps = 128 threads, got %u", i, launch.block[0]);
  }
  f_set_current(ctx[2]);
  CHECK(relu_scale_default(NULL, x, out, 0.5f, 4096) == CUDA_ERROR_NO_BINARY_FOR_GPU, "sm_75: no binary");
  f_set_current(NULL);
  CHECK(relu_scale_default(NULL, x, out, 0.5f, 4096) == CUDA_ERROR_INVALID_CONTEXT, "no current context");

  printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
