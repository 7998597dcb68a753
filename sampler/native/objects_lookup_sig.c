/*
 * native/objects_lookup_sig.c — SIGNAL PATH: the lock-free read side of the loaded-objects table
 * (objects.h). Binary searches over an immutable snapshot that the writer frees only after a
 * grace period (epoch.h); no locks, no allocation, no calls.
 */
#include "objects_internal.h"

struct objects_published objects_published;

unsigned objects_enter(void) { return epoch_enter(&objects_published.epoch); }

void objects_exit(unsigned token) { epoch_exit(&objects_published.epoch, token); }

uint64_t objects_generation(void) {
  const struct objects_snapshot *s =
      atomic_load_explicit(&objects_published.current, memory_order_acquire);
  return s ? s->generation : 0;
}

const struct object *objects_find(uintptr_t pc) {
  const struct objects_snapshot *s =
      atomic_load_explicit(&objects_published.current, memory_order_acquire);
  if (!s) return NULL;
  size_t lo = 0, hi = s->n;
  while (lo < hi) { /* the first object whose text starts after pc */
    size_t mid = lo + (hi - lo) / 2;
    if (s->start[mid] <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return NULL;
  const struct object *o = &s->obj[lo - 1];
  return pc < o->text_end ? o : NULL;
}

int objects_readable(uintptr_t addr, size_t len, struct object_segment *hit) {
  if (addr + len < addr) return 0;
  if (addr >= hit->start && addr + len <= hit->end) return 1; /* the previous read's segment */
  const struct objects_snapshot *s =
      atomic_load_explicit(&objects_published.current, memory_order_acquire);
  if (!s) return 0;
  size_t lo = 0, hi = s->nseg;
  while (lo < hi) { /* the first segment that starts after addr */
    size_t mid = lo + (hi - lo) / 2;
    if (s->seg[mid].start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || addr + len > s->seg[lo - 1].end) return 0;
  *hit = s->seg[lo - 1];
  return 1;
}
