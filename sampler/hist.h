/*
 * stats.h — what the sampler reports about itself: counters and latency histograms.
 * Written by the sampler thread only; read at dump time under traces_lock().
 */
#ifndef SAMPLER_STATS_H
#define SAMPLER_STATS_H

#include <stdint.h>

#include "asgct.h"

/* A log-linear histogram of nanosecond values: 8 sub-buckets per power of two (<= 12.5%
 * error), no allocation. */
#define HIST_BUCKETS (64 * 8)
struct hist {
  uint64_t n;
  uint64_t max;
  uint64_t b[HIST_BUCKETS];
};

void hist_add(struct hist *h, uint64_t v);
/* The value at quantile q (0..1), as the upper bound of its bucket (capped at the max seen);
 * 0 when empty. */
uint64_t hist_quantile(const struct hist *h, double q);

struct sampler_stats {
  uint64_t ticks;          /* sampling rounds */
  uint64_t overruns;       /* rounds skipped because the previous one ran past their deadline */
  uint64_t looks;          /* per-thread CPU clock reads */
  uint64_t skipped_idle;   /* thread-ticks not looked at: idle back-off */
  uint64_t skipped_cpu;    /* thread-ticks judged not run by the CPU clock */
  uint64_t skipped_regs;   /* requests whose register checksum said not run */
  uint64_t deferred;       /* thread-rounds a due sample waited for its blocked thread to run */
  uint64_t requests;       /* signals sent */
  uint64_t lost_send;      /* signals that could not be sent (thread gone, queue full) */
  uint64_t outstanding;    /* thread-ticks skipped because an earlier request was still open */
  uint64_t late;           /* requests not answered by the round after them */
  uint64_t unanswered;     /* requests withdrawn unanswered at the end (units kept as lost) */
  uint64_t samples;        /* stacks captured and stored */
  uint64_t units;          /* cost units written */
  uint64_t cpu_ns;         /* CPU time attributed (ns) */
  uint64_t lost_units;     /* units kept under [sample lost] */
  uint64_t store_failed;   /* captures that could not be stored (out of memory) */
  uint64_t blocked;        /* captures that found the thread blocked in a system call */
  uint64_t asgct[ASGCT_NCODES + 1]; /* [0]: ok (num_frames > 0); [1 + -code]: failures */
  uint64_t recovered_stub;   /* failures walked from the Java caller of the stub the PC was in */
  uint64_t recovered_anchor; /* failures in VM code called from Java, walked from its frame anchor */
  uint64_t attributed_code;  /* failures attributed through the map to a compiled method */
  uint64_t named_stub;       /* failures in a stub whose caller could not be walked: stub named */
  uint64_t ambiguous_kept_ns, ambiguous_dropped_ns;
  uint64_t clock_errors;   /* CPU clock reads that failed for a live thread */
  struct hist cost;        /* handler entry -> exit */
  struct hist latency;     /* signal sent -> handler entry */
  struct hist tick_cost;   /* sampler thread CPU per round */
  uint64_t sampler_cpu_ns; /* the sampler thread's own CPU time */
  uint64_t wall_ns;        /* sampling time */
};

#endif
