/* A fake libamdhip64.so (see fake_hip.h): the entry points trt_hip_runtime.c resolves, plus a
 * control API.  Tests only.  Build: cc -shared -fPIC -Wl,-soname,libamdhip64.so fake_hip.c
 * [-DFAKE_HIP_NO_MALLOC_ASYNC] [-DFAKE_HIP_NO_PROPS] -lpthread */
#include "fake_hip.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 8
#define PROPS_ARCH_OFFSET 1160 /* gcnArchName in hipDeviceProp_tR0600 */

enum { OK = 0, INVALID_VALUE = 1, NO_DEVICE = 100, INVALID_DEVICE = 101, INVALID_IMAGE = 200,
       NO_BINARY = 209, NOT_FOUND = 500 };

typedef struct fake_module {
  int device;
  char tag[64], arch[64], name[64];
  int num_params;
  size_t sizes[32];
  int unloaded;
} fake_module;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int num_devices = 1;
static char archs[MAX_DEVICES][256] = {"gfx942:sramecc+:xnack-"};
static int max_shared[MAX_DEVICES] = {65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536};
static __thread int current_device = 0;
static struct { char fn[64]; int code; } fails[16];
static unsigned int load_delay_us = 0;
static fake_hip_load loads[FAKE_HIP_MAX_RECORDS];
static int n_loads, n_unloads, n_props;
static fake_hip_launch launches[FAKE_HIP_MAX_RECORDS];
static int n_launches;
static fake_hip_alloc allocs[FAKE_HIP_MAX_RECORDS];
static int n_allocs;

static int failure(const char *fn) {
  int i, code = 0;
  pthread_mutex_lock(&lock);
  for (i = 0; i < 16; ++i)
    if (fails[i].code != 0 && strcmp(fails[i].fn, fn) == 0) code = fails[i].code;
  pthread_mutex_unlock(&lock);
  return code;
}

EXPORT void fake_hip_reset(int n, const char *const *names) {
  int i;
  pthread_mutex_lock(&lock);
  num_devices = n;
  for (i = 0; i < n && i < MAX_DEVICES; ++i) {
    snprintf(archs[i], sizeof archs[i], "%s", names[i]);
    max_shared[i] = 65536;
  }
  memset(fails, 0, sizeof fails);
  n_loads = n_unloads = n_launches = n_allocs = n_props = 0;
  load_delay_us = 0;
  pthread_mutex_unlock(&lock);
}
EXPORT void fake_hip_set_max_shared(int device, int bytes) { max_shared[device] = bytes; }
EXPORT void fake_hip_fail(const char *fn, int code) {
  int i, slot = -1;
  pthread_mutex_lock(&lock);
  for (i = 0; i < 16; ++i) {
    if (strcmp(fails[i].fn, fn) == 0) { slot = i; break; }
    if (slot < 0 && fails[i].fn[0] == '\0') slot = i;
  }
  if (slot >= 0) {
    snprintf(fails[slot].fn, sizeof fails[slot].fn, "%s", fn);
    fails[slot].code = code;
  }
  pthread_mutex_unlock(&lock);
}
EXPORT void fake_hip_set_load_delay_us(unsigned int us) { load_delay_us = us; }
EXPORT int fake_hip_num_loads(void) { return n_loads; }
EXPORT const fake_hip_load *fake_hip_get_load(int i) { return &loads[i]; }
EXPORT int fake_hip_num_unloads(void) { return n_unloads; }
EXPORT int fake_hip_num_launches(void) { return n_launches; }
EXPORT const fake_hip_launch *fake_hip_get_launch(int i) { return &launches[i]; }
EXPORT int fake_hip_num_allocs(void) { return n_allocs; }
EXPORT const fake_hip_alloc *fake_hip_get_alloc(int i) { return &allocs[i]; }
EXPORT int fake_hip_num_props_calls(void) { return n_props; }

EXPORT int hipSetDevice(int device) {
  if (device < 0 || device >= num_devices) return INVALID_DEVICE;
  current_device = device;
  return OK;
}

EXPORT int hipGetDevice(int *device) {
  int r = failure("hipGetDevice");
  if (r) return r;
  if (num_devices == 0) return NO_DEVICE;
  *device = current_device;
  return OK;
}

#ifndef FAKE_HIP_NO_PROPS
EXPORT int hipGetDevicePropertiesR0600(void *props, int device) {
  int r = failure("hipGetDevicePropertiesR0600");
  if (r) return r;
  if (device < 0 || device >= num_devices) return INVALID_DEVICE;
  memset(props, 0x5a, 1472); /* as a real runtime fills every field */
  memcpy((char *)props + PROPS_ARCH_OFFSET, archs[device], 256);
  __atomic_add_fetch(&n_props, 1, __ATOMIC_SEQ_CST);
  return OK;
}
#endif

EXPORT int hipDeviceGetAttribute(int *value, int attr, int device) {
  int r = failure("hipDeviceGetAttribute");
  if (r) return r;
  if (device < 0 || device >= num_devices) return INVALID_DEVICE;
  if (attr != 74) return INVALID_VALUE; /* hipDeviceAttributeMaxSharedMemoryPerBlock only */
  *value = max_shared[device];
  return OK;
}

static int field(const char *image, const char *key, char *out, size_t size) {
  const char *p = strstr(image, key);
  size_t n = 0;
  if (p == NULL) return 0;
  p += strlen(key);
  while (p[n] != ' ' && p[n] != '\n' && p[n] != '\0' && n + 1 < size) {
    out[n] = p[n];
    ++n;
  }
  out[n] = '\0';
  return 1;
}

EXPORT int hipModuleLoadData(void **module, const void *image) {
  const char *text = (const char *)image;
  char params[256], *tok, *save = NULL;
  fake_module *m;
  int r = failure("hipModuleLoadData");
  size_t dev_arch_len;
  if (load_delay_us) {
    struct timespec ts = {0, (long)load_delay_us * 1000L};
    nanosleep(&ts, NULL);
  }
  if (r) return r;
  if (strncmp(text, "TRTFAKEHIP ", 11) != 0) return INVALID_IMAGE;
  m = (fake_module *)calloc(1, sizeof *m);
  if (m == NULL) return 2;
  m->device = current_device;
  if (!field(text, "tag=", m->tag, sizeof m->tag) || !field(text, "arch=", m->arch, sizeof m->arch) ||
      !field(text, "name=", m->name, sizeof m->name) || !field(text, "params=", params, sizeof params)) {
    free(m);
    return INVALID_IMAGE;
  }
  dev_arch_len = strcspn(archs[current_device], ":");
  if (strlen(m->arch) != dev_arch_len || strncmp(m->arch, archs[current_device], dev_arch_len) != 0) {
    free(m);
    return NO_BINARY; /* an hsaco runs only on its own gfx arch */
  }
  for (tok = strtok_r(params, ",", &save); tok != NULL && m->num_params < 32;
       tok = strtok_r(NULL, ",", &save))
    m->sizes[m->num_params++] = (size_t)atoi(tok);
  pthread_mutex_lock(&lock);
  if (n_loads < FAKE_HIP_MAX_RECORDS) {
    loads[n_loads].device = current_device;
    snprintf(loads[n_loads].tag, sizeof loads[n_loads].tag, "%s", m->tag);
    ++n_loads;
  }
  pthread_mutex_unlock(&lock);
  *module = m;
  return OK;
}

EXPORT int hipModuleUnload(void *module) {
  fake_module *m = (fake_module *)module;
  int r = failure("hipModuleUnload");
  if (r) return r;
  if (m == NULL || m->unloaded) return INVALID_VALUE;
  m->unloaded = 1; /* kept: launches through a stale function would show up as use-after-unload */
  __atomic_add_fetch(&n_unloads, 1, __ATOMIC_SEQ_CST);
  return OK;
}

EXPORT int hipModuleGetFunction(void **fn, void *module, const char *name) {
  fake_module *m = (fake_module *)module;
  int r = failure("hipModuleGetFunction");
  if (r) return r;
  if (strcmp(m->name, name) != 0) return NOT_FOUND;
  *fn = m; /* the function is its module */
  return OK;
}

EXPORT int hipModuleLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shared, void *stream, void **params, void **extra) {
  fake_module *m = (fake_module *)fn;
  fake_hip_launch *l;
  size_t off = 0;
  int i, r = failure("hipModuleLaunchKernel");
  if (r) return r;
  if (m == NULL || m->unloaded || extra != NULL || m->device != current_device) return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  if (n_launches >= FAKE_HIP_MAX_RECORDS) {
    pthread_mutex_unlock(&lock);
    return OK;
  }
  l = &launches[n_launches++];
  memset(l, 0, sizeof *l);
  l->device = current_device;
  snprintf(l->tag, sizeof l->tag, "%s", m->tag);
  snprintf(l->name, sizeof l->name, "%s", m->name);
  l->grid[0] = gx; l->grid[1] = gy; l->grid[2] = gz;
  l->block[0] = bx; l->block[1] = by; l->block[2] = bz;
  l->shared = shared;
  l->stream = stream;
  l->num_params = m->num_params;
  for (i = 0; i < m->num_params && off + m->sizes[i] <= FAKE_HIP_MAX_PARAM_BYTES; ++i) {
    memcpy(l->params + off, params[i], m->sizes[i]);
    off += m->sizes[i];
  }
  l->param_bytes = off;
  if (m->num_params >= 2) {
    memcpy(&l->scratch[0], params[m->num_params - 2], sizeof(void *));
    memcpy(&l->scratch[1], params[m->num_params - 1], sizeof(void *));
  }
  pthread_mutex_unlock(&lock);
  return OK;
}

#ifndef FAKE_HIP_NO_MALLOC_ASYNC
EXPORT int hipMallocAsync(void **ptr, size_t bytes, void *stream) {
  int r = failure("hipMallocAsync");
  if (r) return r;
  *ptr = aligned_alloc(256, (bytes + 255) / 256 * 256);
  pthread_mutex_lock(&lock);
  if (n_allocs < FAKE_HIP_MAX_RECORDS) {
    allocs[n_allocs].ptr = *ptr;
    allocs[n_allocs].bytes = bytes;
    allocs[n_allocs].stream = stream;
    allocs[n_allocs].freed = 0;
    ++n_allocs;
  }
  pthread_mutex_unlock(&lock);
  return OK;
}

EXPORT int hipFreeAsync(void *ptr, void *stream) {
  int i;
  pthread_mutex_lock(&lock);
  for (i = 0; i < n_allocs; ++i)
    if (allocs[i].ptr == ptr && !allocs[i].freed && allocs[i].stream == stream) {
      allocs[i].freed = 1;
      pthread_mutex_unlock(&lock);
      free(ptr);
      return OK;
    }
  pthread_mutex_unlock(&lock);
  return INVALID_VALUE;
}
#endif
