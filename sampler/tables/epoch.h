/*
 * epoch.h — epoch-counted reclamation for snapshots that signal handlers read: the code map
 * and the table of loaded objects. A reader enters (one atomic increment of the counter of the
 * current epoch's parity), reads the published snapshot, and leaves (one decrement): it never
 * loops, locks or allocates, so entering and leaving are SIGNAL-SAFE. A writer that replaced a
 * snapshot waits for a grace period — advance the epoch and wait for the old parity's counter
 * to reach zero, twice, so that a reader which read the epoch just before an advance is covered
 * too — and may then free what it replaced. Only writers ever wait.
 */
#ifndef SAMPLER_EPOCH_H
#define SAMPLER_EPOCH_H

#include <stdatomic.h>

/* A counter alone on its cache line: readers on other CPUs do not share the line. */
struct epoch_counter {
  _Alignas(64) atomic_long n;
};

struct epoch {
  atomic_uint_fast64_t now;
  struct epoch_counter readers[2];
};

/* Enters a read-side section; returns what epoch_exit needs. Signal-safe. */
static inline unsigned epoch_enter(struct epoch *e) {
  unsigned p = (unsigned)(atomic_load(&e->now) & 1);
  atomic_fetch_add(&e->readers[p].n, 1);
  return p;
}

/* Leaves the section entered with parity p. Signal-safe. */
static inline void epoch_exit(struct epoch *e, unsigned p) {
  atomic_fetch_sub(&e->readers[p].n, 1);
}

/* Returns once every reader that might have seen a snapshot published before the call has
 * left. Writers only; not signal-safe (it waits, yielding the CPU). */
void epoch_wait(struct epoch *e);

#endif
