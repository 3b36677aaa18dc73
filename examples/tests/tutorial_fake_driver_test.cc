// tutorial_fake_driver_test: the libraries of kernels/03-matrix-multiplication.py (autotune configs from
// the generated matmul_tutorial_algos.bzl, heuristics, a None bias, string constexprs) against
// rules_triton's fake CUDA driver, CPU only. What each launch got (grid, block = num_warps * 32)
// is read from the fake's records. Exit code 0: pass; 1: a check failed; 2: the fake driver
// could not be opened.

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fake_cuda.h"
#include "kernels/bias_act.h"
#include "kernels/bias_act_nobias.h"
#include "kernels/tutorial_matmul.h"
#include "kernels/tutorial_matmul_leaky_relu.h"

namespace {

// The fake's launch record, from its own header (only the layout is used: the functions are
// reached with dlsym on the library the test is given).
using FakeLaunch = fake_cuda_launch;

int g_failures = 0;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    ++g_failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

}  // namespace

int main() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::printf("cannot open the fake libcuda.so.1 (LD_LIBRARY_PATH?): %s\n", dlerror());
    return 2;
  }
  auto reset = reinterpret_cast<void (*)()>(dlsym(lib, "fake_cuda_reset"));
  auto set_device = reinterpret_cast<void (*)(int, int, int, int)>(dlsym(lib, "fake_cuda_set_device"));
  auto create_context = reinterpret_cast<CUcontext (*)(int)>(dlsym(lib, "fake_cuda_create_context"));
  auto set_current = reinterpret_cast<void (*)(CUcontext)>(dlsym(lib, "fake_cuda_set_current"));
  auto num_launches = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_num_launches"));
  auto get_launch = reinterpret_cast<int (*)(int, FakeLaunch*)>(dlsym(lib, "fake_cuda_get_launch"));
  if (!reset || !set_device || !create_context || !set_current || !num_launches || !get_launch) {
    std::printf("the fake driver lacks its inspection functions\n");
    return 2;
  }
  reset();
  set_device(0, 9, 0, 232448);  // H100-like
  set_current(create_context(0));
  auto last = [&]() {
    FakeLaunch launch{};
    get_launch(num_launches() - 1, &launch);
    return launch;
  };

  // One algo per autotune config that prune_by_shared_memory keeps (5 of 8).
  Check(tutorial_matmul_get_num_algos() == 5, "5 algos from the pruned configs, got " +
                                                  std::to_string(tutorial_matmul_get_num_algos()));
  Check(std::strcmp(tutorial_matmul_get_algo_info(0),
                    "BLOCK_SIZE_M=128 BLOCK_SIZE_N=128 BLOCK_SIZE_K=32 GROUP_SIZE_M=8 ACTIVATION='' "
                    "num_warps=8 num_stages=4") == 0,
        std::string("algo 0 is config 0 with ACTIVATION's default: ") + tutorial_matmul_get_algo_info(0));
  Check(std::strstr(tutorial_matmul_leaky_relu_get_algo_info(4), "ACTIVATION='leaky_relu'") != nullptr,
        "the leaky_relu library fixes the string constexpr");
  const CUdeviceptr a = 0x100000, b = 0x200000, c = 0x300000, bias = 0x400000;
  for (int algo = 0; algo < tutorial_matmul_get_num_algos(); ++algo) {
    Check(tutorial_matmul(nullptr, a, b, c, 256, 256, 256, 256, 1, 256, 1, 256, 1, algo) == CUDA_SUCCESS,
          "tutorial_matmul algo " + std::to_string(algo));
  }
  // algo 4 is config 7: 64 x 64 tiles, 4 warps
  Check(last().grid[0] == 16 && last().block[0] == 4 * 32, "config 7: cdiv(256,64)^2 programs of 128 threads");

  // bias_act: the num_warps heuristic gives BLOCK // 256 warps (at least 1)
  Check(bias_act(nullptr, a, bias, c, 4096, 0) == CUDA_SUCCESS, "bias_act algo 0");
  Check(last().block[0] == 4 * 32 && last().grid[0] == 4, "BLOCK=1024: 4 warps, 4 programs");
  Check(bias_act(nullptr, a, bias, c, 4096, 1) == CUDA_SUCCESS, "bias_act algo 1");
  Check(last().block[0] == 32 && last().grid[0] == 16, "BLOCK=256: 1 warp, 16 programs");
  Check(std::strcmp(bias_act_get_algo_info(1),
                    "BLOCK=256 ACTIVATION='leaky_relu' num_warps=4 num_stages=1 heuristics: HAS_BIAS=True "
                    "num_warps=1") == 0,
        std::string("ACTIVATION per algo, HAS_BIAS and num_warps from the heuristics: ") +
            bias_act_get_algo_info(1));

  // bias_ptr = None: no bias argument in the C API (this call compiles with x, out, n only) nor
  // in the kernel; HAS_BIAS is False
  Check(bias_act_nobias(nullptr, a, c, 4096, 0) == CUDA_SUCCESS, "bias_act_nobias");
  Check(std::strstr(bias_act_nobias_get_algo_info(0), "bias_ptr=None") != nullptr &&
            std::strstr(bias_act_nobias_get_algo_info(0), "HAS_BIAS=False") != nullptr,
        std::string("nobias info: ") + bias_act_nobias_get_algo_info(0));

  if (g_failures == 0) std::printf("PASS: tutorial libraries against the fake driver\n");
  return g_failures == 0 ? 0 : 1;
}
