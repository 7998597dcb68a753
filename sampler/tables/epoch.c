/*
 * epoch.c — the writers' side of epoch-counted reclamation (see epoch.h).
 */
#include "epoch.h"

#include <sched.h>
#include <stdint.h>

void epoch_wait(struct epoch *e) {
  for (int k = 0; k < 2; k++) {
    uint_fast64_t old = atomic_fetch_add(&e->now, 1);
    for (unsigned spins = 0; atomic_load(&e->readers[old & 1].n) != 0; spins++)
      if (spins >= 64) sched_yield();
  }
}
