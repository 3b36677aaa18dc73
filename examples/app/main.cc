// app: multiplies fp16 matrices through the ahead-of-time compiled Triton kernel //kernels:matmul
// with every algo, and checks each result against a CPU reference.
//
// Neither this program nor the kernel library links libcuda or the CUDA runtime: the library
// opens the driver with dlopen at run time, and so does this program for the few driver calls it
// makes itself (context, memory, copies). It builds and links on machines without CUDA.
//
// Exit codes: 0 all results match; 1 a result mismatched; 2 a CUDA call failed;
//             77 skipped: no CUDA driver or no GPU on this machine.
//
// Usage: app [--quiet]

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"  // from //kernels:matmul; brings cuda.h's types (CUresult, ...)

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitCudaError = 2;
constexpr int kExitSkipped = 77;

// ---- the driver, opened at run time ---------------------------------------------------------
// Symbol names are the versioned ones that cuda.h's macros map the plain names to.
struct Driver {
  CUresult (*Init)(unsigned int);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*CtxCreate)(CUcontext *, unsigned int, CUdevice);  // cuCtxCreate_v2
  CUresult (*CtxDestroy)(CUcontext);                           // cuCtxDestroy_v2
  CUresult (*CtxSynchronize)(void);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);                   // cuMemAlloc_v2
  CUresult (*MemFree)(CUdeviceptr);                              // cuMemFree_v2
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);     // cuMemcpyHtoD_v2
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);           // cuMemcpyDtoH_v2
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);      // cuMemsetD8_v2
  CUresult (*GetErrorName)(CUresult, const char **);
};

template <typename F>
bool Resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  std::memcpy(out, &sym, sizeof sym);
  if (sym == nullptr) std::fprintf(stderr, "app: the CUDA driver has no %s\n", name);
  return sym != nullptr;
}

Driver g_cu;

// Returns false (and explains) when there is no usable driver.
bool OpenDriver() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char *why = dlerror();
    std::printf("app: no CUDA driver on this machine (dlopen libcuda.so.1: %s); skipped\n",
                why ? why : "not found");
    return false;
  }
  bool ok = true;
  ok &= Resolve(lib, "cuInit", &g_cu.Init);
  ok &= Resolve(lib, "cuDeviceGetCount", &g_cu.DeviceGetCount);
  ok &= Resolve(lib, "cuDeviceGet", &g_cu.DeviceGet);
  ok &= Resolve(lib, "cuDeviceGetName", &g_cu.DeviceGetName);
  ok &= Resolve(lib, "cuDeviceGetAttribute", &g_cu.DeviceGetAttribute);
  ok &= Resolve(lib, "cuCtxCreate_v2", &g_cu.CtxCreate);
  ok &= Resolve(lib, "cuCtxDestroy_v2", &g_cu.CtxDestroy);
  ok &= Resolve(lib, "cuCtxSynchronize", &g_cu.CtxSynchronize);
  ok &= Resolve(lib, "cuMemAlloc_v2", &g_cu.MemAlloc);
  ok &= Resolve(lib, "cuMemFree_v2", &g_cu.MemFree);
  ok &= Resolve(lib, "cuMemcpyHtoD_v2", &g_cu.MemcpyHtoD);
  ok &= Resolve(lib, "cuMemcpyDtoH_v2", &g_cu.MemcpyDtoH);
  ok &= Resolve(lib, "cuMemsetD8_v2", &g_cu.MemsetD8);
  ok &= Resolve(lib, "cuGetErrorName", &g_cu.GetErrorName);
  if (!ok) std::printf("app: the CUDA driver lacks required entry points; skipped\n");
  return ok;
}

std::string ErrorName(CUresult r) {
  const char *name = nullptr;
  if (g_cu.GetErrorName != nullptr && g_cu.GetErrorName(r, &name) == CUDA_SUCCESS && name)
    return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
  return "CUresult " + std::to_string(static_cast<int>(r));
}

// ---- fp16 on the host -----------------------------------------------------------------------

uint16_t FloatToHalf(float f) {  // round to nearest even; no NaN/overflow in our data
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // inf / too large
  if (x < 0x38800000u) {                                                // subnormal or zero
    float a;
    std::memcpy(&a, &x, sizeof a);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t mant_odd = (x >> 13) & 1u;
  x += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
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
  uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                            : (sign | ((exp + 112u) << 23) | (mant << 13));
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// ---- the test cases -------------------------------------------------------------------------

struct Case {
  const char *name;
  int M, N, K;
  bool a_transposed;  // A stored as K x M (column-major A): a non-contiguous operand
  bool b_transposed;  // B stored as N x K
};

const Case kCases[] = {
    {"256x256x256 row-major", 256, 256, 256, false, false},
    {"257x131x200 row-major", 257, 131, 200, false, false},
    {"100x200x64 A^T", 100, 200, 64, true, false},
    {"96x77x129 B^T", 96, 77, 129, false, true},
    {"33x17x48 A^T B^T", 33, 17, 48, true, true},
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { status_ = g_cu.MemAlloc(&ptr_, bytes); }
  ~DeviceBuffer() {
    if (status_ == CUDA_SUCCESS) g_cu.MemFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  CUresult status() const { return status_; }
  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_;
  CUresult status_;
};

#define CHECK_CU(expr)                                                            \
  do {                                                                            \
    CUresult r_ = (expr);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                     \
      std::printf("app: %s failed: %s\n", #expr, ErrorName(r_).c_str());          \
      return kExitCudaError;                                                      \
    }                                                                             \
  } while (0)

// Runs every algo on one case; returns 0 or an exit code. Counts into *passed / *failed.
int RunCase(const Case &c, std::mt19937 &rng, bool quiet, int *passed, int *failed) {
  const int M = c.M, N = c.N, K = c.K;
  std::uniform_int_distribution<int> dist(-16, 16);
  // Values k/16 with |k| <= 16 are exact in fp16 and their products sum exactly in fp32, so the
  // only rounding is the final fp16 store: the reference below is exact up to that.
  std::vector<float> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  for (float &v : a) v = dist(rng) / 16.0f;
  for (float &v : b) v = dist(rng) / 16.0f;

  // Host copies in the storage layout, and the strides that describe it.
  std::vector<uint16_t> a_h(a.size()), b_h(b.size());
  int stride_am, stride_ak, stride_bk, stride_bn;
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      const size_t at = c.a_transposed ? static_cast<size_t>(k) * M + m : static_cast<size_t>(m) * K + k;
      a_h[at] = FloatToHalf(a[static_cast<size_t>(m) * K + k]);
    }
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) {
      const size_t at = c.b_transposed ? static_cast<size_t>(n) * K + k : static_cast<size_t>(k) * N + n;
      b_h[at] = FloatToHalf(b[static_cast<size_t>(k) * N + n]);
    }
  if (c.a_transposed) {
    stride_am = 1;
    stride_ak = M;
  } else {
    stride_am = K;
    stride_ak = 1;
  }
  if (c.b_transposed) {
    stride_bk = 1;
    stride_bn = K;
  } else {
    stride_bk = N;
    stride_bn = 1;
  }

  std::vector<double> ref(static_cast<size_t>(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      const double av = a[static_cast<size_t>(m) * K + k];
      for (int n = 0; n < N; ++n) ref[static_cast<size_t>(m) * N + n] += av * b[static_cast<size_t>(k) * N + n];
    }

  DeviceBuffer da(a_h.size() * 2), db(b_h.size() * 2), dc(static_cast<size_t>(M) * N * 2);
  CHECK_CU(da.status());
  CHECK_CU(db.status());
  CHECK_CU(dc.status());
  CHECK_CU(g_cu.MemcpyHtoD(da.get(), a_h.data(), da.bytes()));
  CHECK_CU(g_cu.MemcpyHtoD(db.get(), b_h.data(), db.bytes()));

  std::vector<uint16_t> c_h(static_cast<size_t>(M) * N);
  for (int algo = 0; algo < matmul_get_num_algos(); ++algo) {
    CHECK_CU(g_cu.MemsetD8(dc.get(), 0xff, dc.bytes()));  // NaN pattern: unwritten shows up
    CHECK_CU(matmul(/*stream=*/nullptr, da.get(), db.get(), dc.get(), M, N, K, stride_am, stride_ak,
                    stride_bk, stride_bn, /*stride_cm=*/N, /*stride_cn=*/1, algo));
    CHECK_CU(g_cu.CtxSynchronize());
    CHECK_CU(g_cu.MemcpyDtoH(c_h.data(), dc.get(), dc.bytes()));
    // fp16 output: half an ulp is 2^-11 relative; allow a little more, plus a small absolute
    // slack for results near zero.
    double max_err = 0.0;
    long bad = 0;
    for (size_t i = 0; i < c_h.size(); ++i) {
      const double got = HalfToFloat(c_h[i]);
      const double err = std::fabs(got - ref[i]);
      if (!(err <= 1e-3 + 2e-3 * std::fabs(ref[i]))) {
        if (bad < 3)
          std::printf("app:   mismatch %s algo %d at (%zu, %zu): got %g, want %g\n", c.name, algo,
                      i / N, i % N, got, ref[i]);
        ++bad;
      }
      if (err > max_err || std::isnan(err)) max_err = err;
    }
    const bool ok = bad == 0;
    if (!quiet || !ok)
      std::printf("app: %-5s %-24s algo %d (%s): max abs err %.3g%s\n", ok ? "ok" : "FAIL", c.name,
                  algo, matmul_get_algo_info(algo), max_err,
                  ok ? "" : (", " + std::to_string(bad) + " bad elements").c_str());
    ++*(ok ? passed : failed);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const bool quiet = argc > 1 && std::strcmp(argv[1], "--quiet") == 0;
  std::printf("app: %d matmul algo(s) compiled into the binary\n", matmul_get_num_algos());
  for (int algo = 0; algo < matmul_get_num_algos(); ++algo)
    std::printf("app:   algo %d: %s\n", algo, matmul_get_algo_info(algo));

  if (!OpenDriver()) return kExitSkipped;
  CUresult r = g_cu.Init(0);
  int count = 0;
  if (r == CUDA_SUCCESS) r = g_cu.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    std::printf("app: the CUDA driver reports no usable GPU (%s, %d device(s)); skipped\n",
                r == CUDA_SUCCESS ? "no error" : ErrorName(r).c_str(), count);
    return kExitSkipped;
  }
  CUdevice dev = 0;
  CHECK_CU(g_cu.DeviceGet(&dev, 0));
  char name[256] = {0};
  int major = 0, minor = 0;
  CHECK_CU(g_cu.DeviceGetName(name, sizeof name - 1, dev));
  CHECK_CU(g_cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CHECK_CU(g_cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  std::printf("app: device 0: %s (sm_%d%d)\n", name, major, minor);

  CUcontext ctx = nullptr;
  CHECK_CU(g_cu.CtxCreate(&ctx, 0, dev));
  // Loading up front is optional (the first launch loads too); it reports a missing cubin early.
  r = load_matmul();
  if (r != CUDA_SUCCESS) {
    std::printf("app: load_matmul failed: %s\n", ErrorName(r).c_str());
    g_cu.CtxDestroy(ctx);
    return kExitCudaError;
  }

  std::mt19937 rng(1234);
  int passed = 0, failed = 0, status = 0;
  for (const Case &c : kCases) {
    status = RunCase(c, rng, quiet, &passed, &failed);
    if (status != 0) break;
  }
  // Empty problem: nothing to launch, and that is a success.
  if (status == 0) {
    r = matmul(nullptr, 0, 0, 0, 0, 16, 16, 16, 1, 16, 1, 16, 1, 0);
    const bool ok = r == CUDA_SUCCESS;
    std::printf("app: %-5s empty matrix (M=0) returns CUDA_SUCCESS: %s\n", ok ? "ok" : "FAIL",
                ErrorName(r).c_str());
    ++*(ok ? &passed : &failed);
  }
  unload_matmul();
  g_cu.CtxDestroy(ctx);

  if (status != 0) return status;
  std::printf("app: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : kExitMismatch;
}
