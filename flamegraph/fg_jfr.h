/*
 * fg_jfr.h — reading JFR recordings (JDK Flight Recorder, chunk format 2.x: the agent's
 * format=jfr, the JDK's own -XX:StartFlightRecording files) into a flame graph profile: one
 * stack per jdk.ExecutionSample, or sampler.CPUSample's CPU time. The types and fields are taken
 * from each chunk's metadata event, not from a fixed layout. Apart from flamegraph_lib (the
 * agent's part): the agent writes JFR, it never reads it.
 */
#ifndef SAMPLER_FG_JFR_H
#define SAMPLER_FG_JFR_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flamegraph.h"

/* Whether data (at least its first four bytes) starts as a JFR chunk does ("FLR\0"). */
static inline int fg_is_jfr(const void *data, size_t len) {
  return len >= 4 && memcmp(data, "FLR", 4) == 0;
}

/* The work a recording may cost (flamegraph/README.md "Limits"): every field value decoded and
 * every byte of a frame name produced (plus FG_JFR_FRAME_COST a frame) is charged, at most
 * FG_JFR_WORK_BASE + FG_JFR_WORK_PER_BYTE per byte of the file, never beyond FG_JFR_WORK_MAX:
 * a small file whose one deep stack is named by a million threads, or whose types nest fields
 * that take no bytes, is refused instead of taking hours. Types nest at most FG_JFR_MAX_NEST
 * deep (a type that holds itself is an error), the metadata's element tree FG_JFR_MAX_NEST
 * deep too. */
#define FG_JFR_WORK_BASE ((uint64_t)64 << 20)
#define FG_JFR_WORK_PER_BYTE 256
#define FG_JFR_WORK_MAX ((uint64_t)4 << 30)
#define FG_JFR_FRAME_COST 32
#define FG_JFR_MAX_NEST 32

/* What to read and how to name it. */
typedef struct fg_jfr_options {
  const char *value;    /* NULL or "samples": 1 per jdk.ExecutionSample; "cpu": sampler.CPUSample's
                        cpuTime in ns; "alloc": jdk.ObjectAllocationSample's weight in bytes,
                        its objectClass the leaf frame ("byte[]_[a]") */
  int threads;          /* 1: the sampled thread as a root frame "[NAME tid=OS_TID]" */
  int lines;            /* 1: a Java frame's line as ":N" */
  int ann;              /* 1: a Java frame's kind as _[j] (JIT compiled), _[i] (inlined), _[0]
                        (interpreted); native frames stay plain */
  int time;             /* 1: the profile's time axis (fg_profile_time_*: the HTML page's heat map)
                        from the events' start times, in cells of FG_JFR_CELL_NS from the range's
                        start, by thread */
  int has_from, has_to; /* 0: no bound; else how from_ns / to_ns count (FG_JFR_AT_*) */
  int64_t from_ns, to_ns; /* the range [from, to) of events' start times */
  int from_utc, to_utc;   /* FG_JFR_AT_DAY: the time of day is UTC's (else local) */
} fg_jfr_options;

/* How a bound of the range counts: from the recording's start (its earliest chunk's; negative:
 * from its end), since the epoch, or since midnight — the day whose midnight puts it nearest
 * the recording's start. */
enum { FG_JFR_AT_START = 1, FG_JFR_AT_EPOCH = 2, FG_JFR_AT_DAY = 3 };

#define FG_JFR_CELL_NS 20000000ull /* the time axis's cells: 20 ms, as the agent's */

/* Sets every field to its default: samples, no threads, lines or kinds, no range. */
void fg_jfr_options_init(fg_jfr_options *o);

/* Reads the recording in data[0..len) (one or more chunks back to back) into `column` of p: a
 * stack per selected event, root first, frames named "pkg/Cls.method" (a frame without a class,
 * a native function, by its name alone). Work and memory are linear in len (the limits above;
 * the pools' index takes at most 128 bytes per byte, the sums 64, the time axis's cells 64 more). Returns 0, -EINVAL (err->msg
 * says what is wrong and at which file offset, or which limit was reached; a bad option value
 * too) or -ENOMEM. Not thread-safe for one p. */
int fg_read_jfr(fg_profile *p, const void *data, size_t len, int column, const fg_jfr_options *o,
                fg_read_error *err);

#endif
