/*
 * fg_pprof.h — reading pprof profiles (profile.proto, gzipped or not) into a flame graph
 * profile: the `flamegraph` tool's input besides folded stacks. Apart from flamegraph_lib (the
 * agent's part), since it needs zlib.
 */
#ifndef SAMPLER_FG_PPROF_H
#define SAMPLER_FG_PPROF_H
#include <stddef.h>

#include "flamegraph.h"

/* Whether data (at least its first two bytes) looks like a gzipped file. */
static inline int fg_is_gzip(const void *data, size_t len) {
  const unsigned char *b = data;
  return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Reads the pprof profile in data[0..len) into `column` of p: each sample's stack root first
 * (a `thread` label, with `tid`, as a root frame "[NAME tid=N]"), frames named by function,
 * ":<line>" added when known; its count is the value of sample type `value` (e.g. "cpu"), or
 * the first when value is NULL. Returns 0, -EINVAL (err->msg says what is wrong) or -ENOMEM. */
int fg_read_pprof(fg_profile *p, const void *data, size_t len, int column, const char *value,
                  fg_read_error *err);

#endif
