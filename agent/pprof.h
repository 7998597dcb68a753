/*
 * pprof.h — the profile in pprof's format: profile.proto, gzipped (`format=pprof`), as
 * `go tool pprof`, Grafana Pyroscope and speedscope read it.
 */
#ifndef SAMPLER_PPROF_H
#define SAMPLER_PPROF_H
#include <stdint.h>
#include <stdio.h>

#include "sampler.h"

struct pprof_info {
  uint64_t interval_ns; /* the sampling period */
  int threads;          /* stacks begin with "[NAME tid=N]": made into labels */
  int wall;             /* wall-clock samples: a sample is interval_ns of wall time */
  const char *comment;  /* a line about how the profile was taken, or NULL */
  const char *program;  /* the program's name (the mapping's file name), or NULL: "java" */
  uint64_t alloc_bytes; /* event=alloc: the mean sampling interval in bytes (the period); the
                           sample types are then alloc_objects/count and alloc_space/bytes */
  int lock;             /* event=lock: contentions/count and delay/nanoseconds, period lock_ns */
  uint64_t lock_ns;     /* the lock= threshold */
  int clock;            /* with alloc_bytes or lock: cpu (or wall) samples beside them; each
                           event's sample types come one after the other (cpu or wall, alloc,
                           lock), a sample's values in its event's and 0 in the others' */
};

/* Writes snapshot s to f as a gzipped profile.proto. Returns 0, -ENOMEM or -EIO. */
int pprof_write(FILE *f, const struct pprof_info *info, const struct sampler_snapshot *s);

#endif
