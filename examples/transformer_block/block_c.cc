// block_c: the transformer block's captured kernels (RMSNorm, causal attention, residual add,
// SwiGLU; bf16, hidden 1024, 16 heads of 64, SwiGLU 4096) called from C++ through their C
// entries over DLPack tensors, with no torch and no Python: each entry checks its tensors,
// reads the sizes off them and runs its launcher's launches (BUILD.bazel:
// triton_launcher_c_library). The projections between them are the block's matmul (not a
// captured launcher), so the program feeds each kernel its own inputs and checks every
// result against a CPU reference.
//
// Like //app:app it links neither libcuda nor the CUDA runtime: the driver is dlopen'ed.
// Exit codes: 0 all results match; 1 a mismatch; 2 a CUDA call failed; 77 no driver or no GPU.
// Usage: block_c [rows_per_batch]   (default 256, the example's sequence length)

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "transformer_block/add_c.h"
#include "transformer_block/attention_c.h"
#include "transformer_block/rms_norm_c.h"
#include "transformer_block/swiglu_c.h"

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
} g_cu;

template <typename F>
bool Resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  std::memcpy(out, &sym, sizeof sym);
  return sym != nullptr;
}

#define CU(call)                                                                             \
  do {                                                                                       \
    CUresult r_ = (call);                                                                    \
    if (r_ != CUDA_SUCCESS) {                                                                \
      std::fprintf(stderr, "block_c: %s failed: CUresult %d\n", #call, static_cast<int>(r_)); \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)

float Bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {  // round to nearest even, as torch does
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// A bf16 tensor on the host and the device; its DLTensor has the given shape and strides
// (row-major when none are given) over the same device buffer.
struct Tensor {
  std::vector<uint16_t> host;
  CUdeviceptr dev = 0;
  std::vector<int64_t> shape, strides;
  DLTensor dl;

  Tensor(std::vector<int64_t> shape_, size_t elements, float scale, uint32_t seed)
      : host(elements), shape(std::move(shape_)) {
    for (auto &h : host) {
      seed = seed * 1664525u + 1013904223u;
      h = FloatToBf16(scale * (static_cast<float>((seed >> 8) & 0xffff) / 32768.0f - 1.0f));
    }
    CU(g_cu.MemAlloc(&dev, std::max<size_t>(elements * 2, 2)));
    CU(g_cu.MemcpyHtoD(dev, host.data(), elements * 2));
    View(shape, {}, 0);
  }
  ~Tensor() { g_cu.MemFree(dev); }

  // This tensor's DLTensor, or a view of it (`offset` elements in, with `strides`).
  DLTensor *View(std::vector<int64_t> view_shape, std::vector<int64_t> view_strides, int64_t offset) {
    shape = std::move(view_shape);
    strides = std::move(view_strides);
    std::memset(&dl, 0, sizeof dl);
    dl.data = reinterpret_cast<void *>(dev);
    dl.byte_offset = static_cast<uint64_t>(offset) * 2;
    dl.device.device_type = kDLCUDA;
    dl.device.device_id = 0;
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype.code = kDLBfloat;
    dl.dtype.bits = 16;
    dl.dtype.lanes = 1;
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
    return &dl;
  }
  void Download() { CU(g_cu.MemcpyDtoH(host.data(), dev, host.size() * 2)); }
  float At(size_t i) const { return Bf16ToFloat(host[i]); }
};

int g_mismatches = 0;

void Expect(const char *what, float got, float want, float tolerance) {
  if (!(std::fabs(got - want) <= tolerance * (1.0f + std::fabs(want)))) {
    if (g_mismatches < 10) std::fprintf(stderr, "block_c: %s: got %g, want %g\n", what, got, want);
    ++g_mismatches;
  }
}

}  // namespace

int main(int argc, char **argv) {
  const int64_t batch = 2, seq = argc > 1 ? std::atoll(argv[1]) : 256, hidden = 1024, heads = 16,
                head_dim = 64, ffn = 4096, rows = batch * seq;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::printf("block_c: no CUDA driver on this machine; skipped\n");
    return 77;
  }
  bool ok = Resolve(lib, "cuInit", &g_cu.Init) && Resolve(lib, "cuDeviceGet", &g_cu.DeviceGet) &&
            Resolve(lib, "cuDevicePrimaryCtxRetain", &g_cu.DevicePrimaryCtxRetain) &&
            Resolve(lib, "cuCtxSetCurrent", &g_cu.CtxSetCurrent) &&
            Resolve(lib, "cuCtxSynchronize", &g_cu.CtxSynchronize) &&
            Resolve(lib, "cuMemAlloc_v2", &g_cu.MemAlloc) && Resolve(lib, "cuMemFree_v2", &g_cu.MemFree) &&
            Resolve(lib, "cuMemcpyHtoD_v2", &g_cu.MemcpyHtoD) &&
            Resolve(lib, "cuMemcpyDtoH_v2", &g_cu.MemcpyDtoH);
  CUdevice dev;
  CUcontext ctx;
  if (!ok || g_cu.Init(0) != CUDA_SUCCESS || g_cu.DeviceGet(&dev, 0) != CUDA_SUCCESS) {
    std::printf("block_c: no usable GPU; skipped\n");
    return 77;
  }
  CU(g_cu.DevicePrimaryCtxRetain(&ctx, dev));
  CU(g_cu.CtxSetCurrent(ctx));
  CUstream stream = nullptr;
  {
    // RMSNorm (Liger's, llama casting): y = x / rms(x) * w, and 1 / rms per row.
    Tensor x({rows, hidden}, rows * hidden, 2.0f, 1), w({hidden}, hidden, 1.0f, 2);
    Tensor y({rows, hidden}, rows * hidden, 0.0f, 3);
    std::vector<float> rstd(rows);
    CUdeviceptr rstd_dev;
    CU(g_cu.MemAlloc(&rstd_dev, rows * 4));
    int64_t rstd_shape[1] = {rows};
    DLTensor rstd_dl = {};
    rstd_dl.data = reinterpret_cast<void *>(rstd_dev);
    rstd_dl.device.device_type = kDLCUDA;
    rstd_dl.ndim = 1;
    rstd_dl.dtype.code = kDLFloat;
    rstd_dl.dtype.bits = 32;
    rstd_dl.dtype.lanes = 1;
    rstd_dl.shape = rstd_shape;
    CU(rms_norm_c(stream, &x.dl, &w.dl, 1e-6f, 0.0f, &y.dl, &rstd_dl, nullptr, 0));

    // Causal attention over q, k, v as views of one (batch, seq, 3, heads, 64) projection.
    Tensor qkv({batch, seq, 3, heads, head_dim}, batch * seq * 3 * heads * head_dim, 1.0f, 4);
    Tensor o({batch, seq, heads, head_dim}, batch * seq * heads * head_dim, 0.0f, 5);
    const std::vector<int64_t> view_shape = {batch, seq, heads, head_dim};
    const std::vector<int64_t> view_strides = {seq * 3 * heads * head_dim, 3 * heads * head_dim, head_dim, 1};
    DLTensor qv = *qkv.View(view_shape, view_strides, 0);
    int64_t qshape[4] = {batch, seq, heads, head_dim}, qstrides[4];
    std::copy(view_strides.begin(), view_strides.end(), qstrides);
    qv.shape = qshape;
    qv.strides = qstrides;
    DLTensor kv = qv, vv = qv;
    kv.byte_offset = heads * head_dim * 2;
    vv.byte_offset = 2 * heads * head_dim * 2;
    CU(attention_c(stream, &qv, &kv, &vv, 0.125f, &o.dl, nullptr, 0));

    // The residual add: x + the attention's output as [rows, hidden].
    Tensor sum({rows, hidden}, rows * hidden, 0.0f, 6);
    DLTensor o2 = o.dl;
    int64_t o2shape[2] = {rows, hidden};
    o2.ndim = 2;
    o2.shape = o2shape;
    o2.strides = nullptr;
    CU(add_c(stream, &x.dl, &o2, &sum.dl, nullptr, 0));

    // SwiGLU: silu(gate) * up.
    Tensor gate({rows, ffn}, rows * ffn, 3.0f, 7), up({rows, ffn}, rows * ffn, 1.0f, 8);
    Tensor act({rows, ffn}, rows * ffn, 0.0f, 9);
    CU(swiglu_c(stream, &gate.dl, &up.dl, 1.0f, &act.dl, nullptr, 0));

    // A refusal: the add with the attention output's rows off by one launches nothing.
    o2shape[0] = rows - 1;
    if (add_c(stream, &x.dl, &o2, &sum.dl, nullptr, 0) != CUDA_ERROR_INVALID_VALUE) {
      std::fprintf(stderr, "block_c: add_c took mismatched rows\n");
      ++g_mismatches;
    }
    CU(g_cu.CtxSynchronize());
    y.Download();
    o.Download();
    sum.Download();
    act.Download();
    CU(g_cu.MemcpyDtoH(rstd.data(), rstd_dev, rows * 4));
    CU(g_cu.MemFree(rstd_dev));

    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t c = 0; c < hidden; ++c) ss += double(x.At(r * hidden + c)) * x.At(r * hidden + c);
      float inv = static_cast<float>(1.0 / std::sqrt(ss / hidden + 1e-6));
      Expect("rms_norm rstd", rstd[r], inv, 1e-3f);
      for (int64_t c = 0; c < hidden; c += 61)
        Expect("rms_norm y", y.At(r * hidden + c), x.At(r * hidden + c) * inv * w.At(c), 2e-2f);
      for (int64_t c = 0; c < hidden; c += 37)
        Expect("add", sum.At(r * hidden + c), x.At(r * hidden + c) + o.At(r * hidden + c), 1e-2f);
      for (int64_t c = 0; c < ffn; c += 97) {
        float g = gate.At(r * ffn + c);
        Expect("swiglu", act.At(r * ffn + c), g / (1.0f + std::exp(-g)) * up.At(r * ffn + c), 2e-2f);
      }
    }
    // Attention: a few query rows of each head, against softmax(q k^T / 8) v over keys <= row.
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; h += 5) {
        for (int64_t s : {int64_t(0), seq / 3, seq - 1}) {
          auto at = [&](int which, int64_t t, int64_t d) {
            return qkv.At(((b * seq + t) * 3 + which) * heads * head_dim + h * head_dim + d);
          };
          std::vector<double> p(s + 1);
          double m = -1e30, z = 0;
          for (int64_t t = 0; t <= s; ++t) {
            double dot = 0;
            for (int64_t d = 0; d < head_dim; ++d) dot += double(at(0, s, d)) * at(1, t, d);
            p[t] = dot * 0.125;
            m = std::max(m, p[t]);
          }
          for (auto &e : p) z += (e = std::exp(e - m));
          for (int64_t d = 0; d < head_dim; ++d) {
            double want = 0;
            for (int64_t t = 0; t <= s; ++t) want += p[t] / z * at(2, t, d);
            Expect("attention", o.At(((b * seq + s) * heads + h) * head_dim + d), float(want), 2e-2f);
          }
        }
      }
    }
  }
  if (g_mismatches) {
    std::printf("block_c: %d mismatches\n", g_mismatches);
    return 1;
  }
  std::printf("block_c: RMSNorm, attention, add and SwiGLU through their C entries match the CPU "
              "(batch %lld, seq %lld)\n", static_cast<long long>(batch), static_cast<long long>(seq));
  return 0;
}
