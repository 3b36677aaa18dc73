/* Launch-overhead harness of the GPU benchmark (bench/gpu/launch_bench.c).
 *
 * Times back-to-back launches of the same tiny kernel (out = x + y, n = 1000 fp32, one CTA of
 * 128 threads) through:
 *   LB_RAW        cuLaunchKernel on a module loaded from tiny1's cubin (the floor)
 *   LB_DISPATCH1  tiny1's dispatcher (one variant)
 *   LB_DISPATCH8  tiny8's dispatcher (eight variants; only the last one's hints hold)
 *   LB_AUTO       tiny_auto_auto: the tuned dispatch (table lookup by n and the device's SM,
 *                 16 tuned points), which picks tiny1's config (BLOCK 1024) for n = 1000
 * Every driver entry point is dlopen'ed from libcuda.so.1; nothing links libcuda.
 * All functions return 0 on success, 77 when there is no usable driver or GPU, and another
 * non-zero code (a CUresult, or -1) on failure; lb_error() describes the last failure.
 */
#ifndef RULES_TRITON_BENCH_LAUNCH_BENCH_H_
#define RULES_TRITON_BENCH_LAUNCH_BENCH_H_

#ifdef __cplusplus
extern "C" {
#endif

#define LB_API __attribute__((visibility("default")))

/* (A library's variants have no entry points of their own since the one-C-file layout: the
 * dispatcher is the launch path.) */
enum { LB_RAW = 0, LB_DISPATCH1 = 1, LB_DISPATCH8 = 2, LB_AUTO = 3, LB_NUM_METHODS = 4 };

/* Opens the driver, makes device `device`'s primary context current, allocates the buffers,
 * creates a non-blocking stream and reads tiny1_a0_s0_smNN.cubin (NN: the device's SM, 80 or
 * 90; sm_8x devices other than 8.0 use the sm_80 cubin) from cubin_dir. Idempotent. */
LB_API int lb_init(int device, const char *cubin_dir);
LB_API const char *lb_error(void);
LB_API const char *lb_method_name(int method);
/* The device's SM as 10 * major + minor, after lb_init. */
LB_API int lb_sm(void);
/* 1 when running on the fake driver of tests/fake_cuda (CPU-only test runs). */
LB_API int lb_is_fake(void);

/* First call of `method` in this process (module load included) and the next call, each
 * followed by a stream synchronisation; microseconds. For LB_RAW the first call includes
 * cuModuleLoadData + cuModuleGetFunction. Call once per method, before lb_time. */
LB_API int lb_first_call(int method, double *first_us, double *second_us);

/* `iters` back-to-back launches on the stream, one synchronisation at the end:
 * enqueue_s = time until the last launch returned, total_s = until the stream drained,
 * gpu_s = CUDA-event time from before the first to after the last launch (0 on the fake). */
LB_API int lb_time(int method, long iters, double *enqueue_s, double *total_s, double *gpu_s);

/* The same launches in batches of `batch`, synchronising (untimed) after each batch; returns the
 * summed enqueue time only: the host cost per launch with a never-full launch queue. */
LB_API int lb_time_batched(int method, long iters, long batch, double *enqueue_s);

/* `iters` launches with no warm-up and no synchronisation: the host time until the last launch
 * returned (for short blocks interleaved between methods; the caller synchronises with lb_sync). */
LB_API int lb_time_block(int method, long iters, double *host_s);
LB_API int lb_sync(void);

/* `iters` launches with no warm-up and no synchronisation before them, CUDA events around them:
 * queued behind a long kernel the caller put on the stream first, this is the GPU's own time per
 * launch (the pace the GPU could keep), host cost excluded. Real GPU only. */
LB_API int lb_time_queued(int method, long iters, double *gpu_s);

/* Host cost of the two driver calls the runtime makes per launch to find the current context's
 * cache key: `iters` calls of cuCtxGetCurrent, then of cuCtxGetId; nanoseconds per call. */
LB_API int lb_time_context_lookup(long iters, double *get_current_ns, double *get_id_ns);

/* Addresses of the device buffers and the stream (for callers that launch the same kernel
 * themselves, e.g. the dispatcher through ctypes). */
LB_API int lb_buffers(unsigned long long *x, unsigned long long *y, unsigned long long *out,
                      int *n, void **stream);

#ifdef __cplusplus
}
#endif

#endif /* RULES_TRITON_BENCH_LAUNCH_BENCH_H_ */
