// api_test: the C API of every example kernel, linked statically into a C++ program.
//
// Without a CUDA driver (any CPU-only machine, e.g. the build sandbox) it checks what needs no
// GPU: algo counts and descriptions, algo_id validation, and the documented error for "no
// driver" (CUDA_ERROR_NO_DEVICE) -- without crashing. With a driver and a GPU it also checks
// CUDA_ERROR_INVALID_CONTEXT without a current context, then loads every library, launches
// empty grids (CUDA_SUCCESS, nothing launched), and runs `scale` and `scalars` for real to check
// the C ABI of every scalar type from C++.
//
// Exit code 0: pass; 1: a check failed.

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/add.h"
#include "kernels/big_smem.h"
#include "kernels/matmul.h"
#include "kernels/scalars.h"
#include "kernels/scale.h"
#include "kernels/softmax.h"

namespace {

int g_failures = 0;
int g_checks = 0;

void Check(bool ok, const std::string &what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

void CheckResult(CUresult got, CUresult want, const std::string &what) {
  Check(got == want, what + ": got CUresult " + std::to_string(static_cast<int>(got)) +
                         ", want " + std::to_string(static_cast<int>(want)));
}

// One library's C API, reduced to what can be called generically.
struct Library {
  const char *name;
  int (*num_algos)(void);
  const char *(*algo_info)(int);
  CUresult (*load)(void);
  CUresult (*unload)(void);
  // Launches algo `algo_id` with all pointers 0 and sizes from `n` (n = 0: an empty grid).
  CUresult (*launch)(int n, int algo_id);
  CUresult (*launch_default)(int n);
  std::vector<std::string> infos;  // expected get_algo_info strings, one per algo
};

const CUstream kStream = nullptr;

std::vector<Library> Libraries() {
  return {
      {"add", add_get_num_algos, add_get_algo_info, load_add, unload_add,
       [](int n, int algo) { return add(kStream, 0, 0, 0, n, algo); },
       [](int n) { return add_default(kStream, 0, 0, 0, n); },
       {"BLOCK=1024 num_warps=4 num_stages=1", "BLOCK=256 num_warps=2 num_stages=1"}},
      {"big_smem", big_smem_get_num_algos, big_smem_get_algo_info, load_big_smem, unload_big_smem,
       [](int n, int algo) { return big_smem(kStream, 0, 0, n, n, n, n, algo); },
       [](int n) { return big_smem_default(kStream, 0, 0, n, n, n, n); },
       {"BLOCK=128 num_warps=8 num_stages=1"}},
      {"matmul", matmul_get_num_algos, matmul_get_algo_info, load_matmul, unload_matmul,
       [](int n, int algo) { return matmul(kStream, 0, 0, 0, n, n, n, n, 1, n, 1, n, 1, algo); },
       [](int n) { return matmul_default(kStream, 0, 0, 0, n, n, n, n, 1, n, 1, n, 1); },
       {"BLOCK_M=128 BLOCK_N=128 BLOCK_K=32 GROUP_M=8 num_warps=4 num_stages=3",
        "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 GROUP_M=8 num_warps=4 num_stages=4",
        "BLOCK_M=128 BLOCK_N=64 BLOCK_K=64 GROUP_M=8 num_warps=4 num_stages=3",
        "BLOCK_M=32 BLOCK_N=32 BLOCK_K=32 GROUP_M=4 num_warps=2 num_stages=2"}},
      // `scalars` always launches one program: it has no empty grid (n is ignored).
      {"scalars", scalars_get_num_algos, scalars_get_algo_info, load_scalars, unload_scalars,
       [](int, int algo) {
         return scalars(kStream, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0.0, algo);
       },
       [](int) { return scalars_default(kStream, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0.0); },
       {"num_warps=1 num_stages=1"}},
      {"scale", scale_get_num_algos, scale_get_algo_info, load_scale, unload_scale,
       [](int n, int algo) { return scale(kStream, 0, 0, 2.0f, n, algo); },
       [](int n) { return scale_default(kStream, 0, 0, 2.0f, n); },
       {"BLOCK=1024 num_warps=4 num_stages=1", "BLOCK=128 num_warps=1 num_stages=1"}},
      {"softmax", softmax_get_num_algos, softmax_get_algo_info, load_softmax, unload_softmax,
       [](int n, int algo) { return softmax(kStream, 0, 0, n, n, n, n, algo); },
       [](int n) { return softmax_default(kStream, 0, 0, n, n, n, n); },
       {"BLOCK=1024 num_warps=4 num_stages=1", "BLOCK=4096 num_warps=8 num_stages=1",
        "BLOCK=16384 num_warps=16 num_stages=1"}},
  };
}

void CheckAlgos(const Library &lib) {
  const std::string name = lib.name;
  const int n = lib.num_algos();
  Check(n == static_cast<int>(lib.infos.size()),
        name + "_get_num_algos() = " + std::to_string(n) + ", want " + std::to_string(lib.infos.size()));
  for (int i = 0; i < n && i < static_cast<int>(lib.infos.size()); ++i) {
    const char *info = lib.algo_info(i);
    Check(info != nullptr && lib.infos[i] == info,
          name + "_get_algo_info(" + std::to_string(i) + ") = \"" + (info ? info : "(null)") +
              "\", want \"" + lib.infos[i] + "\"");
  }
  Check(lib.algo_info(-1) == nullptr, name + "_get_algo_info(-1) is NULL");
  Check(lib.algo_info(n) == nullptr, name + "_get_algo_info(num_algos) is NULL");
  // algo_id is checked before anything else: no driver or context is needed to reject it.
  CheckResult(lib.launch(64, -1), CUDA_ERROR_INVALID_VALUE, name + "(algo_id=-1)");
  CheckResult(lib.launch(64, n), CUDA_ERROR_INVALID_VALUE, name + "(algo_id=num_algos)");
  CheckResult(lib.launch(64, 1 << 30), CUDA_ERROR_INVALID_VALUE, name + "(algo_id=2^30)");
}

// ---- driver (only to set up a context; the libraries open the driver themselves) -----------

struct Driver {
  CUresult (*Init)(unsigned int);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
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
};

template <typename F>
bool Resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  std::memcpy(out, &sym, sizeof sym);
  if (sym == nullptr) std::printf("FAIL: the driver has no %s\n", name);
  return sym != nullptr;
}

bool OpenDriver(void *lib, Driver *d) {
  bool ok = true;
  ok &= Resolve(lib, "cuInit", &d->Init);
  ok &= Resolve(lib, "cuDeviceGetCount", &d->DeviceGetCount);
  ok &= Resolve(lib, "cuDeviceGet", &d->DeviceGet);
  ok &= Resolve(lib, "cuDeviceGetAttribute", &d->DeviceGetAttribute);
  ok &= Resolve(lib, "cuDevicePrimaryCtxRetain", &d->PrimaryCtxRetain);
  ok &= Resolve(lib, "cuDevicePrimaryCtxRelease_v2", &d->PrimaryCtxRelease);
  ok &= Resolve(lib, "cuCtxSetCurrent", &d->CtxSetCurrent);
  ok &= Resolve(lib, "cuCtxSynchronize", &d->CtxSynchronize);
  ok &= Resolve(lib, "cuMemAlloc_v2", &d->MemAlloc);
  ok &= Resolve(lib, "cuMemFree_v2", &d->MemFree);
  ok &= Resolve(lib, "cuMemcpyHtoD_v2", &d->MemcpyHtoD);
  ok &= Resolve(lib, "cuMemcpyDtoH_v2", &d->MemcpyDtoH);
  ok &= Resolve(lib, "cuMemsetD8_v2", &d->MemsetD8);
  return ok;
}

uint16_t Bits16(uint16_t v) { return v; }

// scale: out = x * alpha with alpha a C float.
void RunScale(const Driver &d) {
  const int n = 1000;
  std::vector<float> x(n), out(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i) - 500.0f;
  CUdeviceptr dx = 0, dout = 0;
  CheckResult(d.MemAlloc(&dx, n * sizeof(float)), CUDA_SUCCESS, "cuMemAlloc");
  CheckResult(d.MemAlloc(&dout, n * sizeof(float)), CUDA_SUCCESS, "cuMemAlloc");
  CheckResult(d.MemcpyHtoD(dx, x.data(), n * sizeof(float)), CUDA_SUCCESS, "cuMemcpyHtoD");
  for (int algo = 0; algo < scale_get_num_algos(); ++algo) {
    const float alpha = 0.3f;
    CheckResult(d.MemsetD8(dout, 0, n * sizeof(float)), CUDA_SUCCESS, "cuMemsetD8");
    CheckResult(scale(kStream, dx, dout, alpha, n, algo), CUDA_SUCCESS, "scale(n=1000)");
    CheckResult(d.CtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after scale");
    CheckResult(d.MemcpyDtoH(out.data(), dout, n * sizeof(float)), CUDA_SUCCESS, "cuMemcpyDtoH");
    int bad = 0;
    for (int i = 0; i < n; ++i)
      if (out[i] != x[i] * alpha) ++bad;
    Check(bad == 0, "scale algo " + std::to_string(algo) + ": " + std::to_string(bad) +
                        " elements differ from x * 0.3f");
  }
  d.MemFree(dx);
  d.MemFree(dout);
}

// scalars: every scalar type written back into its own 8-byte slot, bit for bit.
void RunScalars(const Driver &d) {
  CUdeviceptr dout = 0;
  unsigned char out[14 * 8];
  CheckResult(d.MemAlloc(&dout, sizeof out), CUDA_SUCCESS, "cuMemAlloc");
  CheckResult(d.MemsetD8(dout, 0, sizeof out), CUDA_SUCCESS, "cuMemsetD8");
  const int8_t i8 = -100;
  const int16_t i16 = -30000;
  const int32_t i32 = -2000000000;
  const int64_t i64 = -9000000000000000000LL;
  const uint8_t u1 = 1, u8 = 250;
  const uint16_t u16 = 65000;
  const uint32_t u32 = 4000000000u;
  const uint64_t u64 = 18000000000000000000ULL;
  const uint16_t fp16 = Bits16(0xC248);  // -3.140625
  const uint16_t bf16 = Bits16(0x4049);  // 3.140625
  const float fp32 = -1.2345678e-3f;
  const double fp64 = 3.141592653589793e100;
  CheckResult(scalars(kStream, dout, true, i8, i16, i32, i64, u1, u8, u16, u32, u64, fp16, bf16, fp32,
                      fp64, 0),
              CUDA_SUCCESS, "scalars()");
  CheckResult(d.CtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after scalars");
  CheckResult(d.MemcpyDtoH(out, dout, sizeof out), CUDA_SUCCESS, "cuMemcpyDtoH");
  d.MemFree(dout);
  auto slot = [&](int k, const void *want, size_t size, const char *type) {
    unsigned char expect[8] = {0};
    std::memcpy(expect, want, size);
    Check(std::memcmp(out + 8 * k, expect, 8) == 0,
          std::string("scalars: the ") + type + " argument did not round-trip bit for bit");
  };
  const int8_t one = 1;
  slot(0, &one, 1, "i1 (bool)");
  slot(1, &i8, 1, "i8");
  slot(2, &i16, 2, "i16");
  slot(3, &i32, 4, "i32");
  slot(4, &i64, 8, "i64");
  slot(5, &u1, 1, "u1");
  slot(6, &u8, 1, "u8");
  slot(7, &u16, 2, "u16");
  slot(8, &u32, 4, "u32");
  slot(9, &u64, 8, "u64");
  slot(10, &fp16, 2, "fp16");
  slot(11, &bf16, 2, "bf16");
  slot(12, &fp32, 4, "fp32 (float)");
  slot(13, &fp64, 8, "fp64");
}

void GpuChecks(void *libcuda, const std::vector<Library> &libs) {
  Driver d;
  if (!OpenDriver(libcuda, &d)) {
    Check(false, "the CUDA driver lacks entry points this test needs");
    return;
  }
  CUresult r = d.Init(0);
  int count = 0;
  if (r == CUDA_SUCCESS) r = d.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    std::printf("api_test: a driver but no usable GPU (CUresult %d); GPU checks skipped\n", static_cast<int>(r));
    return;
  }
  // No current context yet on this thread.
  for (const Library &lib : libs) {
    CheckResult(lib.load(), CUDA_ERROR_INVALID_CONTEXT, std::string("load_") + lib.name + "() without a context");
    CheckResult(lib.launch_default(64), CUDA_ERROR_INVALID_CONTEXT,
                std::string(lib.name) + "_default() without a context");
  }
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  int major = 0, minor = 0;
  CheckResult(d.DeviceGet(&dev, 0), CUDA_SUCCESS, "cuDeviceGet");
  d.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  const int sm = major * 10 + minor;
  CheckResult(d.PrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS, "cuDevicePrimaryCtxRetain");
  CheckResult(d.CtxSetCurrent(ctx), CUDA_SUCCESS, "cuCtxSetCurrent");
  std::printf("api_test: GPU sm_%d\n", sm);
  for (const Library &lib : libs) {
    const std::string name = lib.name;
    // big_smem is built for sm_90 only (arch-specific sm_90a): other GPUs have no binary.
    const bool runs = name != "big_smem" || sm == 90;
    const CUresult ok = runs ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
    CheckResult(lib.load(), ok, "load_" + name + "()");
    CheckResult(lib.load(), ok, "load_" + name + "() again (idempotent)");
    if (name != "scalars") {
      for (int algo = 0; algo < lib.num_algos(); ++algo)
        CheckResult(lib.launch(0, algo), ok, name + "(empty grid, algo " + std::to_string(algo) + ")");
      CheckResult(lib.launch_default(0), ok, name + "_default(empty grid)");
    }
    CheckResult(lib.launch(64, lib.num_algos()), CUDA_ERROR_INVALID_VALUE, name + "(algo_id=num_algos)");
  }
  CheckResult(d.CtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after empty launches");
  RunScale(d);
  RunScalars(d);
  for (const Library &lib : libs) {
    CheckResult(lib.unload(), CUDA_SUCCESS, std::string("unload_") + lib.name + "()");
    CheckResult(lib.unload(), CUDA_SUCCESS, std::string("unload_") + lib.name + "() again (no-op)");
  }
  // Reload after unload works.
  CheckResult(load_add(), CUDA_SUCCESS, "load_add() after unload");
  unload_add();
  d.CtxSetCurrent(nullptr);
  d.PrimaryCtxRelease(dev);
}

}  // namespace

int main() {
  const std::vector<Library> libs = Libraries();
  for (const Library &lib : libs) CheckAlgos(lib);

  void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (libcuda == nullptr) {
    // The documented error when there is no driver: CUDA_ERROR_NO_DEVICE, for every entry point
    // that needs the driver, and no crash.
    for (const Library &lib : libs) {
      const std::string name = lib.name;
      CheckResult(lib.load(), CUDA_ERROR_NO_DEVICE, "load_" + name + "() without a driver");
      CheckResult(lib.unload(), CUDA_ERROR_NO_DEVICE, "unload_" + name + "() without a driver");
      CheckResult(lib.launch(64, 0), CUDA_ERROR_NO_DEVICE, name + "(algo 0) without a driver");
      CheckResult(lib.launch_default(64), CUDA_ERROR_NO_DEVICE, name + "_default() without a driver");
      // A second call takes the cached "no driver" path.
      CheckResult(lib.launch_default(64), CUDA_ERROR_NO_DEVICE, name + "_default() again");
    }
    std::printf("api_test: no CUDA driver: GPU checks skipped\n");
  } else {
    GpuChecks(libcuda, libs);
  }
  std::printf("api_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
