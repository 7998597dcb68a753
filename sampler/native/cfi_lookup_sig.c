/*
 * native/cfi_lookup_sig.c — SIGNAL PATH: the rule of a compiled call-frame table (cfi.h) that
 * covers a pc. A short binary search over an immutable table; no calls, no allocation.
 */
#include "cfi.h"

const struct cfi_rule *cfi_find(const struct cfi_table *t, uintptr_t pc) {
  if (!t || !t->n || pc < t->first) return NULL;
  const uint32_t mask = (1u << CFI_RULE_BITS) - 1;
  size_t b = pc >> CFI_BUCKET_SHIFT;
  if (b + 1 >= t->nbuckets) return &t->rules[t->row[t->n - 1] & mask]; /* past the end row */
  uint32_t at = (uint32_t)(pc & ((1u << CFI_BUCKET_SHIFT) - 1)) << CFI_RULE_BITS | mask;
  size_t lo = t->bucket[b], hi = t->bucket[b + 1];
  while (lo < hi) { /* the first row of the bucket that starts after pc */
    size_t mid = lo + (hi - lo) / 2;
    if (t->row[mid] <= at)
      lo = mid + 1;
    else
      hi = mid;
  }
  /* lo >= 1: a row starts at or before pc (pc >= first); it is the one before lo, in this
   * bucket or, when none of this bucket's starts at or before pc, the last of an earlier one */
  return &t->rules[t->row[lo - 1] & mask];
}
