/* Control and inspection API of the fake HIP runtime (fake_hip.c -> libamdhip64.so), for
 * CPU-only tests of the generated HIP libraries and runtime/trt_hip_runtime.c.
 *
 * Images are text, not ELF: "TRTFAKEHIP tag=T arch=gfx942 name=K params=8,8,4,8,8\n".  A load
 * records the tag on the current device and fails with hipErrorNoBinaryForGpu when the image's
 * arch is not the device's; a launch records the geometry and copies the kernel arguments by the
 * image's parameter sizes. */
#ifndef FAKE_HIP_H_
#define FAKE_HIP_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_HIP_MAX_RECORDS 4096
#define FAKE_HIP_MAX_PARAM_BYTES 256

typedef struct fake_hip_load {
  int device;
  char tag[64];
} fake_hip_load;

typedef struct fake_hip_launch {
  int device;
  char tag[64];
  char name[64];
  unsigned int grid[3], block[3], shared;
  void *stream;
  int num_params;
  size_t param_bytes;
  unsigned char params[FAKE_HIP_MAX_PARAM_BYTES]; /* each argument at its size, packed */
  void *scratch[2]; /* the last two (pointer) arguments */
} fake_hip_launch;

typedef struct fake_hip_alloc {
  void *ptr;
  size_t bytes;
  void *stream;
  int freed;
} fake_hip_alloc;

/* Devices and their arch names ("gfx942:sramecc+:xnack-"); resets every record. */
void fake_hip_reset(int num_devices, const char *const *archs);
void fake_hip_set_max_shared(int device, int bytes);
/* Every later call of `fn` ("hipModuleLoadData", ...) returns `code` (0 clears). */
void fake_hip_fail(const char *fn, int code);
void fake_hip_set_load_delay_us(unsigned int us);
int fake_hip_num_loads(void);
const fake_hip_load *fake_hip_get_load(int i);
int fake_hip_num_unloads(void);
int fake_hip_num_launches(void);
const fake_hip_launch *fake_hip_get_launch(int i);
int fake_hip_num_allocs(void);
const fake_hip_alloc *fake_hip_get_alloc(int i);
int fake_hip_num_props_calls(void);
/* Not resolved by the runtime: the test program selects the device with it. */
int hipSetDevice(int device);

#ifdef __cplusplus
}
#endif

#endif /* FAKE_HIP_H_ */
