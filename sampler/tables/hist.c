/*
 * hist.c — log-linear histograms for the self-report (see hist.h).
 */
#include "hist.h"

static int bucket_of(uint64_t v) {
  if (v < 8) return (int)v;
  int p = 63 - __builtin_clzll(v); /* >= 3 */
  int sub = (int)((v >> (p - 3)) & 7);
  return (p - 2) * 8 + sub;
}

/* The largest value that falls in bucket i. */
static uint64_t bucket_top(int i) {
  if (i < 8) return (uint64_t)i;
  int p = i / 8 + 2, sub = i % 8;
  if (p >= 63) return UINT64_MAX;
  return ((uint64_t)(8 + sub + 1) << (p - 3)) - 1;
}

void hist_add(struct hist *h, uint64_t v) {
  h->b[bucket_of(v)]++;
  h->n++;
  if (v > h->max) h->max = v;
}

uint64_t hist_quantile(const struct hist *h, double q) {
  if (!h->n) return 0;
  uint64_t rank = (uint64_t)(q * (double)(h->n - 1)) + 1, seen = 0;
  for (int i = 0; i < HIST_BUCKETS; i++) {
    seen += h->b[i];
    if (seen >= rank) {
      uint64_t top = bucket_top(i);
      return top < h->max ? top : h->max;
    }
  }
  return h->max;
}
