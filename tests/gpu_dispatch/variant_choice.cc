// variant_choice: on a real GPU, checks which variant (cubin) the dispatcher of
// @rules_triton_examples//kernels:matmul launches for aligned, misaligned and strided operands,
// and that the results are right.
//
// The driver cannot say which cubin ran, so the generated code talks to a recording shim
// (recording_libcuda.c, a libcuda.so.1 found first through LD_LIBRARY_PATH) that forwards to the
// real driver at $RULES_TRITON_REAL_LIBCUDA and records the FNV-1a-64 hash of every loaded image
// and which module every launch came from. This program hashes the cubin files of the `cubin`
// output group given on the command line (named matmul_a<algo>_s<spec>_sm<target>.cubin) and
// names the variant each launch came from. It opens the real driver itself, by the same absolute
// path, for its own setup (context, memory, copies): one driver instance, one context.
//
// Cases, each for every algo (specializations in examples/kernels/BUILD.bazel):
//   aligned     A, B, C row-major, 16-byte aligned, M, N, K % 16 == 0 -> matmul_a<i>_s0_sm<T>
//   misaligned  A one fp16 element into its allocation, row-major     -> matmul_a<i>_s1_sm<T>
//   transposed  A a transposed view (stride_ak = M != 1)              -> matmul_a<i>_s2_sm<T>
//   odd_k       aligned row-major, K = 72 (K, stride_am not % 16)     -> matmul_a<i>_s1_sm<T>
//   odd_m       aligned row-major, M = 200 (not % 16)                 -> matmul_a<i>_s1_sm<T>
// where T is the target the dispatcher must pick for the device (sm_90: 90; sm_8x: 80). Every
// loaded image must be a cubin of T (on an H100 no sm80 cubin may ever be loaded).
//
// Against rules_triton's fake driver (tests/fake_cuda) as the "real" one, the program checks the
// dispatch only (no memory, no numerics) and that the shim's hashes equal the fake's own
// records: the CPU test does that. VARIANT_CHOICE_FAKE_SM=86 makes the fake device sm_86.
//
// Usage: variant_choice CUBIN...
// Exit codes: 0 all passed; 1 a check failed; 2 setup or CUDA error (shim not first on
// LD_LIBRARY_PATH, a driver call failed, cubins missing); 77 skipped: no driver or no GPU.

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fake_cuda.h"  // //tests/fake_cuda:fake_cuda_control: the fake's record types only
#include "kernels/matmul.h"
#include "tests/gpu_dispatch/recording_libcuda.h"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitSetup = 2;
constexpr int kExitSkipped = 77;
constexpr int kNumSpecs = 3;

template <typename F>
bool Resolve(void *lib, const char *name, F *out, bool quiet = false) {
  void *sym = dlsym(lib, name);
  std::memcpy(out, &sym, sizeof sym);
  if (sym == nullptr && !quiet) std::printf("variant_choice: %s is missing\n", name);
  return sym != nullptr;
}

// ---- the recording shim ------------------------------------------------------------------------

struct Recorder {
  int (*real_status)();
  const char *(*real_error)();
  const char *(*real_path)();
  void *(*real_handle)();
  int (*num_loads)();
  int (*get_load)(int, recorder_load *);
  int (*num_launches)();
  int (*get_launch)(int, recorder_launch *);
  int (*call_count)(const char *);
};

// ---- the real driver, for this program's own setup ---------------------------------------------
// Versioned names: the ones cuda.h's macros map the plain names to.
struct Driver {
  bool fake = false;
  CUresult (*Init)(unsigned int);
  CUresult (*DriverGetVersion)(int *);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);  // cuDevicePrimaryCtxRelease_v2
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);                // cuMemAlloc_v2
  CUresult (*MemFree)(CUdeviceptr);                           // cuMemFree_v2
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);  // cuMemcpyHtoD_v2
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);        // cuMemcpyDtoH_v2
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);   // cuMemsetD8_v2
  CUresult (*GetErrorName)(CUresult, const char **);
  // the fake driver's control API (fake mode only)
  void (*FakeSetDevice)(int, int, int, int);
  CUcontext (*FakeCreateContext)(int);
  int (*FakeNumLoads)();
  int (*FakeGetLoad)(int, fake_cuda_load *);
  CUdeviceptr fake_next = 0x10000000;
};

Driver g_cu;

std::string ErrorName(CUresult r) {
  const char *name = nullptr;
  if (g_cu.GetErrorName != nullptr && g_cu.GetErrorName(r, &name) == CUDA_SUCCESS && name != nullptr)
    return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
  return "CUresult " + std::to_string(static_cast<int>(r));
}

#define CHECK_CU(expr)                                                           \
  do {                                                                           \
    CUresult r_ = (expr);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                    \
      std::printf("variant_choice: %s failed: %s\n", #expr, ErrorName(r_).c_str()); \
      return kExitSetup;                                                         \
    }                                                                            \
  } while (0)

// Memory wrappers: the fake driver has no memory, so fake mode hands out addresses only.
CUresult Alloc(CUdeviceptr *p, size_t bytes) {
  if (!g_cu.fake) return g_cu.MemAlloc(p, bytes);
  *p = g_cu.fake_next;
  g_cu.fake_next += (bytes + 4095) / 4096 * 4096;
  return CUDA_SUCCESS;
}
void Free(CUdeviceptr p) {
  if (!g_cu.fake) g_cu.MemFree(p);
}
CUresult HtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  return g_cu.fake ? CUDA_SUCCESS : g_cu.MemcpyHtoD(dst, src, bytes);
}
CUresult DtoH(void *dst, CUdeviceptr src, size_t bytes) {
  return g_cu.fake ? CUDA_SUCCESS : g_cu.MemcpyDtoH(dst, src, bytes);
}
CUresult Memset(CUdeviceptr dst, unsigned char v, size_t bytes) {
  return g_cu.fake ? CUDA_SUCCESS : g_cu.MemsetD8(dst, v, bytes);
}
CUresult Sync() { return g_cu.fake ? CUDA_SUCCESS : g_cu.CtxSynchronize(); }

// ---- cubins ------------------------------------------------------------------------------------

uint64_t Fnv1a64(const std::vector<unsigned char> &bytes, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a-64 offset basis
  for (size_t i = 0; i < size && i < bytes.size(); ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

struct Cubin {
  std::string name;  // matmul_a0_s1_sm90
  int algo = -1, spec = -1, target = -1;
  std::vector<unsigned char> bytes;
};

// Digits at s[*pos...] (no strtol: keeps the binary free of glibc 2.38's __isoc23_* symbols).
bool ParseInt(const std::string &s, size_t *pos, int *out) {
  size_t start = *pos;
  long v = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9' && v < 100000) v = v * 10 + (s[(*pos)++] - '0');
  *out = static_cast<int>(v);
  return *pos > start;
}

// "matmul_a<algo>_s<spec>_sm<target>" -> fields; false for any other name.
bool ParseName(Cubin *c) {
  const std::string &s = c->name;
  const std::string prefix = "matmul_a";
  if (s.compare(0, prefix.size(), prefix) != 0) return false;
  size_t pos = prefix.size();
  if (!ParseInt(s, &pos, &c->algo) || s.compare(pos, 2, "_s") != 0) return false;
  pos += 2;
  if (!ParseInt(s, &pos, &c->spec) || s.compare(pos, 3, "_sm") != 0) return false;
  pos += 3;
  return ParseInt(s, &pos, &c->target) && pos == s.size();
}

std::string Basename(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

std::string Hex(unsigned long long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", v);
  return buf;
}

// Names of the cubins whose first `size` bytes hash to `hash` ("" when none).
const Cubin *Identify(const std::vector<Cubin> &cubins, unsigned long long size, unsigned long long hash) {
  for (const Cubin &c : cubins)
    if (size > 0 && c.bytes.size() >= size && Fnv1a64(c.bytes, size) == hash) return &c;
  return nullptr;
}

std::string LaunchedVariant(const Recorder &rec, const std::vector<Cubin> &cubins, int index) {
  recorder_launch l{};
  if (rec.get_launch(index, &l) != 0) return "<no launch>";
  if (l.load_index < 0) return "<launch of an unknown module>";
  const Cubin *c = Identify(cubins, l.size, l.fnv1a64);
  return c ? c->name : "<unknown image: " + std::to_string(l.size) + " bytes, fnv " + Hex(l.fnv1a64) + ">";
}

// ---- fp16 on the host (as examples/app) -------------------------------------------------------

uint16_t FloatToHalf(float f) {  // round to nearest even; no NaN/overflow in our data
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (x < 0x38800000u) {
    float a;
    std::memcpy(&a, &x, sizeof a);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t mant_odd = (x >> 13) & 1u;
  x += 0xc8000fffu + mant_odd;
  return static_cast<uint16_t>(sign | (x >> 13));
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -out : out;
  }
  uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112u) << 23) | (mant << 13));
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// ---- cases -------------------------------------------------------------------------------------

struct Case {
  const char *name;
  int M, N, K;
  bool a_transposed;  // A stored K x M: stride_am = 1, stride_ak = M
  int a_offset;       // A starts this many fp16 elements into its allocation
  int spec;           // expected specialization
};

const Case kCases[] = {
    {"aligned", 208, 144, 128, false, 0, 0},
    {"misaligned", 208, 144, 128, false, 1, 1},
    {"transposed", 208, 144, 128, true, 0, 2},
    {"odd_k", 208, 144, 72, false, 0, 1},
    {"odd_m", 200, 144, 128, false, 0, 1},
};

struct Operands {
  const Case *c;
  CUdeviceptr a_alloc = 0, b = 0, c_out = 0;
  CUdeviceptr a = 0;
  int stride_am = 0, stride_ak = 0;
  std::vector<double> ref;
};

int Prepare(const Case &c, std::mt19937 &rng, Operands *op) {
  const int M = c.M, N = c.N, K = c.K;
  op->c = &c;
  // Values k/16 with |k| <= 16 are exact in fp16 and their products sum exactly in fp32: the
  // only rounding is the final fp16 store.
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<float> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  for (float &v : a) v = static_cast<float>(dist(rng)) / 16.0f;
  for (float &v : b) v = static_cast<float>(dist(rng)) / 16.0f;
  std::vector<uint16_t> a_h(a.size()), b_h(b.size());
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      const size_t at = c.a_transposed ? static_cast<size_t>(k) * M + m : static_cast<size_t>(m) * K + k;
      a_h[at] = FloatToHalf(a[static_cast<size_t>(m) * K + k]);
    }
  for (size_t i = 0; i < b.size(); ++i) b_h[i] = FloatToHalf(b[i]);
  op->stride_am = c.a_transposed ? 1 : K;
  op->stride_ak = c.a_transposed ? M : 1;
  op->ref.assign(static_cast<size_t>(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      const double av = a[static_cast<size_t>(m) * K + k];
      for (int n = 0; n < N; ++n) op->ref[static_cast<size_t>(m) * N + n] += av * b[static_cast<size_t>(k) * N + n];
    }
  CHECK_CU(Alloc(&op->a_alloc, (a_h.size() + 8) * 2));
  CHECK_CU(Alloc(&op->b, b_h.size() * 2));
  CHECK_CU(Alloc(&op->c_out, static_cast<size_t>(M) * N * 2));
  op->a = op->a_alloc + static_cast<CUdeviceptr>(c.a_offset) * 2;
  CHECK_CU(HtoD(op->a, a_h.data(), a_h.size() * 2));
  CHECK_CU(HtoD(op->b, b_h.data(), b_h.size() * 2));
  return 0;
}

// The target the dispatcher must pick for `sm` (docs/design.md): exact SM, else the highest lower
// target of the same major (targets < 90 only); -1 when none.
int ExpectedTarget(const std::set<int> &targets, int sm) {
  if (targets.count(sm)) return sm;
  int best = -1;
  for (int t : targets)
    if (t < 90 && t / 10 == sm / 10 && t < sm && t > best) best = t;
  return best;
}

}  // namespace

int main(int argc, char **argv) {
  // -- cubins
  std::vector<Cubin> cubins;
  std::map<uint64_t, std::string> by_hash;
  std::set<int> targets;
  for (int i = 1; i < argc; ++i) {
    std::ifstream file(argv[i], std::ios::binary);
    if (!file) {
      std::printf("variant_choice: cannot read cubin %s\n", argv[i]);
      return kExitSetup;
    }
    Cubin c;
    c.name = Basename(argv[i]);
    c.bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (!ParseName(&c)) {
      std::printf("variant_choice: %s is not named matmul_a<algo>_s<spec>_sm<target>.cubin\n", argv[i]);
      return kExitSetup;
    }
    const uint64_t h = Fnv1a64(c.bytes, c.bytes.size());
    if (by_hash.count(h)) {
      std::printf("variant_choice: %s and %s are the same image: launches could not be told apart\n",
                  c.name.c_str(), by_hash[h].c_str());
      return kExitSetup;
    }
    by_hash[h] = c.name;
    targets.insert(c.target);
    cubins.push_back(std::move(c));
  }
  const int num_algos = matmul_get_num_algos();
  std::printf("variant_choice: matmul: %d algos x %d specializations; %zu cubins given, targets:", num_algos,
              kNumSpecs, cubins.size());
  for (int t : targets) {
    int n = 0;
    for (const Cubin &c : cubins) n += c.target == t;
    std::printf(" sm%d (%d)", t, n);
  }
  std::printf("\n");
  if (cubins.empty()) {
    std::printf("usage: variant_choice CUBIN... (the `cubin` output group of @rules_triton_examples//kernels:matmul)\n");
    return kExitSetup;
  }

  // -- the real driver's path; skip when there is none
  const char *real_path = std::getenv("RULES_TRITON_REAL_LIBCUDA");
  if (real_path == nullptr || real_path[0] == '\0') {
    std::printf("variant_choice: SKIP: no CUDA driver: RULES_TRITON_REAL_LIBCUDA is not set "
                "(tests/gpu_dispatch/run.sh sets it to the real libcuda.so.1); skipped\n");
    return kExitSkipped;
  }
  if (real_path[0] != '/') {
    std::printf("variant_choice: RULES_TRITON_REAL_LIBCUDA must be an absolute path, got %s\n", real_path);
    return kExitSetup;
  }
  if (access(real_path, R_OK) != 0) {
    std::printf("variant_choice: SKIP: no CUDA driver: %s (RULES_TRITON_REAL_LIBCUDA) does not exist; skipped\n",
                real_path);
    return kExitSkipped;
  }

  // -- the shim first (before anything opens the real driver, which also answers to libcuda.so.1)
  void *shim = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (shim == nullptr) {
    const char *why = dlerror();
    std::printf("variant_choice: the recording libcuda.so.1 is not on LD_LIBRARY_PATH: %s\n", why ? why : "");
    return kExitSetup;
  }
  Recorder rec{};
  if (!Resolve(shim, "recorder_real_status", &rec.real_status, true)) {
    Dl_info info{};
    void *sym = dlsym(shim, "cuCtxGetCurrent");
    const char *where = sym != nullptr && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
    std::printf("variant_choice: the libcuda.so.1 found first (%s) is not the recording shim: put "
                "tests/gpu_dispatch's libcuda.so.1 first on LD_LIBRARY_PATH\n", where);
    return kExitSetup;
  }
  if (!Resolve(shim, "recorder_real_error", &rec.real_error) || !Resolve(shim, "recorder_real_path", &rec.real_path) ||
      !Resolve(shim, "recorder_real_handle", &rec.real_handle) || !Resolve(shim, "recorder_num_loads", &rec.num_loads) ||
      !Resolve(shim, "recorder_get_load", &rec.get_load) || !Resolve(shim, "recorder_num_launches", &rec.num_launches) ||
      !Resolve(shim, "recorder_get_launch", &rec.get_launch) || !Resolve(shim, "recorder_call_count", &rec.call_count))
    return kExitSetup;
  {
    Dl_info info{};
    void *sym = reinterpret_cast<void *>(rec.real_status);
    const char *shim_path = dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
    std::printf("variant_choice: recording shim: %s\n", shim_path);
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(shim_path, a) != nullptr && realpath(real_path, b) != nullptr && std::strcmp(a, b) == 0) {
      std::printf("variant_choice: RULES_TRITON_REAL_LIBCUDA (%s) is the recording shim itself, not the real driver\n",
                  real_path);
      return kExitSetup;
    }
  }
  if (rec.real_status() != CUDA_SUCCESS) {
    std::printf("variant_choice: SKIP: no usable CUDA driver: %s; skipped\n", rec.real_error());
    return kExitSkipped;
  }
  void *real = dlopen(real_path, RTLD_NOW | RTLD_LOCAL);
  if (real == nullptr || real != rec.real_handle()) {
    std::printf("variant_choice: this program and the shim do not share one driver instance (%p vs %p)\n", real,
                rec.real_handle());
    return kExitSetup;
  }
  std::printf("variant_choice: real driver: %s\n", real_path);

  // -- device and context
  int sm = 0;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
  g_cu.fake = dlsym(real, "fake_cuda_set_device") != nullptr;
  if (g_cu.fake) {
    bool ok = Resolve(real, "fake_cuda_set_device", &g_cu.FakeSetDevice) &&
              Resolve(real, "fake_cuda_create_context", &g_cu.FakeCreateContext) &&
              Resolve(real, "fake_cuda_num_loads", &g_cu.FakeNumLoads) &&
              Resolve(real, "fake_cuda_get_load", &g_cu.FakeGetLoad) && Resolve(real, "cuCtxSetCurrent", &g_cu.CtxSetCurrent);
    if (!ok) return kExitSetup;
    sm = 90;
    if (const char *s = std::getenv("VARIANT_CHOICE_FAKE_SM")) {
      size_t pos = 0;
      std::string str(s);
      if (!ParseInt(str, &pos, &sm) || pos != str.size()) sm = 90;
    }
    g_cu.FakeSetDevice(0, sm / 10, sm % 10, 232448);
    ctx = g_cu.FakeCreateContext(0);
    CHECK_CU(g_cu.CtxSetCurrent(ctx));
    std::printf("variant_choice: device 0: rules_triton fake driver, sm_%d: dispatch only, numerics skipped\n", sm);
  } else {
    bool ok = Resolve(real, "cuInit", &g_cu.Init) && Resolve(real, "cuDriverGetVersion", &g_cu.DriverGetVersion) &&
              Resolve(real, "cuDeviceGetCount", &g_cu.DeviceGetCount) && Resolve(real, "cuDeviceGet", &g_cu.DeviceGet) &&
              Resolve(real, "cuDeviceGetName", &g_cu.DeviceGetName) &&
              Resolve(real, "cuDeviceGetAttribute", &g_cu.DeviceGetAttribute) &&
              Resolve(real, "cuDevicePrimaryCtxRetain", &g_cu.PrimaryCtxRetain) &&
              Resolve(real, "cuDevicePrimaryCtxRelease_v2", &g_cu.PrimaryCtxRelease) &&
              Resolve(real, "cuCtxSetCurrent", &g_cu.CtxSetCurrent) &&
              Resolve(real, "cuCtxSynchronize", &g_cu.CtxSynchronize) && Resolve(real, "cuMemAlloc_v2", &g_cu.MemAlloc) &&
              Resolve(real, "cuMemFree_v2", &g_cu.MemFree) && Resolve(real, "cuMemcpyHtoD_v2", &g_cu.MemcpyHtoD) &&
              Resolve(real, "cuMemcpyDtoH_v2", &g_cu.MemcpyDtoH) && Resolve(real, "cuMemsetD8_v2", &g_cu.MemsetD8) &&
              Resolve(real, "cuGetErrorName", &g_cu.GetErrorName);
    if (!ok) {
      std::printf("variant_choice: SKIP: the CUDA driver at %s lacks entry points this program needs; skipped\n",
                  real_path);
      return kExitSkipped;
    }
    CUresult r = g_cu.Init(0);
    int count = 0;
    if (r == CUDA_SUCCESS) r = g_cu.DeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
      std::printf("variant_choice: SKIP: the CUDA driver reports no usable GPU (%s, %d device(s)); skipped\n",
                  r == CUDA_SUCCESS ? "no error" : ErrorName(r).c_str(), count);
      return kExitSkipped;
    }
    int version = 0, major = 0, minor = 0;
    char name[256] = {0};
    CHECK_CU(g_cu.DriverGetVersion(&version));
    CHECK_CU(g_cu.DeviceGet(&dev, 0));
    CHECK_CU(g_cu.DeviceGetName(name, sizeof name - 1, dev));
    CHECK_CU(g_cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK_CU(g_cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    sm = major * 10 + minor;
    CHECK_CU(g_cu.PrimaryCtxRetain(&ctx, dev));
    CHECK_CU(g_cu.CtxSetCurrent(ctx));
    std::printf("variant_choice: device 0: %s, sm_%d; driver API %d.%d\n", name, sm, version / 1000,
                version % 1000 / 10);
  }

  const int target = ExpectedTarget(targets, sm);
  if (target < 0) {
    std::printf("variant_choice: SKIP: matmul has no target for sm_%d; skipped\n", sm);
    return kExitSkipped;
  }
  std::printf("variant_choice: expected target for sm_%d: sm%d\n", sm, target);
  for (int algo = 0; algo < num_algos; ++algo)
    for (int spec = 0; spec < kNumSpecs; ++spec) {
      bool found = false;
      for (const Cubin &c : cubins) found |= c.algo == algo && c.spec == spec && c.target == target;
      if (!found) {
        std::printf("variant_choice: no cubin matmul_a%d_s%d_sm%d given on the command line\n", algo, spec, target);
        return kExitSetup;
      }
    }

  // -- operands
  std::mt19937 rng(20240611);
  std::vector<Operands> ops(sizeof kCases / sizeof kCases[0]);
  for (size_t i = 0; i < ops.size(); ++i)
    if (int status = Prepare(kCases[i], rng, &ops[i])) return status;

  // -- the cases
  int passed = 0, failed = 0;
  for (int algo = 0; algo < num_algos; ++algo) {
    for (const Operands &op : ops) {
      const Case &c = *op.c;
      const size_t c_elems = static_cast<size_t>(c.M) * c.N;
      const std::string expected =
          "matmul_a" + std::to_string(algo) + "_s" + std::to_string(c.spec) + "_sm" + std::to_string(target);
      std::string why;
      CHECK_CU(Memset(op.c_out, 0xff, c_elems * 2));  // NaN pattern: unwritten elements show up
      const int before = rec.num_launches();
      const CUresult r = matmul(/*stream=*/nullptr, op.a, op.b, op.c_out, c.M, c.N, c.K, op.stride_am, op.stride_ak,
                                /*stride_bk=*/c.N, /*stride_bn=*/1, /*stride_cm=*/c.N, /*stride_cn=*/1, algo);
      const CUresult sync = r == CUDA_SUCCESS ? Sync() : CUDA_SUCCESS;
      const int launched = rec.num_launches() - before;
      std::string got = launched > 0 ? LaunchedVariant(rec, cubins, rec.num_launches() - 1) : "<no launch>";
      if (r != CUDA_SUCCESS) why += ", matmul returned " + ErrorName(r);
      if (sync != CUDA_SUCCESS) why += ", synchronize: " + ErrorName(sync);
      if (launched != 1) why += ", " + std::to_string(launched) + " launches through the shim (want 1)";
      if (got != expected) why += ", wrong variant";
      std::string err_text = "n/a";
      if (!g_cu.fake && r == CUDA_SUCCESS && sync == CUDA_SUCCESS) {
        std::vector<uint16_t> out(c_elems);
        CHECK_CU(DtoH(out.data(), op.c_out, c_elems * 2));
        double max_rel = 0.0;
        long bad = 0;
        size_t first_bad = 0;
        for (size_t i = 0; i < c_elems; ++i) {
          const double want = op.ref[i], have = HalfToFloat(out[i]);
          const double err = std::fabs(have - want);
          // fp16 output: half an ulp is 2^-11 relative; a little more, plus absolute slack near 0.
          if (!(err <= 1e-3 + 2e-3 * std::fabs(want))) {
            if (bad++ == 0) first_bad = i;
          }
          const double rel = err == 0.0 ? 0.0 : err / std::fmax(std::fabs(want), 1e-3);
          if (!(rel <= max_rel)) max_rel = rel;  // NaN sticks
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1e", max_rel);
        err_text = buf;
        if (bad > 0) {
          char detail[160];
          std::snprintf(detail, sizeof detail, ", %ld bad elements (first at (%zu, %zu): got %g, want %g)", bad,
                        first_bad / c.N, first_bad % c.N, HalfToFloat(out[first_bad]), op.ref[first_bad]);
          why += detail;
        }
      } else if (!g_cu.fake) {
        err_text = "-";
      }
      const bool ok = why.empty();
      std::printf("algo %d %s -> %s (expected %s) max_rel_err %s %s%s\n", algo, c.name, got.c_str(), expected.c_str(),
                  err_text.c_str(), ok ? "PASS" : "FAIL", ok ? "" : (" (" + why.substr(2) + ")").c_str());
      ++*(ok ? &passed : &failed);
    }
  }

  // -- every image ever loaded is a cubin of the expected target
  {
    const int n = rec.num_loads();
    std::map<int, int> per_target;
    std::vector<std::string> problems;
    for (int i = 0; i < n; ++i) {
      recorder_load l{};
      if (rec.get_load(i, &l) != 0) {
        problems.push_back("load " + std::to_string(i) + " not recorded");
        continue;
      }
      const Cubin *c = Identify(cubins, l.size, l.fnv1a64);
      if (c == nullptr) {
        problems.push_back("unknown image (" + std::to_string(l.size) + " bytes, fnv " + Hex(l.fnv1a64) + ")");
        continue;
      }
      ++per_target[c->target];
      if (c->target != target) problems.push_back(c->name + " (an sm" + std::to_string(c->target) + " cubin)");
      if (l.result != CUDA_SUCCESS) problems.push_back(c->name + " failed to load: " + ErrorName(static_cast<CUresult>(l.result)));
    }
    std::string counts;
    for (int t : targets) counts += (counts.empty() ? "sm" : ", sm") + std::to_string(t) + ": " + std::to_string(per_target[t]);
    const bool ok = problems.empty() && n > 0;
    std::printf("loads: %d images (%s) -> only sm%d cubins loaded on sm_%d: %s", n, counts.c_str(), target, sm,
                ok ? "PASS" : "FAIL");
    for (size_t i = 0; i < problems.size(); ++i) std::printf("%s%s", i == 0 ? " (" : "; ", problems[i].c_str());
    std::printf("%s\n", problems.empty() ? (n == 0 ? " (nothing loaded)" : "") : ")");
    ++*(ok ? &passed : &failed);
  }

  // -- fake mode: the shim's hashes equal the fake driver's own records
  if (g_cu.fake) {
    const int n = rec.num_loads();
    bool ok = g_cu.FakeNumLoads() == n;
    for (int i = 0; ok && i < n; ++i) {
      recorder_load mine{};
      fake_cuda_load theirs{};
      ok = rec.get_load(i, &mine) == 0 && g_cu.FakeGetLoad(i, &theirs) == 1 /* 1: ok */ && mine.size == theirs.elf_size &&
           mine.fnv1a64 == theirs.elf_fnv1a64;
    }
    std::printf("shim: %d loads hashed like the fake driver's own records: %s\n", n, ok ? "PASS" : "FAIL");
    ++*(ok ? &passed : &failed);
  }

  std::printf("shim: %d cuModuleLoadData, %d cuModuleGetFunction, %d cuLaunchKernel, %d cuLaunchKernelEx calls\n",
              rec.call_count("cuModuleLoadData"), rec.call_count("cuModuleGetFunction"), rec.call_count("cuLaunchKernel"),
              rec.call_count("cuLaunchKernelEx"));

  for (Operands &op : ops) {
    Free(op.a_alloc);
    Free(op.b);
    Free(op.c_out);
  }
  if (!g_cu.fake) {
    unload_matmul();
    g_cu.PrimaryCtxRelease(dev);
  }
  std::printf("variant_choice: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : kExitFailed;
}
