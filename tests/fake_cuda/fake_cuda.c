/* A fake CUDA driver (libcuda.so.1) for CPU-only tests of rules_triton's generated C.
 * See fake_cuda.h for the image format, the checks it makes and the control API.
 *
 * Build: cc -shared -fPIC -O1 -I<cuda.h dir> -Wl,-soname,libcuda.so.1 -o libcuda.so.1 fake_cuda.c -lpthread
 * Define FAKE_CUDA_NO_CTX_GET_ID to build a driver without cuCtxGetId and cuStreamGetId (pre-12.0
 * drivers), which makes generated code key its caches by CUcontext pointer (and allocate scratch
 * at every launch).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include "fake_cuda.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 8
#define MAX_CONTEXTS 256
#define MAX_MODULES 4096
#define MAX_LAUNCHES 8192
#define MAX_MEM_EVENTS 8192
#define MAX_ALLOCS 1024
#define MAX_ATTR_EVENTS 1024
#define MAX_FAILURES 16
#define MAX_ENTRIES 32
#define MAX_CAPTURING 16
#define MAX_TMA_ENCODES 1024
#define MAX_MEMSETS 1024
#define MAX_ELF_PARAMS 16

struct CUctx_st {
  int device;
  unsigned long long id;
};

struct CUfunc_st {
  struct CUmod_st *module;
  char name[FAKE_CUDA_TAG_LEN];
  int max_dynamic_shared;
};

struct CUmod_st {
  int id; /* index into g.loads */
  int alive;
  CUcontext ctx;
  int is_elf;
  const unsigned char *image;
  unsigned long long elf_size;
  char name[FAKE_CUDA_TAG_LEN]; /* fake images: the only resolvable kernel name */
  int num_params;
  unsigned int param_size[FAKE_CUDA_MAX_PARAMS];
  struct CUfunc_st func;
};

typedef struct {
  int cc_major, cc_minor, optin, num_sms;
} device_t;

typedef struct {
  char entry[64];
  CUresult error;
  int skip;
  int times;
} failure_t;

typedef struct {
  const char *entry;
  int count;
} counter_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  int seq;
  int num_devices;
  device_t devices[MAX_DEVICES];
  struct CUctx_st contexts[MAX_CONTEXTS];
  int num_contexts;
  struct CUmod_st modules[MAX_MODULES];
  fake_cuda_load loads[MAX_MODULES];
  int num_modules;
  fake_cuda_launch launches[MAX_LAUNCHES];
  int num_launches;
  fake_cuda_mem_event mem[MAX_MEM_EVENTS];
  int num_mem;
  CUdeviceptr allocs[MAX_ALLOCS];
  int num_allocs;
  unsigned long long next_ptr;
  fake_cuda_attr_event attrs[MAX_ATTR_EVENTS];
  int num_attrs;
  failure_t failures[MAX_FAILURES];
  int num_failures;
  counter_t counters[MAX_ENTRIES];
  int num_counters;
  int load_delay_us;
  int launch_delay_us;
  unsigned long long next_ctx_id;
  int sm_count_reads[MAX_DEVICES]; /* cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) per device */
  CUstream capturing[MAX_CAPTURING];
  int num_capturing;
  fake_cuda_tma_encode tma[MAX_TMA_ENCODES];
  int num_tma;
  fake_cuda_memset memsets[MAX_MEMSETS];
  int num_memsets;
  /* fake_cuda_set_elf_params: parameter sizes of kernels in ELF images, by name */
  struct {
    char name[FAKE_CUDA_TAG_LEN];
    int num_params;
    unsigned int param_size[FAKE_CUDA_MAX_PARAMS];
  } elf_params[MAX_ELF_PARAMS];
  int num_elf_params;
} g;

static __thread CUcontext tls_current;

static void reset_locked(void) {
  memset(&g, 0, sizeof g);
  g.num_devices = 1;
  g.devices[0].cc_major = 9;
  g.devices[0].cc_minor = 0;
  g.devices[0].optin = 232448;
  g.devices[0].num_sms = 132;
  g.next_ptr = 0x7f0000000000ull;
  g.next_ctx_id = 1000;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init(void) { reset_locked(); }

/* Counts the call and applies an injected failure. Caller holds the lock. */
static CUresult enter(const char *entry) {
  int i;
  for (i = 0; i < g.num_counters; ++i)
    if (strcmp(g.counters[i].entry, entry) == 0) break;
  if (i == g.num_counters && i < MAX_ENTRIES) g.counters[g.num_counters++].entry = entry;
  if (i < MAX_ENTRIES) g.counters[i].count++;
  for (i = 0; i < g.num_failures; ++i) {
    failure_t *f = &g.failures[i];
    if (f->times > 0 && strcmp(f->entry, entry) == 0) {
      if (f->skip > 0) {
        f->skip--;
        continue;
      }
      f->times--;
      return f->error;
    }
  }
  return CUDA_SUCCESS;
}

#define ENTER(name)                        \
  CUresult r_;                             \
  pthread_once(&init_once, init);          \
  pthread_mutex_lock(&g_lock);             \
  r_ = enter(name);                        \
  if (r_ != CUDA_SUCCESS) {                \
    pthread_mutex_unlock(&g_lock);         \
    return r_;                             \
  }
#define RETURN(value)              \
  do {                             \
    CUresult v_ = (value);         \
    pthread_mutex_unlock(&g_lock); \
    return v_;                     \
  } while (0)

/* ---- control API ----------------------------------------------------------------------------- */

EXPORT void fake_cuda_reset(void) {
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  reset_locked();
  pthread_mutex_unlock(&g_lock);
  tls_current = NULL;
}

EXPORT void fake_cuda_set_device(int ordinal, int cc_major, int cc_minor, int optin) {
  pthread_once(&init_once, init);
  if (ordinal < 0 || ordinal >= MAX_DEVICES) return;
  pthread_mutex_lock(&g_lock);
  g.devices[ordinal].cc_major = cc_major;
  g.devices[ordinal].cc_minor = cc_minor;
  g.devices[ordinal].optin = optin;
  if (g.devices[ordinal].num_sms == 0) g.devices[ordinal].num_sms = 132;
  if (ordinal >= g.num_devices) g.num_devices = ordinal + 1;
  pthread_mutex_unlock(&g_lock);
}

EXPORT void fake_cuda_set_elf_params(const char *name, int num_params, const unsigned int *sizes) {
  pthread_once(&init_once, init);
  if (num_params < 0 || num_params > FAKE_CUDA_MAX_PARAMS) return;
  pthread_mutex_lock(&g_lock);
  if (g.num_elf_params < MAX_ELF_PARAMS) {
    int i = g.num_elf_params++;
    strncpy(g.elf_params[i].name, name, FAKE_CUDA_TAG_LEN - 1);
    g.elf_params[i].num_params = num_params;
    memcpy(g.elf_params[i].param_size, sizes, (size_t)num_params * sizeof *sizes);
  }
  pthread_mutex_unlock(&g_lock);
}

EXPORT void fake_cuda_set_num_sms(int ordinal, int num_sms) {
  pthread_once(&init_once, init);
  if (ordinal < 0 || ordinal >= MAX_DEVICES) return;
  pthread_mutex_lock(&g_lock);
  g.devices[ordinal].num_sms = num_sms;
  pthread_mutex_unlock(&g_lock);
}

EXPORT int fake_cuda_sm_count_reads(int ordinal) {
  int n;
  pthread_once(&init_once, init);
  if (ordinal < 0 || ordinal >= MAX_DEVICES) return -1;
  pthread_mutex_lock(&g_lock);
  n = g.sm_count_reads[ordinal];
  pthread_mutex_unlock(&g_lock);
  return n;
}

EXPORT CUcontext fake_cuda_create_context(int device) {
  CUcontext ctx = NULL;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  if (device >= 0 && device < g.num_devices && g.num_contexts < MAX_CONTEXTS) {
    ctx = &g.contexts[g.num_contexts++];
    ctx->device = device;
    ctx->id = g.next_ctx_id++;
  }
  pthread_mutex_unlock(&g_lock);
  return ctx;
}

EXPORT void fake_cuda_set_current(CUcontext ctx) { tls_current = ctx; }

EXPORT void fake_cuda_fail_after(const char *entry, int skip, CUresult error, int times) {
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  if (g.num_failures < MAX_FAILURES) {
    failure_t *f = &g.failures[g.num_failures++];
    strncpy(f->entry, entry, sizeof f->entry - 1);
    f->error = error;
    f->skip = skip;
    f->times = times;
  }
  pthread_mutex_unlock(&g_lock);
}

EXPORT void fake_cuda_fail(const char *entry, CUresult error, int times) {
  fake_cuda_fail_after(entry, 0, error, times);
}

/* Sleeps outside the lock, so that other threads run in the window before a launch is recorded. */
static void launch_delay(void) {
  int delay;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  delay = g.launch_delay_us;
  pthread_mutex_unlock(&g_lock);
  if (delay > 0) {
    struct timespec ts;
    ts.tv_sec = delay / 1000000;
    ts.tv_nsec = (long)(delay % 1000000) * 1000;
    nanosleep(&ts, NULL);
  }
}

EXPORT void fake_cuda_set_launch_delay_us(int us) {
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  g.launch_delay_us = us;
  pthread_mutex_unlock(&g_lock);
}

EXPORT void fake_cuda_set_load_delay_us(int us) {
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  g.load_delay_us = us;
  pthread_mutex_unlock(&g_lock);
}

EXPORT int fake_cuda_call_count(const char *entry) {
  int i, n = 0;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  for (i = 0; i < g.num_counters; ++i)
    if (strcmp(g.counters[i].entry, entry) == 0) n = g.counters[i].count;
  pthread_mutex_unlock(&g_lock);
  return n;
}

#define GETTER(fn_count, fn_get, type, array, count)    \
  EXPORT int fn_count(void) {                           \
    int n;                                              \
    pthread_once(&init_once, init);                     \
    pthread_mutex_lock(&g_lock);                        \
    n = g.count;                                        \
    pthread_mutex_unlock(&g_lock);                      \
    return n;                                           \
  }                                                     \
  EXPORT int fn_get(int i, type *out) {                 \
    int ok = 0;                                         \
    pthread_once(&init_once, init);                     \
    pthread_mutex_lock(&g_lock);                        \
    if (i >= 0 && i < g.count) {                        \
      *out = g.array[i];                                \
      ok = 1;                                           \
    }                                                   \
    pthread_mutex_unlock(&g_lock);                      \
    return ok;                                          \
  }

GETTER(fake_cuda_num_loads, fake_cuda_get_load, fake_cuda_load, loads, num_modules)
GETTER(fake_cuda_num_launches, fake_cuda_get_launch, fake_cuda_launch, launches, num_launches)
GETTER(fake_cuda_num_mem_events, fake_cuda_get_mem_event, fake_cuda_mem_event, mem, num_mem)
GETTER(fake_cuda_num_attr_events, fake_cuda_get_attr_event, fake_cuda_attr_event, attrs, num_attrs)
GETTER(fake_cuda_num_tma_encodes, fake_cuda_get_tma_encode, fake_cuda_tma_encode, tma, num_tma)

EXPORT int fake_cuda_live_modules(const char *tag, CUcontext ctx) {
  int i, n = 0;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  for (i = 0; i < g.num_modules; ++i)
    if (g.modules[i].alive && (ctx == NULL || g.modules[i].ctx == ctx) &&
        (tag == NULL || strcmp(g.loads[i].tag, tag) == 0))
      ++n;
  pthread_mutex_unlock(&g_lock);
  return n;
}

EXPORT int fake_cuda_live_allocations(void) {
  int n;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  n = g.num_allocs;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static int device_sm(int device) {
  return g.devices[device].cc_major * 10 + g.devices[device].cc_minor;
}

/* Copies the value of `key=` from a "TRTFAKE1 k=v k=v" header line into out. */
static int fake_field(const char *text, const char *key, char *out, size_t cap) {
  size_t klen = strlen(key);
  const char *p = text;
  while ((p = strstr(p, key)) != NULL) {
    if ((p == text || p[-1] == ' ') && p[klen] == '=') {
      size_t n = 0;
      p += klen + 1;
      while (p[n] && p[n] != ' ' && p[n] != '\n' && n + 1 < cap) {
        out[n] = p[n];
        ++n;
      }
      out[n] = 0;
      return 1;
    }
    p += klen;
  }
  return 0;
}

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

static unsigned long long elf_size(const unsigned char *e) {
  uint64_t phoff = rd(e + 0x20, 8), shoff = rd(e + 0x28, 8);
  uint64_t phentsize = rd(e + 0x36, 2), phnum = rd(e + 0x38, 2);
  uint64_t shentsize = rd(e + 0x3A, 2), shnum = rd(e + 0x3C, 2);
  uint64_t size = shoff + shentsize * shnum, i;
  if (phoff + phentsize * phnum > size) size = phoff + phentsize * phnum;
  for (i = 0; i < shnum; ++i) {
    const unsigned char *sh = e + shoff + i * shentsize;
    if (rd(sh + 4, 4) != 8 /* SHT_NOBITS */ && rd(sh + 0x18, 8) + rd(sh + 0x20, 8) > size)
      size = rd(sh + 0x18, 8) + rd(sh + 0x20, 8);
  }
  return size;
}

static int compatible(int is_ptx, int arch, int sm) {
  if (arch == sm) return 1;
  if (arch >= 90 || arch > sm) return 0;
  return is_ptx || arch / 10 == sm / 10;
}

/* ---- driver entry points ---------------------------------------------------------------------- */

EXPORT CUresult cuInit(unsigned int flags) {
  ENTER("cuInit");
  RETURN(flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx) {
  ENTER("cuCtxGetCurrent");
  *pctx = tls_current;
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  ENTER("cuCtxSetCurrent");
  tls_current = ctx;
  RETURN(CUDA_SUCCESS);
}

EXPORT int fake_cuda_has_stream_ids(void) {
#ifdef FAKE_CUDA_NO_CTX_GET_ID
  return 0;
#else
  return 1;
#endif
}

EXPORT void fake_cuda_set_capturing(CUstream stream, int on) {
  int i;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  for (i = 0; i < g.num_capturing; ++i)
    if (g.capturing[i] == stream) break;
  if (on && i == g.num_capturing && i < MAX_CAPTURING) g.capturing[g.num_capturing++] = stream;
  if (!on && i < g.num_capturing) g.capturing[i] = g.capturing[--g.num_capturing];
  pthread_mutex_unlock(&g_lock);
}

EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status) {
  int i;
  ENTER("cuStreamIsCapturing");
  if (tls_current == NULL) RETURN(CUDA_ERROR_INVALID_CONTEXT);
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  for (i = 0; i < g.num_capturing; ++i)
    if (g.capturing[i] == stream) *status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  RETURN(CUDA_SUCCESS);
}

#ifndef FAKE_CUDA_NO_CTX_GET_ID
/* Stream ids: the legacy stream (NULL, CU_STREAM_LEGACY) is 1, a per-thread default stream a
 * per-thread number, any other handle its own value. */
static __thread unsigned long long tls_stream_id;
static unsigned long long g_next_thread_stream = 1ull << 40;
EXPORT CUresult cuStreamGetId(CUstream stream, unsigned long long *id) {
  ENTER("cuStreamGetId");
  if (tls_current == NULL) RETURN(CUDA_ERROR_INVALID_CONTEXT);
  if (stream == NULL || stream == CU_STREAM_LEGACY) {
    *id = 1;
  } else if (stream == CU_STREAM_PER_THREAD) {
    if (tls_stream_id == 0) tls_stream_id = g_next_thread_stream++;
    *id = tls_stream_id;
  } else {
    *id = (unsigned long long)(uintptr_t)stream;
  }
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id) {
  ENTER("cuCtxGetId");
  if (ctx == NULL) ctx = tls_current;
  if (ctx == NULL) RETURN(CUDA_ERROR_INVALID_CONTEXT);
  *id = ctx->id;
  RETURN(CUDA_SUCCESS);
}
#endif

EXPORT CUresult cuCtxGetDevice(CUdevice *device) {
  ENTER("cuCtxGetDevice");
  if (tls_current == NULL) RETURN(CUDA_ERROR_INVALID_CONTEXT);
  *device = tls_current->device;
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  ENTER("cuDeviceGetAttribute");
  if (dev < 0 || dev >= g.num_devices) RETURN(CUDA_ERROR_INVALID_DEVICE);
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = g.devices[dev].cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = g.devices[dev].cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = g.devices[dev].optin; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *pi = g.devices[dev].num_sms;
      g.sm_count_reads[dev]++;
      break;
    default: RETURN(CUDA_ERROR_INVALID_VALUE); /* generated code should ask for nothing else */
  }
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  const unsigned char *img = (const unsigned char *)image;
  struct CUmod_st *m;
  fake_cuda_load *rec;
  int delay;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  delay = g.load_delay_us;
  pthread_mutex_unlock(&g_lock);
  if (delay > 0) { /* outside the lock: concurrent loads really overlap */
    struct timespec ts;
    ts.tv_sec = delay / 1000000;
    ts.tv_nsec = (long)(delay % 1000000) * 1000;
    nanosleep(&ts, NULL);
  }
  {
    ENTER("cuModuleLoadData");
    if (tls_current == NULL) RETURN(CUDA_ERROR_INVALID_CONTEXT);
    if (module == NULL || img == NULL) RETURN(CUDA_ERROR_INVALID_VALUE);
    if (g.num_modules >= MAX_MODULES) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    m = &g.modules[g.num_modules];
    rec = &g.loads[g.num_modules];
    memset(m, 0, sizeof *m);
    memset(rec, 0, sizeof *rec);
    if (memcmp(img, "\177ELF", 4) == 0) {
      uint64_t h = 0xcbf29ce484222325ull, i; /* FNV-1a 64 offset basis */
      m->is_elf = 1;
      m->elf_size = elf_size(img);
      for (i = 0; i < m->elf_size; ++i) h = (h ^ img[i]) * 1099511628211ull;
      rec->elf_size = m->elf_size;
      rec->elf_fnv1a64 = h;
      strcpy(rec->tag, "elf");
    } else if (strncmp((const char *)img, "TRTFAKE1 ", 9) == 0) {
      char buf[1024], kind[16] = "cubin", sm[16] = "";
      const char *text = (const char *)img;
      int dev_sm = device_sm(tls_current->device);
      if (!fake_field(text, "sm", sm, sizeof sm) || !fake_field(text, "name", m->name, sizeof m->name))
        RETURN(CUDA_ERROR_INVALID_IMAGE);
      fake_field(text, "kind", kind, sizeof kind);
      fake_field(text, "tag", rec->tag, sizeof rec->tag);
      rec->is_ptx = strcmp(kind, "ptx") == 0;
      rec->sm = atoi(sm);
      if (!compatible(rec->is_ptx, rec->sm, dev_sm)) RETURN(CUDA_ERROR_NO_BINARY_FOR_GPU);
      if (fake_field(text, "params", buf, sizeof buf)) {
        char *p = buf;
        while (*p && m->num_params < FAKE_CUDA_MAX_PARAMS) {
          m->param_size[m->num_params++] = (unsigned int)strtoul(p, &p, 10);
          if (*p == ',') ++p;
        }
      }
    } else if (img[0] == '/' || img[0] == '.' || img[0] == '\n') {
      /* real PTX text: ".target sm_80" / "sm_90a" gives the SM; the driver would JIT it */
      const char *text = (const char *)img, *t = strstr(text, ".target sm_");
      uint64_t h = 0xcbf29ce484222325ull, i, n = strlen(text); /* FNV-1a 64 offset basis */
      int dev_sm = device_sm(tls_current->device);
      if (t == NULL) RETURN(CUDA_ERROR_INVALID_PTX);
      for (i = 0; i < n; ++i) h = (h ^ img[i]) * 1099511628211ull;
      m->is_elf = 1; /* resolve names by searching the text, like ELF images */
      m->elf_size = n;
      rec->elf_size = n;
      rec->elf_fnv1a64 = h;
      rec->is_ptx = 1;
      rec->sm = atoi(t + strlen(".target sm_"));
      strcpy(rec->tag, "ptx");
      if (!compatible(1, rec->sm, dev_sm)) RETURN(CUDA_ERROR_NO_BINARY_FOR_GPU);
    } else {
      RETURN(CUDA_ERROR_INVALID_IMAGE);
    }
    m->id = g.num_modules++;
    m->alive = 1;
    m->ctx = tls_current;
    m->image = img;
    m->func.module = m;
    rec->seq = ++g.seq;
    rec->module_id = m->id;
    rec->ctx = tls_current;
    *module = m;
    RETURN(CUDA_SUCCESS);
  }
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  ENTER("cuModuleUnload");
  if (module == NULL || !module->alive) RETURN(CUDA_ERROR_INVALID_HANDLE);
  module->alive = 0;
  g.loads[module->id].unloaded = 1;
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule module, const char *name) {
  ENTER("cuModuleGetFunction");
  if (module == NULL || !module->alive) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (module->is_elf) {
    size_t n = strlen(name), i;
    int found = 0;
    for (i = 0; !found && i + n <= module->elf_size; ++i)
      found = memcmp(module->image + i, name, n) == 0;
    if (!found) RETURN(CUDA_ERROR_NOT_FOUND);
  } else if (strcmp(module->name, name) != 0) {
    RETURN(CUDA_ERROR_NOT_FOUND);
  }
  strncpy(module->func.name, name, sizeof module->func.name - 1);
  if (module->is_elf) {
    int k;
    for (k = 0; k < g.num_elf_params; ++k) {
      if (strcmp(g.elf_params[k].name, name) == 0) {
        module->num_params = g.elf_params[k].num_params;
        memcpy(module->param_size, g.elf_params[k].param_size, sizeof module->param_size);
      }
    }
  }
  *hfunc = &module->func;
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attrib, int value) {
  ENTER("cuFuncSetAttribute");
  if (f == NULL || !f->module->alive) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    int dev = f->module->ctx->device;
    if (value > g.devices[dev].optin) RETURN(CUDA_ERROR_INVALID_VALUE);
    f->max_dynamic_shared = value;
  }
  if (g.num_attrs < MAX_ATTR_EVENTS) {
    fake_cuda_attr_event *e = &g.attrs[g.num_attrs++];
    e->seq = ++g.seq;
    strcpy(e->tag, g.loads[f->module->id].tag);
    e->attrib = attrib;
    e->value = value;
  }
  RETURN(CUDA_SUCCESS);
}

/* Validates and records a launch. Caller holds the lock. */
static CUresult record_launch(int ex, CUfunction f, const unsigned int grid[3],
                              const unsigned int block[3], unsigned int shared, CUstream stream,
                              void **params, const CUlaunchConfig *cfg) {
  fake_cuda_launch *l;
  int i;
  if (tls_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (f == NULL || !f->module->alive) return CUDA_ERROR_INVALID_HANDLE;
  if (f->module->ctx != tls_current) return CUDA_ERROR_INVALID_CONTEXT;
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || block[0] == 0) return CUDA_ERROR_INVALID_VALUE;
  if (shared > 49152 && (int)shared > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  if (f->module->num_params > 0 && params == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (g.num_launches >= MAX_LAUNCHES) return CUDA_ERROR_OUT_OF_MEMORY;
  l = &g.launches[g.num_launches++];
  memset(l, 0, sizeof *l);
  l->seq = ++g.seq;
  l->ex = ex;
  l->module_id = f->module->id;
  l->ctx = tls_current;
  strcpy(l->tag, g.loads[f->module->id].tag);
  strcpy(l->name, f->name);
  l->is_ptx = g.loads[f->module->id].is_ptx;
  memcpy(l->grid, grid, sizeof l->grid);
  memcpy(l->block, block, sizeof l->block);
  l->shared = shared;
  l->stream = stream;
  l->cluster_policy = l->cooperative = l->pdl = -1;
  if (cfg != NULL) {
    l->num_attrs = (int)cfg->numAttrs;
    for (i = 0; i < (int)cfg->numAttrs; ++i) {
      const CUlaunchAttribute *a = &cfg->attrs[i];
      switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
          l->cluster[0] = a->value.clusterDim.x;
          l->cluster[1] = a->value.clusterDim.y;
          l->cluster[2] = a->value.clusterDim.z;
          break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
          l->cluster_policy = (int)a->value.clusterSchedulingPolicyPreference;
          break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: l->cooperative = a->value.cooperative; break;
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
          l->pdl = a->value.programmaticStreamSerializationAllowed;
          break;
        default: return CUDA_ERROR_INVALID_VALUE;
      }
    }
  }
  l->num_params = f->module->num_params;
  for (i = 0; i < l->num_params; ++i) {
    unsigned int n = f->module->param_size[i];
    l->param_size[i] = n;
    if (params[i] == NULL) return CUDA_ERROR_INVALID_VALUE;
    memcpy(l->param_bytes[i], params[i], n > 8 ? 8 : n);
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shared, CUstream stream, void **params, void **extra) {
  unsigned int grid[3], block[3];
  launch_delay();
  ENTER("cuLaunchKernel");
  grid[0] = gx, grid[1] = gy, grid[2] = gz;
  block[0] = bx, block[1] = by, block[2] = bz;
  if (extra != NULL) RETURN(CUDA_ERROR_INVALID_VALUE);
  RETURN(record_launch(0, f, grid, block, shared, stream, params, NULL));
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
                                 void **extra) {
  unsigned int grid[3], block[3];
  launch_delay();
  ENTER("cuLaunchKernelEx");
  if (cfg == NULL || extra != NULL) RETURN(CUDA_ERROR_INVALID_VALUE);
  grid[0] = cfg->gridDimX, grid[1] = cfg->gridDimY, grid[2] = cfg->gridDimZ;
  block[0] = cfg->blockDimX, block[1] = cfg->blockDimY, block[2] = cfg->blockDimZ;
  RETURN(record_launch(1, f, grid, block, cfg->sharedMemBytes, cfg->hStream, params, cfg));
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream) {
  ENTER("cuMemAllocAsync");
  if (tls_current == NULL) RETURN(CUDA_ERROR_INVALID_CONTEXT);
  if (bytes == 0 || g.num_allocs >= MAX_ALLOCS || g.num_mem >= MAX_MEM_EVENTS)
    RETURN(CUDA_ERROR_INVALID_VALUE);
  *dptr = g.next_ptr;
  /* 256-byte aligned, like the real allocator's guarantee; leave gaps so overruns are visible */
  g.next_ptr += ((bytes + 255) / 256) * 256 + 0x100000;
  g.allocs[g.num_allocs++] = *dptr;
  g.mem[g.num_mem].seq = ++g.seq;
  g.mem[g.num_mem].is_free = 0;
  g.mem[g.num_mem].ptr = *dptr;
  g.mem[g.num_mem].bytes = bytes;
  g.mem[g.num_mem].stream = stream;
  g.num_mem++;
  RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  int i;
  ENTER("cuMemFreeAsync");
  for (i = 0; i < g.num_allocs; ++i)
    if (g.allocs[i] == ptr) break;
  if (i == g.num_allocs || g.num_mem >= MAX_MEM_EVENTS) RETURN(CUDA_ERROR_INVALID_VALUE);
  g.allocs[i] = g.allocs[--g.num_allocs];
  g.mem[g.num_mem].seq = ++g.seq;
  g.mem[g.num_mem].is_free = 1;
  g.mem[g.num_mem].ptr = ptr;
  g.mem[g.num_mem].bytes = 0;
  g.mem[g.num_mem].stream = stream;
  g.num_mem++;
  RETURN(CUDA_SUCCESS);
}

/* Element size of a CUtensorMapDataType (the ones Triton passes: UINT8 .. TFLOAT32_FTZ). */
static unsigned int tma_elem_size(int data_type) {
  switch (data_type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;
  }
}

EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType data_type,
                                       cuuint32_t rank, void *address, const cuuint64_t *dims,
                                       const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *elem_strides,
                                       CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                       CUtensorMapFloatOOBfill oob) {
  fake_cuda_tma_encode *e;
  unsigned int i, esize = tma_elem_size((int)data_type);
  unsigned long long magic;
  ENTER("cuTensorMapEncodeTiled");
  /* no context needed, like the real one */
  if (map == NULL || dims == NULL || box == NULL || elem_strides == NULL || esize == 0 ||
      rank < 1 || rank > 5 || ((uintptr_t)address % 16) != 0 || (rank > 1 && strides == NULL) ||
      (int)interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || (int)swizzle < 0 ||
      (int)swizzle > CU_TENSOR_MAP_SWIZZLE_128B || (int)l2 < 0 ||
      (int)l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B || (int)oob < 0 ||
      (int)oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA ||
      (box[0] * esize) % 16 != 0 || g.num_tma >= MAX_TMA_ENCODES)
    RETURN(CUDA_ERROR_INVALID_VALUE);
  for (i = 0; i < rank; ++i)
    if (dims[i] == 0 || dims[i] > (1ull << 32) || box[i] == 0 || box[i] > 256 ||
        elem_strides[i] == 0 || elem_strides[i] > 8 ||
        (i + 1 < rank && (strides[i] % 16 != 0 || strides[i] >= (1ull << 40))))
      RETURN(CUDA_ERROR_INVALID_VALUE);
  e = &g.tma[g.num_tma++];
  memset(e, 0, sizeof *e);
  e->seq = ++g.seq;
  e->data_type = (int)data_type;
  e->rank = rank;
  e->address = (unsigned long long)(uintptr_t)address;
  for (i = 0; i < rank; ++i) {
    e->dims[i] = dims[i];
    e->strides[i] = i + 1 < rank ? strides[i] : 0;
    e->box[i] = box[i];
    e->elem_strides[i] = elem_strides[i];
  }
  e->interleave = (int)interleave;
  e->swizzle = (int)swizzle;
  e->l2_promotion = (int)l2;
  e->oob_fill = (int)oob;
  memset(map, 0, sizeof *map);
  magic = FAKE_CUDA_TMA_MAGIC | (unsigned long long)e->seq;
  memcpy(&map->opaque[0], &magic, 8);
  memcpy(&map->opaque[1], &e->address, 8);
  RETURN(CUDA_SUCCESS);
}

/* ---- memsets (reset_to_zero) --------------------------------------------------------------- */

static CUresult record_memset(int bits, int two_d, CUdeviceptr ptr, size_t pitch,
                              unsigned int value, size_t width, size_t height, CUstream stream) {
  fake_cuda_memset *m;
  size_t unit = (size_t)bits / 8;
  if (tls_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (ptr % unit != 0 || g.num_memsets >= MAX_MEMSETS) return CUDA_ERROR_INVALID_VALUE;
  if (two_d && (pitch % unit != 0 || (height > 1 && pitch < width * unit)))
    return CUDA_ERROR_INVALID_VALUE;
  m = &g.memsets[g.num_memsets++];
  m->seq = ++g.seq;
  m->bits = bits;
  m->two_d = two_d;
  m->ptr = ptr;
  m->pitch = two_d ? pitch : 0;
  m->value = value;
  m->width = width;
  m->height = two_d ? height : 1;
  m->stream = stream;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr ptr, unsigned char uc, size_t n, CUstream stream) {
  ENTER("cuMemsetD8Async");
  RETURN(record_memset(8, 0, ptr, 0, uc, n, 1, stream));
}

EXPORT CUresult cuMemsetD16Async(CUdeviceptr ptr, unsigned short us, size_t n, CUstream stream) {
  ENTER("cuMemsetD16Async");
  RETURN(record_memset(16, 0, ptr, 0, us, n, 1, stream));
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr ptr, unsigned int ui, size_t n, CUstream stream) {
  ENTER("cuMemsetD32Async");
  RETURN(record_memset(32, 0, ptr, 0, ui, n, 1, stream));
}

EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr ptr, size_t pitch, unsigned char uc, size_t width,
                                  size_t height, CUstream stream) {
  ENTER("cuMemsetD2D8Async");
  RETURN(record_memset(8, 1, ptr, pitch, uc, width, height, stream));
}

EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr ptr, size_t pitch, unsigned short us, size_t width,
                                   size_t height, CUstream stream) {
  ENTER("cuMemsetD2D16Async");
  RETURN(record_memset(16, 1, ptr, pitch, us, width, height, stream));
}

EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr ptr, size_t pitch, unsigned int ui, size_t width,
                                   size_t height, CUstream stream) {
  ENTER("cuMemsetD2D32Async");
  RETURN(record_memset(32, 1, ptr, pitch, ui, width, height, stream));
}

EXPORT int fake_cuda_num_memsets(void) {
  int n;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  n = g.num_memsets;
  pthread_mutex_unlock(&g_lock);
  return n;
}

EXPORT int fake_cuda_get_memset(int i, fake_cuda_memset *out) {
  int ok;
  pthread_once(&init_once, init);
  pthread_mutex_lock(&g_lock);
  ok = i >= 0 && i < g.num_memsets;
  if (ok) *out = g.memsets[i];
  pthread_mutex_unlock(&g_lock);
  return ok;
}
