// fake_driver_test: the example libraries against rules_triton's fake CUDA driver, on a CPU-only
// machine. The fake libcuda.so.1 is found by the generated code's own dlopen through
// LD_LIBRARY_PATH (fake_driver_test.sh sets it); the generated code has no test hooks.
//
// Which variant ran is read from the fake's records: it hashes every real cubin it loads
// (FNV-1a), and this test hashes the cubin files of the `cubin` output group given on the
// command line, so "matmul_a0_s1_sm80 launched" is checked byte for byte.
//
// Exit code 0: pass; 1: a check failed; 2: the fake driver could not be opened.

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fake_cuda.h"
#include "kernels/add.h"
#include "kernels/attention_tma.h"
#include "kernels/big_smem.h"
#include "kernels/matmul.h"
#include "kernels/matmul_tma.h"
#include "kernels/scale.h"

namespace {

// The fake's inspection records, from its own header (tests/fake_cuda/fake_cuda.h): only the
// layouts are used; the functions are reached with dlsym on the same libcuda.so.1 the generated
// code opened.
using FakeLoad = fake_cuda_load;
using FakeLaunch = fake_cuda_launch;
using FakeTmaEncode = fake_cuda_tma_encode;

struct Fake {
  int (*num_tma_encodes)();
  int (*get_tma_encode)(int, FakeTmaEncode*);
  void (*reset)();
  void (*set_device)(int, int, int, int);
  CUcontext (*create_context)(int);
  void (*set_current)(CUcontext);
  int (*num_loads)();
  int (*get_load)(int, FakeLoad*);
  int (*num_launches)();
  int (*get_launch)(int, FakeLaunch*);
  int (*call_count)(const char*);
};

int g_failures = 0;
int g_checks = 0;

void Check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

// FNV-1a of the first `size` bytes: the fake hashes the ELF image's extent (headers, sections),
// which can stop short of the file's end.
uint64_t Fnv1a64(const std::vector<unsigned char>& bytes, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size && i < bytes.size(); ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

struct Cubin {
  std::string name;
  std::vector<unsigned char> bytes;
};

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

// Variant symbol (e.g. "matmul_a0_s0_sm90") of the last launch, from its cubin's hash.
std::string LastLaunchedVariant(const Fake& fake, const std::vector<Cubin>& cubins) {
  int n = fake.num_launches();
  if (n == 0) return "<no launch>";
  FakeLaunch launch{};
  fake.get_launch(n - 1, &launch);
  for (int i = 0; i < fake.num_loads(); ++i) {
    FakeLoad load{};
    fake.get_load(i, &load);
    if (load.module_id != launch.module_id) continue;
    std::string names;
    for (const Cubin& cubin : cubins) {
      if (cubin.bytes.size() >= load.elf_size && Fnv1a64(cubin.bytes, load.elf_size) == load.elf_fnv1a64)
        names += (names.empty() ? "" : "|") + cubin.name;
    }
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", load.elf_fnv1a64);
    return names.empty() ? "<unknown image: " + std::to_string(load.elf_size) + " bytes, fnv " + hex + ">" : names;
  }
  return "<no load>";
}

template <typename T>
bool Resolve(void* lib, const char* name, T* out) {
  *out = reinterpret_cast<T>(dlsym(lib, name));
  if (*out == nullptr) std::printf("fake driver lacks %s\n", name);
  return *out != nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Cubin> cubins;
  std::map<uint64_t, int> by_hash;
  for (int i = 1; i < argc; ++i) {
    std::ifstream file(argv[i], std::ios::binary);
    Cubin cubin{Basename(argv[i]), std::vector<unsigned char>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>())};
    by_hash[Fnv1a64(cubin.bytes, cubin.bytes.size())] += 1;
    cubins.push_back(cubin);
  }
  Check(argc - 1 == 24, "24 matmul cubins given on the command line, got " + std::to_string(argc - 1));
  // Distinct specialisations must be distinct code, or the dispatch below proves nothing.
  Check(by_hash.size() == 24, "24 distinct matmul cubins, got " + std::to_string(by_hash.size()));

  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::printf("cannot open the fake libcuda.so.1 (LD_LIBRARY_PATH?): %s\n", dlerror());
    return 2;
  }
  Fake fake{};
  if (!Resolve(lib, "fake_cuda_reset", &fake.reset) || !Resolve(lib, "fake_cuda_set_device", &fake.set_device) ||
      !Resolve(lib, "fake_cuda_create_context", &fake.create_context) ||
      !Resolve(lib, "fake_cuda_set_current", &fake.set_current) || !Resolve(lib, "fake_cuda_num_loads", &fake.num_loads) ||
      !Resolve(lib, "fake_cuda_get_load", &fake.get_load) || !Resolve(lib, "fake_cuda_num_launches", &fake.num_launches) ||
      !Resolve(lib, "fake_cuda_get_launch", &fake.get_launch) || !Resolve(lib, "fake_cuda_call_count", &fake.call_count) ||
      !Resolve(lib, "fake_cuda_num_tma_encodes", &fake.num_tma_encodes) ||
      !Resolve(lib, "fake_cuda_get_tma_encode", &fake.get_tma_encode)) {
    return 2;
  }

  fake.reset();
  fake.set_device(0, 9, 0, 232448);  // H100-like
  fake.set_device(1, 8, 0, 166912);  // A100-like
  fake.set_device(2, 8, 6, 101376);  // sm_86: runs sm_80 cubins
  fake.set_device(3, 7, 5, 65536);   // sm_75: no binary
  fake.set_device(4, 9, 0, 49152);   // sm_90 without the shared-memory opt-in big_smem needs
  CUcontext ctx[5];
  for (int d = 0; d < 5; ++d) ctx[d] = fake.create_context(d);

  const CUdeviceptr a = 0x100000, b = 0x200000, c = 0x300000;  // 16-byte aligned
  const int M = 64, N = 64, K = 64;

  struct Case {
    int device;
    CUdeviceptr a;
    int stride_am, stride_ak;
    const char* expected;
  };
  const Case cases[] = {
      // contiguous, aligned, K % 16 == 0, unit inner strides: the most specialised variant
      {0, a, K, 1, "matmul_a0_s0_sm90"},
      // A one fp16 element into an allocation (misaligned), still unit inner strides
      {0, a + 2, K, 1, "matmul_a0_s1_sm90"},
      // A transposed (stride_ak != 1): the generic variant
      {0, a, 1, M, "matmul_a0_s2_sm90"},
      {1, a, K, 1, "matmul_a0_s0_sm80"},
      {1, a + 2, K, 1, "matmul_a0_s1_sm80"},
      {1, a, 1, M, "matmul_a0_s2_sm80"},
      // sm_86 takes the highest lower SM of the same major
      {2, a, K, 1, "matmul_a0_s0_sm80"},
  };
  for (const Case& t : cases) {
    fake.set_current(ctx[t.device]);
    CUresult r = matmul(nullptr, t.a, b, c, M, N, K, t.stride_am, t.stride_ak, N, 1, N, 1, 0);
    Check(r == CUDA_SUCCESS, std::string("matmul for ") + t.expected + " returned " + std::to_string(r));
    std::string got = LastLaunchedVariant(fake, cubins);
    Check(got == t.expected, std::string("expected ") + t.expected + ", launched " + got);
  }

  // Every algo launches its own cubin with its own block size.
  fake.set_current(ctx[0]);
  for (int algo = 0; algo < matmul_get_num_algos(); ++algo) {
    Check(matmul(nullptr, a, b, c, M, N, K, K, 1, N, 1, N, 1, algo) == CUDA_SUCCESS, "matmul algo " + std::to_string(algo));
    std::string expected = "matmul_a" + std::to_string(algo) + "_s0_sm90";
    Check(LastLaunchedVariant(fake, cubins) == expected, "algo " + std::to_string(algo) + " launched " + expected);
  }
  FakeLaunch last{};
  fake.get_launch(fake.num_launches() - 1, &last);
  Check(last.block[0] == 2 * 32, "last matmul algo launches num_warps(2) * 32 threads, got " + std::to_string(last.block[0]));
  Check(last.grid[0] == 4 && last.grid[1] == 1, "grid cdiv(64,32)*cdiv(64,32) = 4");

  // Errors launch nothing.
  int launches = fake.num_launches();
  Check(matmul(nullptr, a, b, c, M, N, K, K, 1, N, 1, N, 1, matmul_get_num_algos()) == CUDA_ERROR_INVALID_VALUE,
        "algo_id == num_algos is rejected");
  Check(matmul(nullptr, a, b, c, M, N, K, K, 1, N, 1, N, 1, -1) == CUDA_ERROR_INVALID_VALUE, "algo_id -1 is rejected");
  Check(matmul(nullptr, a, b, c, 0, N, K, K, 1, N, 1, N, 1, 0) == CUDA_SUCCESS, "empty grid (M = 0) succeeds");
  Check(fake.num_launches() == launches, "no launch for bad algo ids or an empty grid");

  fake.set_current(ctx[3]);
  Check(matmul(nullptr, a, b, c, M, N, K, K, 1, N, 1, N, 1, 0) == CUDA_ERROR_NO_BINARY_FOR_GPU,
        "sm_75 has no binary: CUDA_ERROR_NO_BINARY_FOR_GPU");
  fake.set_current(ctx[1]);
  Check(big_smem(nullptr, a, b, 128, 128, 128, 128, 0) == CUDA_ERROR_NO_BINARY_FOR_GPU,
        "big_smem is built for sm_90 only: none for sm_80");

  // > 48 KiB of shared memory: opted in where the device allows it, refused where it does not.
  fake.set_current(ctx[0]);
  Check(big_smem(nullptr, a, b, 128, 128, 128, 128, 0) == CUDA_SUCCESS, "big_smem on sm_90 (227 KiB opt-in)");
  fake.get_launch(fake.num_launches() - 1, &last);
  Check(last.shared > 49152, "big_smem launches with > 48 KiB dynamic shared memory: " + std::to_string(last.shared));
  Check(fake.call_count("cuFuncSetAttribute") >= 1, "big_smem opted in with cuFuncSetAttribute");
  launches = fake.num_launches();
  fake.set_current(ctx[4]);
  Check(big_smem(nullptr, a, b, 128, 128, 128, 128, 0) == CUDA_ERROR_NOT_SUPPORTED,
        "big_smem where the device cannot give the shared memory: CUDA_ERROR_NOT_SUPPORTED");
  Check(fake.num_launches() == launches, "...and nothing launched");

  // One module load per context: a second call in the same context loads nothing new.
  fake.set_current(ctx[0]);
  int loads = fake.num_loads();
  Check(add(nullptr, a, b, c, 1024, 0) == CUDA_SUCCESS, "add");
  int after_first = fake.num_loads();
  Check(add(nullptr, a, b, c, 1024, 0) == CUDA_SUCCESS, "add again");
  Check(after_first == loads + 1 && fake.num_loads() == after_first, "add loads its module once per context");
  Check(scale(nullptr, a, c, 3.0f, 1000, 0) == CUDA_SUCCESS, "scale with an fp32 scalar");

  // Host tensor descriptors (TMA): the encodes Triton's compile decided (fp16, 128-byte swizzle,
  // the block shapes as boxes), innermost dimension first, reused while the arguments stay.
  {
    fake.set_current(ctx[0]);
    const int Z = 2, H = 3, NC = 256, D = 64;
    const long long rows = (long long)Z * H * NC;
    const CUdeviceptr q = 0x1000000, k = 0x2000000, v = 0x3000000, o = 0x4000000;
    int encodes = fake.num_tma_encodes();
    auto attention = [&](CUdeviceptr qb, int algo) {
      return attention_tma(nullptr, qb, rows, D, D, 1, k, rows, D, D, 1, v, rows, D, D, 1, o, rows, D, D, 1,
                           0.125f, Z, H, NC, algo);
    };
    Check(attention(q, 0) == CUDA_SUCCESS, "attention_tma launches");
    Check(fake.num_tma_encodes() == encodes + 4, "attention_tma encodes its 4 descriptors");
    const unsigned int boxes[4][2] = {{64, 128}, {64, 64}, {64, 64}, {64, 128}};  // {HEAD_DIM, rows}
    const CUdeviceptr bases[4] = {q, k, v, o};
    for (int i = 0; i < 4 && fake.num_tma_encodes() == encodes + 4; ++i) {
      FakeTmaEncode e{};
      fake.get_tma_encode(encodes + i, &e);
      std::string what = "attention_tma descriptor " + std::to_string(i);
      Check(e.data_type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && e.rank == 2 && e.address == bases[i], what + ": fp16, rank 2, base");
      Check(e.dims[0] == (unsigned long long)D && e.dims[1] == (unsigned long long)rows, what + ": dims innermost first");
      Check(e.strides[0] == 2ull * D, what + ": row stride in bytes");
      Check(e.box[0] == boxes[i][0] && e.box[1] == boxes[i][1], what + ": box = block shape");
      Check(e.swizzle == CU_TENSOR_MAP_SWIZZLE_128B && e.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE &&
                e.l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B && e.oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE &&
                e.elem_strides[0] == 1 && e.elem_strides[1] == 1,
            what + ": swizzle 128B, as Triton's launcher fills the rest");
    }
    FakeLaunch l{};
    fake.get_launch(fake.num_launches() - 1, &l);
    Check(l.grid[0] == NC / 128 && l.grid[1] == Z * H && l.block[0] == 8 * 32, "attention_tma grid (N_CTX/128, Z*H), 8 warps");
    Check(attention(q, 1) == CUDA_SUCCESS && fake.num_tma_encodes() == encodes + 8,
          "the causal algo's launcher has its own cached maps");
    Check(attention(q, 1) == CUDA_SUCCESS && attention(q, 1) == CUDA_SUCCESS && fake.num_tma_encodes() == encodes + 8,
          "repeated calls reuse the maps (no encode)");
    Check(attention(q + 2 * D * NC, 1) == CUDA_SUCCESS && fake.num_tma_encodes() == encodes + 9,
          "a new Q pointer: only Q is encoded again");
    int launches_before = fake.num_launches();
    Check(attention(q + 8, 0) == CUDA_ERROR_INVALID_VALUE, "a Q base that is not 16-byte aligned is refused");
    Check(matmul_tma(nullptr, q, 100, 30, 30, 1, k, 30, 64, 64, 1, o, 100, 64, 64, 1, 100, 64, 30, 0) ==
              CUDA_ERROR_INVALID_VALUE,
          "matmul_tma: A rows of 30 fp16 (60 bytes) are not a multiple of 16 bytes: refused");
    Check(fake.num_launches() == launches_before && fake.num_tma_encodes() == encodes + 9, "...nothing encoded or launched");

    encodes = fake.num_tma_encodes();
    const int M = 200, N = 136, K = 72;  // not multiples of the tiles: TMA pads the edges
    Check(matmul_tma(nullptr, q, M, K, K, 1, k, K, N, N, 1, o, M, N, N, 1, M, N, K, 0) == CUDA_SUCCESS, "matmul_tma launches");
    Check(fake.num_tma_encodes() == encodes + 3, "matmul_tma encodes A, B, C");
    // Triton splits a row wider than the 128-byte swizzle (128 fp16 of B's and C's blocks) into
    // 64-element boxes: the boxes come from its metadata, not from the signature's block shapes.
    const unsigned int mm_boxes[3][2] = {{64, 128}, {64, 64}, {64, 128}};
    for (int i = 0; i < 3 && fake.num_tma_encodes() == encodes + 3; ++i) {
      FakeTmaEncode e{};
      fake.get_tma_encode(encodes + i, &e);
      Check(e.box[0] == mm_boxes[i][0] && e.box[1] == mm_boxes[i][1] && e.swizzle == CU_TENSOR_MAP_SWIZZLE_128B,
            "matmul_tma descriptor " + std::to_string(i) + ": box and swizzle");
    }
    fake.get_launch(fake.num_launches() - 1, &l);
    Check(l.grid[0] == 2 * 2, "matmul_tma grid cdiv(200,128)*cdiv(136,128)");
    // algo 1 has 128 x 64 tiles: B's and C's descriptors get that algo's block shapes
    encodes = fake.num_tma_encodes();
    Check(matmul_tma(nullptr, q, M, K, K, 1, k, K, N, N, 1, o, M, N, N, 1, M, N, K, 1) == CUDA_SUCCESS, "matmul_tma algo 1");
    Check(fake.num_tma_encodes() == encodes + 3, "matmul_tma algo 1 encodes its own maps");
    const unsigned int mm1_boxes[3][2] = {{64, 128}, {64, 64}, {64, 128}};
    for (int i = 0; i < 3 && fake.num_tma_encodes() == encodes + 3; ++i) {
      FakeTmaEncode e{};
      fake.get_tma_encode(encodes + i, &e);
      Check(e.box[0] == mm1_boxes[i][0] && e.box[1] == mm1_boxes[i][1], "matmul_tma algo 1 descriptor " + std::to_string(i) + ": box");
    }
    fake.get_launch(fake.num_launches() - 1, &l);
    Check(l.grid[0] == 2 * 3 && l.block[0] == 4 * 32, "matmul_tma algo 1 grid cdiv(200,128)*cdiv(136,64), 4 warps");
  }

  std::printf("fake_driver_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
