/*
 * marks.h — moments of the run the host knows of (a GC pause, a profile written on kill -3 or
 * by a command), kept beside the time axis so that the page can draw them on it.
 *
 * Any thread adds (a JVMTI GC callback too: a mutex held for a few stores, nothing that waits
 * for the JVM); never from a signal handler. Bounded: MARKS_MAX a profile; past it a mark is
 * counted, not kept.
 */
#ifndef SAMPLER_MARKS_H
#define SAMPLER_MARKS_H

#include <stddef.h>
#include <stdint.h>

#define MARKS_MAX 65536

struct mark {
  uint64_t start_ns, end_ns; /* plat_mono_ns's clock */
  int kind;                  /* SAMPLER_MARK_* (sampler.h) */
};

/* Keeps a mark. Returns 0, or -ENOSPC (MARKS_MAX kept: counted, marks_lost). */
int marks_add(int kind, uint64_t start_ns, uint64_t end_ns);

/* Copies the marks that end at or after from_ns (at most max) into out, in the order added;
 * returns how many. *lost gets the marks not kept since marks_forget_before. */
size_t marks_copy(uint64_t from_ns, struct mark *out, size_t max, uint64_t *lost);

/* How many marks end at or after from_ns. */
size_t marks_count(uint64_t from_ns);

/* A new profile begins at mono_ns: the marks that ended before are forgotten, and the count
 * of those not kept starts again. */
void marks_forget_before(uint64_t mono_ns);

#endif
