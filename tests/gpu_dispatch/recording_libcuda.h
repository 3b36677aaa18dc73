/* Inspection API of the recording CUDA driver shim (recording_libcuda.c).
 *
 * The shim is a shared library named libcuda.so.1 (soname libcuda.so.1). Put its folder first on
 * LD_LIBRARY_PATH and generated rules_triton code finds it through its own dlopen("libcuda.so.1").
 * It exports exactly the driver entry points generated code resolves (cuCtxGetCurrent,
 * cuCtxGetDevice, cuDeviceGetAttribute, cuModuleLoadData, cuModuleUnload, cuModuleGetFunction,
 * cuFuncSetAttribute, cuLaunchKernel, cuCtxGetId, cuLaunchKernelEx, cuMemAllocAsync,
 * cuMemFreeAsync) and forwards each to the real driver, opened by the absolute path in
 * $RULES_TRITON_REAL_LIBCUDA (dlopen RTLD_NOW | RTLD_LOCAL, on the first call of anything).
 *
 * It records
 *   - every cuModuleLoadData: the image's size and FNV-1a-64 hash (offset basis
 *     0xcbf29ce484222325, prime 0x100000001b3) over the ELF extent of a cubin (headers, sections
 *     and program headers; can stop short of the file's end, like tests/fake_cuda), over
 *     strlen() of PTX text, or over header + payload of a fatbin;
 *   - every cuLaunchKernel / cuLaunchKernelEx: the module the CUfunction came from (mapped in
 *     cuModuleGetFunction) and so the hash of the image that launched.
 *
 * A test program reaches these functions with dlsym on the handle of dlopen("libcuda.so.1").
 * Ordering matters: dlopen("libcuda.so.1") must find the shim BEFORE anything opens the real
 * driver (a loaded real driver also answers to its soname libcuda.so.1); open the real driver by
 * its absolute path afterwards, and with RTLD_LOCAL, so that the real driver never binds to the
 * shim's symbols. recorder_real_handle() then equals the program's own dlopen of that path.
 */
#ifndef RULES_TRITON_RECORDING_LIBCUDA_H_
#define RULES_TRITON_RECORDING_LIBCUDA_H_

#ifdef __cplusplus
extern "C" {
#endif

#define RECORDER_NAME_LEN 64

typedef struct recorder_load {
  int seq;                     /* global event number (loads and launches share it) */
  int result;                  /* the real driver's CUresult */
  void *module;                /* CUmodule (NULL when the load failed) */
  void *ctx;                   /* current CUcontext at the time of the load */
  int kind;                    /* 1 ELF cubin, 2 PTX text, 3 fatbin, 0 unknown */
  unsigned long long size;     /* bytes hashed */
  unsigned long long fnv1a64;  /* FNV-1a-64 of those bytes */
  int unloaded;                /* cuModuleUnload succeeded on it */
} recorder_load;

typedef struct recorder_launch {
  int seq;
  int result;                  /* the real driver's CUresult */
  int ex;                      /* 1 cuLaunchKernelEx, 0 cuLaunchKernel */
  void *function;              /* CUfunction */
  void *module;                /* its CUmodule; NULL if cuModuleGetFunction never returned it */
  int load_index;              /* index of the load of that module; -1 if unknown */
  char name[RECORDER_NAME_LEN];  /* the name passed to cuModuleGetFunction (truncated) */
  unsigned long long size;     /* of the image of that load */
  unsigned long long fnv1a64;
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int shared;
} recorder_launch;

/* 0 once the real driver is open and has every required entry point; otherwise a CUresult
 * (CUDA_ERROR_NO_DEVICE: cannot open it; CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND: it lacks a
 * required entry point). Opens the real driver if nothing did yet. */
int recorder_real_status(void);
const char *recorder_real_error(void); /* "" when status is 0 */
const char *recorder_real_path(void);  /* $RULES_TRITON_REAL_LIBCUDA as read, or "" */
void *recorder_real_handle(void);      /* the shim's dlopen handle of the real driver, or NULL */

int recorder_num_loads(void);
int recorder_get_load(int i, recorder_load *out); /* 0 ok, -1 out of range */
int recorder_num_launches(void);
int recorder_get_launch(int i, recorder_launch *out);
/* Hash / size of the image of the last launch; 0 when there was none or its module is unknown. */
unsigned long long recorder_last_launch_hash(void);
unsigned long long recorder_last_launch_size(void);
/* Calls of an entry point through the shim (e.g. "cuLaunchKernel"), failed ones included. */
int recorder_call_count(const char *entry);

#ifdef __cplusplus
}
#endif

#endif /* RULES_TRITON_RECORDING_LIBCUDA_H_ */
