/* Launch features of the `feat` library (one algo per feature, sm_90): cuLaunchKernelEx iff
 * clusters/cooperative/PDL, stream-ordered scratch, shared-memory opt-in, failure paths. */
#include <stdint.h>

#include LIB_HEADER
#include "fake_util.h"

#define OUT ((CUdeviceptr)0x200000)
enum { PLAIN, CLUSTER, COOP, PDL, SCRATCH, SMEM100K, SMEM200K, CLUSTER16, SMEM48K };

static fake_cuda_launch launch_ok(int algo, int n) {
  int before = fake_cuda_num_launches();
  CHECK_EQ(feat((CUstream)0x5678, OUT, n, algo), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_num_launches(), before + 1);
  return last_launch();
}

static int count_attr(const char *tag, CUfunction_attribute attrib, int value) {
  int i, n = 0;
  for (i = 0; i < fake_cuda_num_attr_events(); ++i) {
    fake_cuda_attr_event e;
    CHECK(fake_cuda_get_attr_event(i, &e));
    if (strcmp(e.tag, tag) == 0 && e.attrib == attrib && e.value == value) ++n;
  }
  return n;
}

int main(void) {
  fake_cuda_launch l;
  CUcontext ctx, small;
  fake_cuda_reset();
  fake_cuda_set_device(0, 9, 0, 232448);
  fake_cuda_set_device(1, 9, 0, 166912); /* same SM, smaller opt-in limit */
  ctx = fake_cuda_create_context(0);
  small = fake_cuda_create_context(1);
  fake_cuda_set_current(ctx);

  l = launch_ok(PLAIN, 3);
  CHECK_STR(l.tag, "feat_plain");
  CHECK_EQ(l.ex, 0);
  CHECK_EQ(l.grid[0], 3);
  CHECK_EQ(l.grid[1], 2);
  CHECK_EQ(l.block[0], 128);
  CHECK_EQ(fake_cuda_call_count("cuLaunchKernelEx"), 0);

  /* num_ctas=2: grid x counts CTAs (clusters * 2), as Triton's launcher does */
  l = launch_ok(CLUSTER, 3);
  CHECK_EQ(l.ex, 1);
  CHECK_EQ(l.grid[0], 6);
  CHECK_EQ(l.grid[1], 2);
  CHECK_EQ(l.num_attrs, 2);
  CHECK_EQ(l.cluster[0], 2);
  CHECK_EQ(l.cluster[1], 1);
  CHECK_EQ(l.cluster[2], 1);
  CHECK_EQ(l.cluster_policy, CU_CLUSTER_SCHEDULING_POLICY_SPREAD);
  CHECK_EQ(l.cooperative, -1);
  CHECK_EQ(l.pdl, -1);
  CHECK_EQ(count_attr("feat_cluster", CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), 0);

  l = launch_ok(COOP, 3);
  CHECK_EQ(l.ex, 1);
  CHECK_EQ(l.num_attrs, 1);
  CHECK_EQ(l.cooperative, 1);
  CHECK_EQ(l.grid[0], 3);

  l = launch_ok(PDL, 3);
  CHECK_EQ(l.ex, 1);
  CHECK_EQ(l.num_attrs, 1);
  CHECK_EQ(l.pdl, 1);

  l = launch_ok(CLUSTER16, 1);
  CHECK_EQ(l.ex, 1);
  CHECK_EQ(l.cluster[0], 16);
  CHECK_EQ(l.grid[0], 16);
  CHECK_EQ(count_attr("feat_cluster16", CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), 1);

  /* scratch under CUDA-graph capture (not reused: scratch.c tests the reusable buffer):
   * 96 B/CTA aligned to 512 (over-allocated), 32 B/CTA profile aligned to 128;
   * 5 x 2 CTAs. Allocated on the launch stream before the launch, freed after it. */
  fake_cuda_set_capturing((CUstream)0x5678, 1);
  fake_cuda_set_capturing(NULL, 1);
  {
    int m0 = fake_cuda_num_mem_events();
    fake_cuda_mem_event ga, pa, pf, gf;
    CUdeviceptr gptr;
    l = launch_ok(SCRATCH, 5);
    CHECK_EQ(l.ex, 0);
    CHECK_EQ(fake_cuda_num_mem_events(), m0 + 4);
    CHECK(fake_cuda_get_mem_event(m0, &ga));
    CHECK(fake_cuda_get_mem_event(m0 + 1, &pa));
    CHECK(fake_cuda_get_mem_event(m0 + 2, &pf));
    CHECK(fake_cuda_get_mem_event(m0 + 3, &gf));
    CHECK(!ga.is_free && !pa.is_free && pf.is_free && gf.is_free);
    CHECK_EQ(ga.bytes, 96 * 10 + 511);
    CHECK_EQ(pa.bytes, 32 * 10);
    CHECK_EQ((uintptr_t)ga.stream, 0x5678);
    CHECK_EQ((uintptr_t)pa.stream, 0x5678);
    CHECK_EQ((uintptr_t)pf.stream, 0x5678);
    CHECK_EQ((uintptr_t)gf.stream, 0x5678);
    CHECK(ga.seq < l.seq && pa.seq < l.seq && l.seq < pf.seq && l.seq < gf.seq);
    CHECK_EQ(gf.ptr, ga.ptr);
    CHECK_EQ(pf.ptr, pa.ptr);
    gptr = (ga.ptr + 511) & ~(CUdeviceptr)511;
    CHECK_EQ(l.num_params, 2 + 2);
    CHECK_EQ(param_u64(&l, 0), OUT);
    CHECK_EQ(param_u64(&l, 1), 5);
    CHECK_EQ(param_u64(&l, 2), gptr); /* global_scratch, aligned */
    CHECK_EQ(param_u64(&l, 3), pa.ptr); /* profile_scratch */
    CHECK_EQ(fake_cuda_live_allocations(), 0);
    /* no scratch for kernels that need none */
    l = launch_ok(PLAIN, 5);
    CHECK_EQ(param_u64(&l, 2), 0);
    CHECK_EQ(fake_cuda_num_mem_events(), m0 + 4);
  }
  /* allocation failures: error returned, nothing launched, nothing leaked */
  {
    int n0 = fake_cuda_num_launches();
    fake_cuda_fail("cuMemAllocAsync", CUDA_ERROR_OUT_OF_MEMORY, 1); /* global scratch */
    CHECK_EQ(feat(NULL, OUT, 5, SCRATCH), CUDA_ERROR_OUT_OF_MEMORY);
    fake_cuda_fail_after("cuMemAllocAsync", 1, CUDA_ERROR_OUT_OF_MEMORY, 1); /* profile scratch */
    CHECK_EQ(feat(NULL, OUT, 5, SCRATCH), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(fake_cuda_num_launches(), n0);
    CHECK_EQ(fake_cuda_live_allocations(), 0);
  }
  /* launch failure: error returned, scratch still freed */
  fake_cuda_fail("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
  CHECK_EQ(feat(NULL, OUT, 5, SCRATCH), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  CHECK_EQ(fake_cuda_live_allocations(), 0);
  CHECK_EQ(feat(NULL, OUT, 5, SCRATCH), CUDA_SUCCESS);
  fake_cuda_set_capturing((CUstream)0x5678, 0);
  fake_cuda_set_capturing(NULL, 0);

  /* > 48 KiB shared memory: opt-in attribute set to the kernel's size, launch with it */
  l = launch_ok(SMEM100K, 2);
  CHECK_EQ(l.shared, 100 * 1024);
  CHECK_EQ(count_attr("feat_smem100k", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024), 1);
  l = launch_ok(SMEM200K, 2);
  CHECK_EQ(l.shared, 200 * 1024);
  /* exactly 48 KiB needs no opt-in */
  l = launch_ok(SMEM48K, 2);
  CHECK_EQ(l.shared, 48 * 1024);
  CHECK_EQ(count_attr("feat_smem48k", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 * 1024), 0);

  /* a device whose opt-in limit is below the kernel's need: NOT_SUPPORTED, no load, no launch */
  fake_cuda_set_current(small);
  {
    int n0 = fake_cuda_num_launches(), loads = fake_cuda_num_loads();
    CHECK_EQ(feat(NULL, OUT, 2, SMEM200K), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(feat(NULL, OUT, 2, SMEM200K), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(fake_cuda_num_launches(), n0);
    CHECK_EQ(fake_cuda_num_loads(), loads);
    /* the rest of the library still works there */
    l = launch_ok(SMEM100K, 2);
    CHECK(l.ctx == small);
    /* load_feat reports the failure but loads everything else */
    CHECK_EQ(load_feat(), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(fake_cuda_live_modules(NULL, small), 8);
  }
  printf("OK\n");
  return 0;
}
