/*
 * traces.h — trace storage: frame names (interned by intern.h), a cache of method -> frame
 * name, and the table of distinct stacks with their weights.
 *
 * Only the sampler thread adds; a dump reads. Callers serialize with traces_lock() /
 * traces_unlock() (a mutex: never from a signal handler). All of it grows with malloc.
 */
#ifndef SAMPLER_TRACES_H
#define SAMPLER_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"

#define TRACES_NO_ID INTERN_NO_ID /* a frame id is an interned name's (intern.h) */

/* Initializes the tables. Returns 0 or -ENOMEM. */
int traces_init(void);

void traces_lock(void);
void traces_unlock(void);

/* A frame's cache key: what it is (a jmethodID, a pc) and how it is shown (kind, line, a tag
 * that keeps kinds of keys apart). Two words: nothing is assumed of either's bits. */
struct traces_key {
  uint64_t what, how;
};

/* The frame id cached for a key, or TRACES_NO_ID. */
uint32_t traces_key_get(struct traces_key key);

/* Caches id for key. Returns 0 or -ENOMEM. */
int traces_key_put(struct traces_key key, uint32_t id);

/* Adds one capture of the stack frames[0..n) (root first) with its weights: cost units and
 * CPU nanoseconds. Returns 0 or -ENOMEM (the capture is then not stored; the caller counts it). */
int traces_add(const uint32_t *frames, int n, uint64_t units, uint64_t cpu_ns);

struct trace_view {
  const uint32_t *frames; /* root first */
  int n;
  uint64_t samples; /* captures of this stack */
  uint64_t units;
  uint64_t cpu_ns;
};

/* Calls fn for every distinct stack, in insertion order. */
void traces_foreach(void (*fn)(void *ctx, const struct trace_view *t), void *ctx);

/* Number of distinct stacks. */
size_t traces_count(void);

#endif
