/*
 * hist.h — log-linear histograms of nanosecond values for the self-report: 8 sub-buckets per
 * power of two (<= 12.5% error), no allocation. Written by the sampler thread only; read at
 * report time under traces_lock().
 */
#ifndef SAMPLER_HIST_H
#define SAMPLER_HIST_H

#include <stdint.h>

#define HIST_BUCKETS (64 * 8)
struct hist {
  uint64_t n;
  uint64_t max;
  uint64_t b[HIST_BUCKETS];
};

/* Counts one value. */
void hist_add(struct hist *h, uint64_t v);

/* The value at quantile q (0..1), as the upper bound of its bucket (capped at the max seen);
 * 0 when empty. */
uint64_t hist_quantile(const struct hist *h, double q);

#endif
