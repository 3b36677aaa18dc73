// app_tuned: multiplies fp16 matrices through //kernels:matmul_tuned with no algo_id:
// matmul_tuned_auto picks the algo its committed tuning table chose for the nearest tuned shape
// on this GPU (matmul_tuned_auto_algo says which), and checks each result against the CPU.
//
// Like app, it links neither libcuda nor the CUDA runtime: the driver is dlopen'ed.
// Exit codes: 0 all results match; 1 a mismatch; 2 a CUDA error; 77 no driver or no GPU.

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/matmul_tuned.h"

namespace {

struct Driver {
  CUresult (*Init)(unsigned int);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
} cu;

template <typename F>
bool Resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  std::memcpy(out, &sym, sizeof sym);
  return sym != nullptr;
}

uint16_t FloatToHalf(float f) {  // exact for the small multiples of 1/16 used here
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x == 0) return static_cast<uint16_t>(sign);
  const int exp = static_cast<int>(x >> 23) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | ((x >> 13) & 0x3ffu));
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mant), -24);
  const uint32_t bits = sign | ((exp + 112u) << 23) | (mant << 13);
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

#define CHECK_CU(expr)                                                       \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    if (r_ != CUDA_SUCCESS) {                                                \
      std::printf("app_tuned: %s failed: CUresult %d\n", #expr, (int)r_);    \
      return 2;                                                              \
    }                                                                        \
  } while (0)

// One product C = A @ B (row-major); 0 match, 1 mismatch, 2 CUDA error.
int Multiply(int sm, int M, int N, int K, std::mt19937 *rng) {
  std::uniform_int_distribution<int> dist(-4, 4);  // k/16: exact in fp16, exact fp32 sums
  std::vector<uint16_t> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N),
      c(static_cast<size_t>(M) * N);
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = FloatToHalf(af[i] = dist(*rng) / 16.0f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = FloatToHalf(bf[i] = dist(*rng) / 16.0f);
  CUdeviceptr da, db, dc;
  CHECK_CU(cu.MemAlloc(&da, a.size() * 2));
  CHECK_CU(cu.MemAlloc(&db, b.size() * 2));
  CHECK_CU(cu.MemAlloc(&dc, c.size() * 2));
  CHECK_CU(cu.MemcpyHtoD(da, a.data(), a.size() * 2));
  CHECK_CU(cu.MemcpyHtoD(db, b.data(), b.size() * 2));
  // No algo_id: the tuning table decides.
  CHECK_CU(matmul_tuned_auto(nullptr, da, db, dc, M, N, K, K, 1, N, 1, N, 1));
  CHECK_CU(cu.CtxSynchronize());
  CHECK_CU(cu.MemcpyDtoH(c.data(), dc, c.size() * 2));
  cu.MemFree(da);
  cu.MemFree(db);
  cu.MemFree(dc);
  int bad = 0;
  for (int m = 0; m < M && bad < 5; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += af[static_cast<size_t>(m) * K + k] * bf[static_cast<size_t>(k) * N + n];
      const double got = HalfToFloat(c[static_cast<size_t>(m) * N + n]);
      if (std::fabs(got - ref) > 1e-2 + 1e-3 * std::fabs(ref) && ++bad <= 3)
        std::printf("app_tuned:   C[%d][%d] = %g, expected %g\n", m, n, got, ref);
    }
  const int algo = matmul_tuned_auto_algo(sm, da, db, dc, M, N, K, K, 1, N, 1, N, 1);  // as launched
  std::printf("app_tuned: %dx%dx%d: algo %d (%s): %s\n", M, N, K, algo,
              matmul_tuned_get_algo_info(algo), bad ? "MISMATCH" : "ok");
  return bad ? 1 : 0;
}

}  // namespace

int main() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::printf("app_tuned: no CUDA driver on this machine; skipped\n");
    return 77;
  }
  bool ok = Resolve(lib, "cuInit", &cu.Init) && Resolve(lib, "cuDeviceGetCount", &cu.DeviceGetCount) &&
            Resolve(lib, "cuDeviceGet", &cu.DeviceGet) &&
            Resolve(lib, "cuDeviceGetAttribute", &cu.DeviceGetAttribute) &&
            Resolve(lib, "cuDevicePrimaryCtxRetain", &cu.PrimaryCtxRetain) &&
            Resolve(lib, "cuCtxSetCurrent", &cu.CtxSetCurrent) &&
            Resolve(lib, "cuCtxSynchronize", &cu.CtxSynchronize) &&
            Resolve(lib, "cuMemAlloc_v2", &cu.MemAlloc) && Resolve(lib, "cuMemFree_v2", &cu.MemFree) &&
            Resolve(lib, "cuMemcpyHtoD_v2", &cu.MemcpyHtoD) && Resolve(lib, "cuMemcpyDtoH_v2", &cu.MemcpyDtoH);
  if (!ok) {
    std::printf("app_tuned: the CUDA driver lacks an entry point\n");
    return 2;
  }
  int count = 0;
  if (cu.Init(0) != CUDA_SUCCESS || cu.DeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    std::printf("app_tuned: no GPU; skipped\n");
    return 77;
  }
  CUdevice dev;
  CUcontext ctx;
  int major = 0, minor = 0;
  CHECK_CU(cu.DeviceGet(&dev, 0));
  CHECK_CU(cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CHECK_CU(cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CHECK_CU(cu.PrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cu.CtxSetCurrent(ctx));
  std::mt19937 rng(15);
  const int shapes[][3] = {{256, 256, 256}, {512, 512, 512}, {1, 4096, 4096},
                           {16, 11008, 4096}, {64, 1024, 2048}, {200, 136, 72}};
  int rc = 0;
  for (const auto &s : shapes) {
    const int r = Multiply(major * 10 + minor, s[0], s[1], s[2], &rng);
    if (r > rc) rc = r;
  }
  std::printf("app_tuned: %s\n", rc ? "FAILED" : "all results match");
  return rc;
}
