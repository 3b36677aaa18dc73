// The launchers' C entries on a GPU, with no torch (`tools/gpu run c_entry`): Liger's RMSNorm,
// SwiGLU and RoPE and the two-stage decode attention, each called through its C entry at the
// example sizes and at two sizes no example used, on buffers this program allocates with the
// driver; then the host time of one call of each entry against its raw kernel entry points
// (NAME_default with the arguments written out by hand), called on the same buffers in the
// same run, timed the same way. Run under compute-sanitizer memcheck too (`--iterations 2`).
//
// The outputs' values are checked by run_c_entry_gpu.py (bit-identical to the torch op and to
// the launcher on Triton's JIT, through ctypes on the same entries); here: every call returns
// CUDA_SUCCESS, the decode attention's output is finite and the overhead is reported.
//
// Exit codes: 0 pass, 1 a check failed, 2 a CUDA call failed, 77 no driver or no GPU.
// Usage: c_entry_gpu [--iterations N] [--json FILE]

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/capture/decode_attention_c.h"
#include "tests/capture/decode_attention_decode_partial_kernel.h"
#include "tests/capture/decode_attention_decode_reduce_kernel.h"
#include "tests/capture/liger_rms_norm.h"
#include "tests/capture/liger_rms_norm_c.h"
#include "tests/capture/liger_rope.h"
#include "tests/capture/liger_rope_c.h"
#include "tests/capture/liger_swiglu.h"
#include "tests/capture/liger_swiglu_c.h"

namespace {

struct Driver {
  CUresult (*Init)(unsigned int);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
};
Driver g_cu;

template <typename F>
bool Resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  std::memcpy(out, &sym, sizeof sym);
  return sym != nullptr;
}

int g_failures = 0;
#define CU(call)                                                                 \
  do {                                                                           \
    CUresult r_ = (call);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                    \
      std::fprintf(stderr, "FAIL %s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)r_); \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

// A device buffer of deterministic pseudo-random values (bf16 or fp32), freed at exit.
struct Buffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
};
std::vector<Buffer> g_buffers;

uint32_t g_seed = 12345;
float NextFloat() {
  g_seed = g_seed * 1664525u + 1013904223u;
  return ((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

CUdeviceptr Alloc(size_t elements, int bytes_per_element, bool fill) {
  Buffer b;
  b.bytes = std::max<size_t>(elements * bytes_per_element, 1);
  CU(g_cu.MemAlloc(&b.ptr, b.bytes));
  if (fill) {
    std::vector<uint8_t> host(b.bytes);
    for (size_t i = 0; i < elements; ++i) {
      float v = NextFloat();
      if (bytes_per_element == 4) {
        std::memcpy(&host[i * 4], &v, 4);
      } else {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        uint16_t h = (uint16_t)(bits >> 16);
        std::memcpy(&host[i * 2], &h, 2);
      }
    }
    CU(g_cu.MemcpyHtoD(b.ptr, host.data(), b.bytes));
  }
  g_buffers.push_back(b);
  return b.ptr;
}

// A DLTensor over a device buffer; shape and strides live in the struct.
struct Tensor {
  DLTensor t;
  int64_t shape[5];
  int64_t strides[5];
  Tensor(CUdeviceptr ptr, uint8_t code, uint8_t bits, std::vector<int64_t> dims,
         std::vector<int64_t> strides_ = {}) {
    std::memset(&t, 0, sizeof t);
    t.data = reinterpret_cast<void *>(ptr);
    t.device.device_type = kDLCUDA;
    t.device.device_id = 0;
    t.ndim = (int32_t)dims.size();
    t.dtype.code = code;
    t.dtype.bits = bits;
    t.dtype.lanes = 1;
    std::copy(dims.begin(), dims.end(), shape);
    t.shape = shape;
    if (!strides_.empty()) {
      std::copy(strides_.begin(), strides_.end(), strides);
      t.strides = strides;
    }
  }
};

// One launcher at one size: the C entry's call and the raw entry points' call on the same
// buffers.
struct Case {
  std::string name;
  std::function<CUresult()> entry;
  std::function<CUresult()> raw;
};

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Host time of one call (seconds): batches of `batch` calls, each batch's enqueue timed alone
// (then the GPU drains, so the launch queue never fills); per round one batch of the entry and
// two of the raw entry points, in an order that rotates every round; the median batch of each.
// The two raw sides run the identical calls: their disagreement is the measurement's noise.
void Overhead(const Case &c, int rounds, int batch, double *entry_s, double *raw_s,
              double *raw_again_s) {
  std::vector<double> t[3];
  const std::function<CUresult()> *fns[3] = {&c.entry, &c.raw, &c.raw};
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < 3; ++k) {
      int which = (round + k) % 3;
      const auto &fn = *fns[which];
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) CU(fn());
      auto t1 = std::chrono::steady_clock::now();
      CU(g_cu.CtxSynchronize());
      t[which].push_back(Seconds(t0, t1) / batch);
    }
  }
  double *outs[3] = {entry_s, raw_s, raw_again_s};
  for (int k = 0; k < 3; ++k) {
    std::sort(t[k].begin(), t[k].end());
    *outs[k] = t[k][t[k].size() / 2];
  }
}

}  // namespace

int main(int argc, char **argv) {
  int iterations = 200;
  const char *json = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
  }
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::printf("no CUDA driver: skipped\n");
    return 77;
  }
  bool ok = Resolve(lib, "cuInit", &g_cu.Init) && Resolve(lib, "cuDeviceGet", &g_cu.DeviceGet) &&
            Resolve(lib, "cuDevicePrimaryCtxRetain", &g_cu.DevicePrimaryCtxRetain) &&
            Resolve(lib, "cuCtxSetCurrent", &g_cu.CtxSetCurrent) &&
            Resolve(lib, "cuCtxSynchronize", &g_cu.CtxSynchronize) &&
            Resolve(lib, "cuMemAlloc_v2", &g_cu.MemAlloc) && Resolve(lib, "cuMemFree_v2", &g_cu.MemFree) &&
            Resolve(lib, "cuMemcpyHtoD_v2", &g_cu.MemcpyHtoD) &&
            Resolve(lib, "cuMemcpyDtoH_v2", &g_cu.MemcpyDtoH);
  if (!ok || g_cu.Init(0) != CUDA_SUCCESS) {
    std::printf("no usable CUDA driver or GPU: skipped\n");
    return 77;
  }
  CUdevice dev;
  CUcontext ctx;
  CU(g_cu.DeviceGet(&dev, 0));
  CU(g_cu.DevicePrimaryCtxRetain(&ctx, dev));
  CU(g_cu.CtxSetCurrent(ctx));
  CUstream stream = nullptr;  // the legacy default stream
  const uint8_t BF = kDLBfloat, F = kDLFloat;

  std::vector<Case> cases;
  std::vector<Tensor *> keep;  // the DLTensors outlive the calls
  auto T = [&](CUdeviceptr p, uint8_t code, uint8_t bits, std::vector<int64_t> dims,
               std::vector<int64_t> strides = {}) {
    keep.push_back(new Tensor(p, code, bits, dims, strides));
    return &keep.back()->t;
  };

  // Liger RMSNorm (fp32, 4096 columns): example rows 2048, unseen 1 and 77.
  for (int64_t rows : {2048, 1, 77}) {
    CUdeviceptr x = Alloc(rows * 4096, 4, true), w = Alloc(4096, 4, true);
    CUdeviceptr y = Alloc(rows * 4096, 4, false), rstd = Alloc(rows, 4, false);
    const DLTensor *X = T(x, F, 32, {rows, 4096}), *W = T(w, F, 32, {4096});
    const DLTensor *Y = T(y, F, 32, {rows, 4096}), *R = T(rstd, F, 32, {rows});
    cases.push_back({"rms_norm rows=" + std::to_string(rows),
                     [=] { return liger_rms_norm_c(stream, X, W, 1e-6f, 0.0f, Y, R, nullptr, 0); },
                     [=] { return liger_rms_norm_default(stream, y, 4096, x, 4096, w, 1, rstd, 1, 4096, 1e-6f, 0.0f, (int32_t)rows); }});
  }
  // Liger SwiGLU (bf16, 4096 columns): example rows 2048, unseen 3 and 333.
  for (int64_t rows : {2048, 3, 333}) {
    CUdeviceptr a = Alloc(rows * 4096, 2, true), b = Alloc(rows * 4096, 2, true), c = Alloc(rows * 4096, 2, false);
    const DLTensor *A = T(a, BF, 16, {rows, 4096}), *B = T(b, BF, 16, {rows, 4096}), *C = T(c, BF, 16, {rows, 4096});
    cases.push_back({"swiglu rows=" + std::to_string(rows),
                     [=] { return liger_swiglu_c(stream, A, B, 1.0f, C, nullptr, 0); },
                     [=] { return liger_swiglu_default(stream, a, b, c, 4096, 1.0f, (int32_t)rows); }});
  }
  // Liger RoPE on Llama's layout, q (2, 32, seq, 128) and k (2, 8, seq, 128) as transposes of
  // (2, seq, heads, 128): example seq 512, unseen 77 and 1000. In place.
  for (int64_t seq : {512, 77, 1000}) {
    CUdeviceptr q = Alloc(2 * seq * 32 * 128, 2, true), k = Alloc(2 * seq * 8 * 128, 2, true);
    CUdeviceptr cs = Alloc(seq * 128, 2, true), sn = Alloc(seq * 128, 2, true);
    const DLTensor *Q = T(q, BF, 16, {2, 32, seq, 128}, {seq * 32 * 128, 128, 32 * 128, 1});
    const DLTensor *K = T(k, BF, 16, {2, 8, seq, 128}, {seq * 8 * 128, 128, 8 * 128, 1});
    const DLTensor *Cs = T(cs, BF, 16, {1, seq, 128}), *Sn = T(sn, BF, 16, {1, seq, 128});
    cases.push_back({"rope seq=" + std::to_string(seq),
                     [=] { return liger_rope_c(stream, Q, K, Cs, Sn, nullptr, 0); },
                     [=] { return liger_rope_default(stream, q, 32 * 128, k, 8 * 128, cs, 128, sn, 128, (int32_t)seq); }});
  }
  // Decode attention, two launches through a workspace: example (4, 4096), unseen (1, 1000)
  // and (3, 77).
  std::vector<std::pair<CUdeviceptr, int64_t>> outs;
  for (auto bs : std::vector<std::pair<int64_t, int64_t>>{{4, 4096}, {1, 1000}, {3, 77}}) {
    int64_t batch = bs.first, seq = bs.second;
    CUdeviceptr q = Alloc(batch * 32 * 128, 2, true);
    CUdeviceptr kc = Alloc(batch * seq * 32 * 128, 2, true), vc = Alloc(batch * seq * 32 * 128, 2, true);
    CUdeviceptr o = Alloc(batch * 32 * 128, 2, false);
    const DLTensor *Q = T(q, BF, 16, {batch, 32, 128}), *O = T(o, BF, 16, {batch, 32, 128});
    const DLTensor *Kc = T(kc, BF, 16, {batch, seq, 32, 128}), *Vc = T(vc, BF, 16, {batch, seq, 32, 128});
    size_t bytes = 0;
    CU(decode_attention_c_workspace_size(Q, Kc, Vc, &bytes));
    size_t partial = (size_t)batch * 32 * 8 * 128 * 4;
    if (bytes != partial + (size_t)batch * 32 * 8 * 4) {
      std::fprintf(stderr, "FAIL decode_attention workspace %zu bytes\n", bytes);
      ++g_failures;
    }
    CUdeviceptr ws = Alloc(bytes, 1, false);
    outs.push_back({o, batch * 32 * 128});
    cases.push_back({"decode_attention batch=" + std::to_string(batch) + " seq=" + std::to_string(seq),
                     [=] { return decode_attention_c(stream, Q, Kc, Vc, 0.088f, O, reinterpret_cast<void *>(ws), bytes); },
                     [=] {
                       CUresult r = decode_attention_decode_partial_kernel_default(
                           stream, q, kc, vc, ws, ws + partial, (int32_t)seq, (int32_t)((seq + 7) / 8), 0.088f,
                           (int32_t)(4096 * seq), 4096, 128, (int32_t)batch);
                       return r != CUDA_SUCCESS ? r : decode_attention_decode_reduce_kernel_default(stream, ws, ws + partial, o, (int32_t)batch);
                     }});
  }

  // Every call once, then the outputs that must be finite.
  for (const Case &c : cases) {
    CUresult r = c.entry();
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "FAIL %s: the C entry returned %d\n", c.name.c_str(), (int)r);
      ++g_failures;
    }
  }
  CU(g_cu.CtxSynchronize());
  for (auto &o : outs) {
    std::vector<uint16_t> host(o.second);
    CU(g_cu.MemcpyDtoH(host.data(), o.first, host.size() * 2));
    for (uint16_t h : host) {
      uint32_t bits = (uint32_t)h << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      if (!std::isfinite(v)) {
        std::fprintf(stderr, "FAIL decode_attention: a non-finite output\n");
        ++g_failures;
        break;
      }
    }
  }

  // Host overhead: the example size of each launcher (the first case of each).
  std::string out = "{\"overhead\": [";
  const char *sep = "";
  double worst = 0;
  for (size_t i = 0; i < cases.size(); i += 3) {
    double e = 0, r = 0, r2 = 0;
    Overhead(cases[i], std::max(iterations / 20, 1), 20, &e, &r, &r2);
    worst = std::max(worst, e / r);
    std::printf("%-40s C entry %7.2f us  raw entry points %7.2f us  ratio %.3f  "
                "(raw vs raw, same calls: %.3f)\n",
                cases[i].name.c_str(), e * 1e6, r * 1e6, e / r, r2 / r);
    char buf[320];
    std::snprintf(buf, sizeof buf, "%s{\"case\": \"%s\", \"entry_us\": %.3f, \"raw_us\": %.3f, \"ratio\": %.4f, \"raw_again_us\": %.3f}",
                  sep, cases[i].name.c_str(), e * 1e6, r * 1e6, e / r, r2 * 1e6);
    out += buf;
    sep = ", ";
  }
  out += "], \"failures\": " + std::to_string(g_failures) + "}\n";
  std::printf("worst ratio %.3f (target <= 1.10)\n", worst);
  if (json != nullptr) {
    FILE *f = std::fopen(json, "w");
    if (f != nullptr) {
      std::fputs(out.c_str(), f);
      std::fclose(f);
    }
  }
  for (auto &b : g_buffers) g_cu.MemFree(b.ptr);
  for (Tensor *t : keep) delete t;
  std::printf("%s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
