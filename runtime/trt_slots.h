/* rules_triton: the per-context (CUDA) or per-device (HIP) cache both runtimes keep for each
 * kernel and each library's target choice.
 *
 * A singly linked list of slots, one per context (device) ever seen.  Slots are only ever
 * prepended (under the runtime's lock, published with a release store of the head) and never
 * freed, so readers walk the list without a lock.  `value` is 0 while nothing is cached, else a
 * function handle (kernel slots) or target index + 1 with the device's SM in the bits above 16
 * (target slots); it is stored last with release, so a reader that sees it non-zero also sees
 * `module`. */
#ifndef RULES_TRITON_TRT_SLOTS_H_
#define RULES_TRITON_TRT_SLOTS_H_

#include <stdint.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
#define TRT_SLOTS_INLINE static __inline__ __attribute__((unused))
#else
#define TRT_SLOTS_INLINE static inline
#endif

typedef struct trt_slot {
  struct trt_slot *next; /* immutable once published */
  unsigned long long key;
  void *module;    /* the backend's module handle (CUmodule, hipModule_t); under the lock */
  uintptr_t value; /* atomic */
} trt_slot;

TRT_SLOTS_INLINE trt_slot *trt_slot_find(trt_slot **head, unsigned long long key) {
  trt_slot *s;
  for (s = __atomic_load_n(head, __ATOMIC_ACQUIRE); s != NULL; s = s->next)
    if (s->key == key) return s;
  return NULL;
}

/* Caller holds the runtime's lock. NULL when out of memory. */
TRT_SLOTS_INLINE trt_slot *trt_slot_get_or_add(trt_slot **head, unsigned long long key) {
  trt_slot *s = trt_slot_find(head, key);
  if (s != NULL) return s;
  s = (trt_slot *)calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->key = key;
  s->next = *head;
  __atomic_store_n(head, s, __ATOMIC_RELEASE);
  return s;
}

#endif /* RULES_TRITON_TRT_SLOTS_H_ */
