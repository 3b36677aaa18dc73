/* Minimal assertion helpers for the C test programs (compiled as C and as C++). */
#ifndef RULES_TRITON_TEST_CHECK_H_
#define RULES_TRITON_TEST_CHECK_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#define CHECK_EQ(a, b)                                                                  \
  do {                                                                                  \
    long long va_ = (long long)(a), vb_ = (long long)(b);                               \
    if (va_ != vb_) {                                                                   \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__,     \
              __LINE__, #a, va_, #b, vb_);                                              \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

#define CHECK_STR(a, b)                                                                 \
  do {                                                                                  \
    const char *sa_ = (a), *sb_ = (b);                                                  \
    if (sa_ == NULL || sb_ == NULL || strcmp(sa_, sb_) != 0) {                          \
      fprintf(stderr, "%s:%d: CHECK_STR failed: %s == \"%s\", %s == \"%s\"\n", __FILE__, \
              __LINE__, #a, sa_ ? sa_ : "(null)", #b, sb_ ? sb_ : "(null)");            \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

#endif
