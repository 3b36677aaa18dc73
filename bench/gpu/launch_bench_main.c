/* launch_bench CUBIN_DIR [ITERS [REPS]]: the launch-overhead harness as a program.
 * Prints one JSON object on stdout. Exit 0: measured; 77: no CUDA driver or GPU (skipped);
 * 1: failure (message in the JSON's "error" and on stderr). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/gpu/launch_bench.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CUBIN_DIR [ITERS [REPS]]\n", argv[0]);
    return 2;
  }
  long iters = argc > 2 ? atol(argv[2]) : 100000;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  int rc = lb_init(0, argv[1]);
  if (rc != 0) {
    printf("{\"skipped\": %s, \"error\": \"%s\"}\n", rc == 77 ? "true" : "false", lb_error());
    fprintf(stderr, "launch_bench: %s\n", lb_error());
    return rc == 77 ? 77 : 1;
  }
  printf("{\"sm\": %d, \"fake_driver\": %s, \"iters\": %ld, \"first_call_us\": {", lb_sm(),
         lb_is_fake() ? "true" : "false", iters);
  int order[] = {LB_RAW, LB_DISPATCH1, LB_DISPATCH8};
  for (int i = 0; i < 3; ++i) {
    double first, second;
    if ((rc = lb_first_call(order[i], &first, &second)) != 0) {
      fprintf(stderr, "launch_bench: %s\n", lb_error());
      printf("}, \"error\": \"%s\"}\n", lb_error());
      return 1;
    }
    printf("%s\"%s\": [%.2f, %.2f]", i ? ", " : "", lb_method_name(order[i]), first, second);
  }
  printf("}, \"runs\": [");
  for (int rep = 0; rep < reps; ++rep) {
    for (int m = 0; m < LB_NUM_METHODS; ++m) {
      double enqueue, total, gpu, batched;
      if ((rc = lb_time(m, iters, &enqueue, &total, &gpu)) != 0 ||
          (rc = lb_time_batched(m, iters, 64, &batched)) != 0) {
        fprintf(stderr, "launch_bench: %s\n", lb_error());
        printf("], \"error\": \"%s\"}\n", lb_error());
        return 1;
      }
      printf("%s{\"method\": \"%s\", \"rep\": %d, \"us_per_call\": %.4f, \"enqueue_us_per_call\": "
             "%.4f, \"gpu_us_per_call\": %.4f, \"batched_enqueue_us_per_call\": %.4f}",
             rep || m ? ", " : "", lb_method_name(m), rep, 1e6 * total / iters,
             1e6 * enqueue / iters, 1e6 * gpu / iters, 1e6 * batched / iters);
    }
  }
  printf("]}\n");
  return 0;
}
