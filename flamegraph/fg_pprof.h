/*
 * fg_pprof.h — reading pprof profiles (profile.proto, gzipped or not) into a flame graph
 * profile: the `flamegraph` tool's input besides folded stacks. Apart from flamegraph_lib (the
 * agent's part), since it needs zlib.
 */
#ifndef SAMPLER_FG_PPROF_H
#define SAMPLER_FG_PPROF_H
#include <stddef.h>
#include <stdint.h>

#include "flamegraph.h"

/* Whether data (at least its first two bytes) looks like a gzipped file. */
static inline int fg_is_gzip(const void *data, size_t len) {
  const unsigned char *b = data;
  return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Limits on untrusted input (flamegraph/README.md "Limits"); each, when reached, is an error
 * that names it. A gzipped profile inflates to at most FG_PPROF_INFLATE_RATIO times the file's
 * size, or FG_PPROF_INFLATE_FLOOR when that is larger, and never beyond FG_PPROF_MAX_INFLATED
 * (a gzip bomb inflates 1000-fold; real profiles 3 to 10-fold). Expanding the samples (each
 * names its locations again, a location may hold many inlined lines) produces at most
 * FG_PPROF_EXPAND_BASE + FG_PPROF_EXPAND_PER_BYTE bytes per byte of the file, never more than
 * FG_PPROF_EXPAND_MAX, where a frame counts its name's bytes plus FG_PPROF_FRAME_COST; and a
 * sample's stack holds at most FG_MAX_DEPTH frames. The agent's largest profile (32M frames)
 * stays well inside: it is at least a byte per frame in the file. */
#define FG_PPROF_MAX_INFLATED ((size_t)1 << 30)
#define FG_PPROF_INFLATE_RATIO 100
#define FG_PPROF_INFLATE_FLOOR ((size_t)16 << 20)
#define FG_PPROF_FRAME_COST 32
#define FG_PPROF_EXPAND_BASE ((uint64_t)64 << 20)
#define FG_PPROF_EXPAND_PER_BYTE 256
#define FG_PPROF_EXPAND_MAX ((uint64_t)4 << 30)

/* Reads the pprof profile in data[0..len) into `column` of p: each sample's stack root first
 * (a `thread` label, with `tid`, as a root frame "[NAME tid=N]"), frames named by function,
 * ":<line>" added when known; its count is the value of sample type `value` (e.g. "cpu"), or
 * the first when value is NULL. Work and memory are linear in len within the limits above:
 * the tables take at most 8 bytes per inflated byte (16 while an unordered one is sorted),
 * the profile grows by at most the expansion budget. Returns 0, -EINVAL (err->msg says what
 * is wrong, or which limit was reached) or -ENOMEM. */
int fg_read_pprof(fg_profile *p, const void *data, size_t len, int column, const char *value,
                  fg_read_error *err);

#endif
