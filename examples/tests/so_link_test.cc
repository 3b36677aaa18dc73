// so_link_test: links against libexample_kernels.so (cc_shared_library, via dynamic_deps) rather
// than the static kernel libraries, and checks that the API is resolved from that .so.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "kernels/add.h"
#include "kernels/big_smem.h"
#include "kernels/matmul.h"
#include "kernels/scalars.h"
#include "kernels/scale.h"
#include "kernels/softmax.h"

namespace {
int failures = 0;

void FromSharedLibrary(const void *fn, const char *name) {
  Dl_info info;
  std::memset(&info, 0, sizeof info);
  const bool found = dladdr(fn, &info) != 0 && info.dli_fname != nullptr;
  const bool ok = found && std::strstr(info.dli_fname, "libexample_kernels.so") != nullptr;
  std::printf("%s %s: defined in %s\n", ok ? "ok  " : "FAIL", name, found ? info.dli_fname : "?");
  if (!ok) ++failures;
}
}  // namespace

int main() {
  FromSharedLibrary(reinterpret_cast<const void *>(&matmul), "matmul");
  FromSharedLibrary(reinterpret_cast<const void *>(&add_default), "add_default");
  FromSharedLibrary(reinterpret_cast<const void *>(&load_big_smem), "load_big_smem");
  FromSharedLibrary(reinterpret_cast<const void *>(&unload_scalars), "unload_scalars");
  FromSharedLibrary(reinterpret_cast<const void *>(&scale_get_num_algos), "scale_get_num_algos");
  FromSharedLibrary(reinterpret_cast<const void *>(&softmax_get_algo_info), "softmax_get_algo_info");
  if (matmul_get_num_algos() != 4 || softmax_get_num_algos() != 3) {
    std::printf("FAIL: unexpected algo counts\n");
    ++failures;
  }
  std::printf("so_link_test: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
