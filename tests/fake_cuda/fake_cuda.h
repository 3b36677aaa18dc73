/* Control and inspection API of the fake CUDA driver (tests/fake_cuda/fake_cuda.c).
 *
 * The fake is built as a shared library named libcuda.so.1.  Generated rules_triton code finds it
 * through dlopen("libcuda.so.1") like the real driver (put its directory on LD_LIBRARY_PATH); a test
 * program links it directly to call the fake_cuda_* functions below.  It implements exactly the
 * driver entry points that generated code resolves, plus cuCtxSetCurrent/cuInit for test programs.
 * cuStreamGetId gives the legacy stream id 1, CU_STREAM_PER_THREAD a per-thread id, other handles
 * their own value; cuStreamIsCapturing is ACTIVE for streams marked by fake_cuda_set_capturing.
 *
 * Images.  cuModuleLoadData accepts
 *   - fake images: NUL-terminated text "TRTFAKE1 key=value ..." with keys
 *       tag=<text>       recorded with loads and launches (tests use the variant symbol),
 *       kind=cubin|ptx   compatibility rule applied against the device (default cubin),
 *       sm=<NN>          target SM the image was "compiled" for (required),
 *       name=<kernel>    the only name cuModuleGetFunction resolves (required),
 *       params=8,4,...   byte size of each kernel parameter, scratch pointers included;
 *                        launches copy that many bytes of each parameter into the record;
 *   - ELF images (real cubins): accepted on any device; tag "elf"; any name resolves if it occurs
 *     in the image; the FNV-1a hash and size of the ELF file are recorded; launches record
 *     parameters for the kernels fake_cuda_set_elf_params names;
 *   - PTX text (starts with '/', '.' or a newline): tag "ptx", SM from its ".target sm_NN" line,
 *     loads where the driver could JIT it; names resolve if they occur in the text; hash and
 *     length of the text are recorded.
 * Anything else fails with CUDA_ERROR_INVALID_IMAGE.  A fake cubin for sm=X loads only where the
 * real driver would load it (X == device SM, or X < 90 with the same major and X <= device SM);
 * fake PTX loads when X == device SM or X < 90 and X <= device SM; otherwise
 * CUDA_ERROR_NO_BINARY_FOR_GPU.
 *
 * Checks the fake makes, like the real driver: a launched function's module must be loaded and
 * belong to the calling thread's current context (else CUDA_ERROR_INVALID_HANDLE /
 * CUDA_ERROR_INVALID_CONTEXT); dynamic shared memory above 48 KiB needs a prior
 * cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) at least that large (else
 * CUDA_ERROR_INVALID_VALUE); cuMemFreeAsync must free a live cuMemAllocAsync pointer.
 *
 * Every recorded event carries a global sequence number `seq` so tests can check ordering.
 */
#ifndef RULES_TRITON_FAKE_CUDA_H_
#define RULES_TRITON_FAKE_CUDA_H_

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_CUDA_MAX_PARAMS 32
#define FAKE_CUDA_TAG_LEN 96

/* ---- setup ---------------------------------------------------------------------------------- */

/* Forgets all devices, contexts, modules, records, failures and delays; one device (sm_90, opt-in
 * shared memory 232448 bytes) remains.  Does not reset the current context of other threads. */
void fake_cuda_reset(void);
/* Defines device `ordinal` (0..7), growing the device count as needed. */
void fake_cuda_set_device(int ordinal, int cc_major, int cc_minor, int shared_optin_bytes);
/* Kernel `name` in ELF images (real cubins) takes `num_params` parameters of these byte sizes
 * (scratch pointers included): its launches record them like a fake image's params= list. Set
 * before the module loads; fake_cuda_reset forgets it. */
void fake_cuda_set_elf_params(const char *name, int num_params, const unsigned int *sizes);
/* Multiprocessor count of device `ordinal` (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT; default 132,
 * set by fake_cuda_set_device when 0). */
void fake_cuda_set_num_sms(int ordinal, int num_sms);
/* 1 when this fake has cuCtxGetId and cuStreamGetId (scratch buffers are then reused per
 * stream), 0 when built with FAKE_CUDA_NO_CTX_GET_ID. */
int fake_cuda_has_stream_ids(void);
/* Marks `stream` as capturing a CUDA graph (cuStreamIsCapturing says ACTIVE) or not. */
void fake_cuda_set_capturing(CUstream stream, int on);
/* Creates a context on `device` (not made current). */
CUcontext fake_cuda_create_context(int device);
/* Makes `ctx` (may be NULL) current for the calling thread; same as cuCtxSetCurrent. */
void fake_cuda_set_current(CUcontext ctx);
/* The next `times` calls of driver entry point `entry` (e.g. "cuModuleLoadData") fail with
 * `error` and do nothing else. */
void fake_cuda_fail(const char *entry, CUresult error, int times);
/* Same, after letting the next `skip` calls of `entry` succeed. */
void fake_cuda_fail_after(const char *entry, int skip, CUresult error, int times);
/* cuLaunchKernel(Ex) sleeps this long before doing anything (widens race windows). */
void fake_cuda_set_launch_delay_us(int microseconds);
/* cuModuleLoadData sleeps this long before doing anything (widens race windows). */
void fake_cuda_set_load_delay_us(int microseconds);

/* ---- inspection ----------------------------------------------------------------------------- */

/* Calls of a driver entry point since the last reset, failed ones included. */
int fake_cuda_call_count(const char *entry);
/* Successful reads of CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT of device `ordinal` since reset. */
int fake_cuda_sm_count_reads(int ordinal);

typedef struct fake_cuda_load {
  int seq;
  int module_id;
  CUcontext ctx;
  char tag[FAKE_CUDA_TAG_LEN]; /* "elf" for real cubins */
  int is_ptx;
  int sm;                      /* from the fake image or PTX; 0 for ELF */
  unsigned long long elf_size; /* ELF and PTX images: bytes hashed */
  unsigned long long elf_fnv1a64;
  int unloaded; /* cuModuleUnload was called on it */
} fake_cuda_load;
/* Successful cuModuleLoadData calls, in order. */
int fake_cuda_num_loads(void);
int fake_cuda_get_load(int i, fake_cuda_load *out);
/* Loads still alive whose tag equals `tag` (NULL: any) in `ctx` (NULL: any context). */
int fake_cuda_live_modules(const char *tag, CUcontext ctx);

typedef struct fake_cuda_launch {
  int seq;
  int ex; /* 1: cuLaunchKernelEx, 0: cuLaunchKernel */
  int module_id;
  CUcontext ctx;
  char tag[FAKE_CUDA_TAG_LEN];
  char name[FAKE_CUDA_TAG_LEN];
  int is_ptx;
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int shared;
  CUstream stream;
  /* cuLaunchKernelEx attributes */
  int num_attrs;
  unsigned int cluster[3]; /* 0 when no cluster attribute */
  int cluster_policy;      /* -1 when absent */
  int cooperative;         /* -1 when absent */
  int pdl;                 /* -1 when absent */
  /* kernel parameters, from the image's params= list (none for ELF images) */
  int num_params;
  unsigned int param_size[FAKE_CUDA_MAX_PARAMS];
  unsigned char param_bytes[FAKE_CUDA_MAX_PARAMS][8];
} fake_cuda_launch;
int fake_cuda_num_launches(void);
int fake_cuda_get_launch(int i, fake_cuda_launch *out);

typedef struct fake_cuda_mem_event {
  int seq;
  int is_free;
  CUdeviceptr ptr;
  size_t bytes; /* allocations only */
  CUstream stream;
} fake_cuda_mem_event;
/* cuMemAllocAsync / cuMemFreeAsync calls that succeeded, in order. */
int fake_cuda_num_mem_events(void);
int fake_cuda_get_mem_event(int i, fake_cuda_mem_event *out);
/* Allocations not yet freed. */
int fake_cuda_live_allocations(void);

typedef struct fake_cuda_attr_event {
  int seq;
  char tag[FAKE_CUDA_TAG_LEN];
  CUfunction_attribute attrib;
  int value;
} fake_cuda_attr_event;
/* Successful cuFuncSetAttribute calls, in order. */
int fake_cuda_num_attr_events(void);
int fake_cuda_get_attr_event(int i, fake_cuda_attr_event *out);

/* cuTensorMapEncodeTiled calls that succeeded, in order, with their arguments (dimension 0 is the
 * innermost, as the driver takes them). The fake checks what the real driver documents (rank 1-5,
 * 16-byte aligned address, dimensions 1..2^32, rank-1 byte strides multiples of 16 below 2^40, box
 * dimensions 1..256 with box[0] * element size a multiple of 16 bytes, element strides 1..8, enum
 * ranges) and fails with CUDA_ERROR_INVALID_VALUE otherwise. The encoded map is not a real one: its
 * first 8 bytes are FAKE_CUDA_TMA_MAGIC | seq and the next 8 the global address, so a launch's
 * recorded parameter bytes say which encode it got (param_size 128). */
#define FAKE_CUDA_TMA_MAGIC 0x7a4d000000000000ull
typedef struct fake_cuda_tma_encode {
  int seq;
  int data_type;
  unsigned int rank;
  unsigned long long address;
  unsigned long long dims[5];
  unsigned long long strides[5]; /* rank - 1 entries are read, like the driver */
  unsigned int box[5];
  unsigned int elem_strides[5];
  int interleave, swizzle, l2_promotion, oob_fill;
} fake_cuda_tma_encode;
int fake_cuda_num_tma_encodes(void);
int fake_cuda_get_tma_encode(int i, fake_cuda_tma_encode *out);

/* cuMemsetD8/D16/D32Async and cuMemsetD2D8/D2D16/D2D32Async calls that succeeded, in order.
 * `bits` is the element size of the call (8, 16, 32), `width` counts such elements, `pitch` is
 * in bytes (2-D only; 0 for 1-D calls, whose `height` is 1). The fake checks what the real driver
 * requires: a current context, an address aligned to the element size, for 2-D a pitch that is a
 * multiple of it and at least width elements when height > 1; else CUDA_ERROR_INVALID_VALUE. */
typedef struct fake_cuda_memset {
  int seq;
  int bits;
  int two_d;
  CUdeviceptr ptr;
  size_t pitch;
  unsigned int value;
  size_t width;
  size_t height;
  CUstream stream;
} fake_cuda_memset;
int fake_cuda_num_memsets(void);
int fake_cuda_get_memset(int i, fake_cuda_memset *out);

/* Real driver entry points a test program may also use. */
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuInit(unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif /* RULES_TRITON_FAKE_CUDA_H_ */
