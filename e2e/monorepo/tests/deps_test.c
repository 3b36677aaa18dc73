/* The monorepo's kernel libraries link, and each TTIR holds the constants its deps define.
 *
 * Arguments: groups of "TTIR-FILE... SUBSTRING... --"; a TTIR file ends in .ttir, every other
 * argument is a substring each of the group's files must contain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/autotuned_scale.h"
#include "kernels/configured_scale.h"
#include "kernels/leaky_cube.h"
#include "kernels/scale_offset.h"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  size_t got = fread(text, 1, (size_t)size, f);
  fclose(f);
  text[got] = '\0';
  return text;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int main(int argc, char **argv) {
  int failures = 0, checks = 0;
  int start = 1;
  while (start < argc) {
    int end = start;
    while (end < argc && strcmp(argv[end], "--") != 0) end++;
    for (int i = start; i < end; i++) {
      if (!ends_with(argv[i], ".ttir")) continue;
      char *text = read_file(argv[i]);
      if (!text) {
        fprintf(stderr, "FAIL: cannot read %s\n", argv[i]);
        failures++;
        continue;
      }
      for (int j = start; j < end; j++) {
        if (ends_with(argv[j], ".ttir")) continue;
        checks++;
        if (!strstr(text, argv[j])) {
          fprintf(stderr, "FAIL: %s lacks %s\n", argv[i], argv[j]);
          failures++;
        }
      }
      free(text);
    }
    start = end + 1;
  }
  /* The libraries link, and the autotuned one has the two configs the dep's code built. */
  int algos[] = {scale_offset_get_num_algos(), leaky_cube_get_num_algos(),
                 configured_scale_get_num_algos(), autotuned_scale_get_num_algos()};
  int want[] = {1, 1, 1, 2};
  for (int i = 0; i < 4; i++) {
    checks++;
    if (algos[i] != want[i]) {
      fprintf(stderr, "FAIL: library %d has %d algos, want %d\n", i, algos[i], want[i]);
      failures++;
    }
  }
  if (checks < 10) {
    fprintf(stderr, "FAIL: only %d checks ran\n", checks);
    failures++;
  }
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
