/* Shorthands over the fake driver's inspection API for the test programs. */
#ifndef RULES_TRITON_TEST_FAKE_UTIL_H_
#define RULES_TRITON_TEST_FAKE_UTIL_H_

#include "check.h"
#include "fake_cuda.h"

static inline fake_cuda_launch last_launch(void) {
  fake_cuda_launch l;
  CHECK(fake_cuda_num_launches() > 0);
  CHECK(fake_cuda_get_launch(fake_cuda_num_launches() - 1, &l));
  return l;
}

/* Successful module loads with this tag (NULL: any) in this context (NULL: any). */
static inline int count_loads(const char *tag, CUcontext ctx) {
  int i, n = 0;
  for (i = 0; i < fake_cuda_num_loads(); ++i) {
    fake_cuda_load l;
    CHECK(fake_cuda_get_load(i, &l));
    if ((tag == NULL || strcmp(l.tag, tag) == 0) && (ctx == NULL || l.ctx == ctx)) ++n;
  }
  return n;
}

/* Parameter i of a launch as an integer of its recorded size (little endian). */
static inline unsigned long long param_u64(const fake_cuda_launch *l, int i) {
  unsigned long long v = 0;
  memcpy(&v, l->param_bytes[i], l->param_size[i] > 8 ? 8 : l->param_size[i]);
  return v;
}

#endif
