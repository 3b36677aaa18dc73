/* launch_bench CUBIN_DIR [BLOCK [ROUNDS]]: the launch-overhead harness as a program (no Python or
 * torch in the process), a cross-check of gpu_bench.py's interleaved measurement.
 * Each of ROUNDS rounds times a block of BLOCK back-to-back launches of every method, in an order
 * that rotates every round, then synchronises (untimed).
 * Prints one JSON object on stdout. Exit 0: measured; 77: no CUDA driver or GPU (skipped);
 * 1: failure (message in the JSON's "error" and on stderr). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/gpu/launch_bench.h"

static int failed(void) {
  fprintf(stderr, "launch_bench: %s\n", lb_error());
  printf("], \"error\": \"%s\"}\n", lb_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CUBIN_DIR [BLOCK [ROUNDS]]\n", argv[0]);
    return 2;
  }
  long block = argc > 2 ? atol(argv[2]) : 1000;
  int rounds = argc > 3 ? atoi(argv[3]) : 200;
  if (block <= 0 || rounds <= 0) {
    fprintf(stderr, "launch_bench: BLOCK and ROUNDS must be positive\n");
    return 2;
  }
  int rc = lb_init(0, argv[1]);
  if (rc != 0) {
    printf("{\"skipped\": %s, \"error\": \"%s\"}\n", rc == 77 ? "true" : "false", lb_error());
    fprintf(stderr, "launch_bench: %s\n", lb_error());
    return rc == 77 ? 77 : 1;
  }
  printf("{\"sm\": %d, \"fake_driver\": %s, \"block\": %ld, \"rounds\": %d, \"runs\": [", lb_sm(),
         lb_is_fake() ? "true" : "false", block, rounds);
  int first = 1;
  for (int m = 0; m < LB_NUM_METHODS; ++m) { /* warm-up: modules loaded, caches filled */
    double s;
    if (lb_time_block(m, 100, &s) != 0) return failed();
  }
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < LB_NUM_METHODS; ++k) {
      int m = (k + round) % LB_NUM_METHODS;
      double s;
      if (lb_time_block(m, block, &s) != 0) return failed();
      printf("%s{\"method\": \"%s\", \"round\": %d, \"us_per_call\": %.4f}", first ? "" : ", ",
             lb_method_name(m), round, 1e6 * s / (double)block);
      first = 0;
    }
    if (lb_sync() != 0) return failed();
  }
  printf("]}\n");
  return 0;
}
