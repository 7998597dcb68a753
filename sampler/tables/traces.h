/*
 * traces.h — trace storage: frame names (interned by intern.h), a cache of method -> frame
 * name, and the table of distinct stacks with their weights.
 *
 * Only the sampler thread adds; a dump reads. Callers serialize with traces_lock() /
 * traces_unlock() (a mutex: never from a signal handler). All of it grows (the large arrays in
 * mappings of their own: plat_block_resize) up to limits (traces_set_limits): a run of hours
 * keeps its memory bounded, and what the limits refuse is counted (traces_refused).
 */
#ifndef SAMPLER_TRACES_H
#define SAMPLER_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"

#define TRACES_NO_ID INTERN_NO_ID /* a frame id is an interned name's (intern.h) */

/* Initializes the tables. Returns 0 or -ENOMEM (nothing is left allocated then). */
int traces_init(void);

/* Frees the tables and everything in them (the limits stay): a set-up that failed later is
 * undone (sampler_init). No other call may run meanwhile. */
void traces_fini(void);

/* The limits: distinct stacks, frames stored in them, and cached keys. Defaults:
 * TRACES_MAX_STACKS, TRACES_MAX_FRAMES, TRACES_MAX_KEYS (~135 MB at most together). Tests set
 * small ones. Callers hold the lock. */
#define TRACES_MAX_STACKS (1u << 20)
#define TRACES_MAX_FRAMES (32u << 20)
#define TRACES_MAX_KEYS (128u << 10)
void traces_set_limits(size_t stacks, size_t frames, size_t keys);

/* What the limits refused so far: new stacks (their captures: the caller stores them elsewhere),
 * and how many times the key cache was full and emptied (each class a JVM loads again brings
 * new jmethodIDs; traces_key_sweep drops those of unloaded classes, the limit bounds the rest). */
struct traces_refusals {
  uint64_t stacks, keys;
};
void traces_refused(struct traces_refusals *out);

void traces_lock(void);
void traces_unlock(void);

/* A frame's cache key: what it is (a jmethodID, a pc) and how it is shown (kind, line, a tag
 * that keeps kinds of keys apart). Two words: nothing is assumed of either's bits. */
struct traces_key {
  uint64_t what, how;
};

/* The frame id cached for a key, or TRACES_NO_ID. */
uint32_t traces_key_get(struct traces_key key);

/* Caches id for key; a full cache is emptied first (counted). Returns 0 or -ENOMEM. */
int traces_key_put(struct traces_key key, uint32_t id);

/* Keeps only the cached keys keep(ctx, key) says yes to (the others' methods are gone: their
 * classes were unloaded), and gives back the memory the dropped ones held. Returns how many
 * were dropped. Callers hold the lock. */
size_t traces_key_sweep(int (*keep)(void *ctx, struct traces_key key), void *ctx);

/* Adds one capture of the stack frames[0..n) (root first) with its weights: cost units and
 * CPU nanoseconds; with id, gives the stack's id there (0, 1, ... in the order stacks were
 * first added: traces_foreach's). Returns 0, or -ENOMEM or -ENOSPC (a new stack past the
 * limits: counted) — then the capture is not stored and the caller stores it elsewhere. */
int traces_add(const uint32_t *frames, int n, uint64_t units, uint64_t cpu_ns, uint32_t *id);
/* The same, for a stack of event kind `kind` (enum sampler_event; traces_add's is 0, cpu): the
 * same frames under two kinds are two stacks. */
int traces_add_kind(const uint32_t *frames, int n, int kind, uint64_t units, uint64_t cpu_ns,
                    uint32_t *id);

struct trace_view {
  const uint32_t *frames; /* root first */
  int n;
  uint64_t samples; /* captures of this stack */
  uint64_t units;
  uint64_t cpu_ns;
  int kind; /* traces_add_kind's */
};

/* Calls fn for every distinct stack, in insertion order. */
void traces_foreach(void (*fn)(void *ctx, const struct trace_view *t), void *ctx);

/* Number of distinct stacks. */
size_t traces_count(void);
/* Number of cached keys. */
size_t traces_keys(void);
/* The bytes the key cache and the stack table hold (their arrays and indexes, as allocated).
 * Callers hold the lock. */
size_t traces_bytes(void);
/* Forgets every stack (the next profile starts from none); the key cache and the names stay.
 * Callers hold the lock. */
void traces_clear(void);

#endif
