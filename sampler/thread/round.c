/*
 * round.c — the sampler thread's own state, the round state (round.h), and its small
 * operations: the per-slot bookkeeping arrays and the threads found to have ended. The rounds
 * are in loop.c, the decisions in schedule.c, the recording in record.c.
 */
#include "round.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "traces.h"

struct loop_state loop;

int loop_reserve(int limit) {
  if (limit <= loop.cap) return 0;
  int cap = limit * 2;
  struct thread_book *books = realloc(loop.books, (size_t)cap * sizeof *books);
  if (!books) return -ENOMEM;
  loop.books = books;
  uint64_t *look = realloc(loop.look, (size_t)cap * sizeof *look);
  if (!look) return -ENOMEM; /* books grew; cap stays: both are only used below cap */
  loop.look = look;
  memset(loop.books + loop.cap, 0, (size_t)(cap - loop.cap) * sizeof *books);
  memset(loop.look + loop.cap, 0, (size_t)(cap - loop.cap) * sizeof *look);
  for (int i = loop.cap; i < cap; i++) loop.books[i].gen = UINT32_MAX; /* reset at first sight */
  loop.cap = cap;
  return 0;
}

/* A thread's phase: uniform in [0, interval) (splitmix64 of a counter). */
uint64_t loop_phase(void) {
  static uint64_t n;
  uint64_t z = (n += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return loop.cfg.interval_ns ? z % loop.cfg.interval_ns : 0;
}

void loop_timer_drop(struct thread_book *b) {
  if (!b->has_timer) return;
  plat_cpu_timer_delete(b->timer);
  b->has_timer = 0;
  b->via_timer = 0;
  loop.timers--;
}

struct thread_book *loop_book(int i, const struct thread_slot *s) {
  struct thread_book *b = &loop.books[i];
  if (b->gen != s->gen) {
    loop_timer_drop(b);       /* an earlier owner's */
    uint32_t *last = b->last; /* the buffer stays for the next owner */
    int cap = b->cap_last;
    memset(b, 0, sizeof *b);
    b->gen = s->gen;
    b->root_id = TRACES_NO_ID;
    b->last = last;
    b->cap_last = cap;
    b->wall_slot = loop.slots;
    /* A thread's first sample comes when its CPU crosses the first interval boundary after
     * a random phase, not after a whole interval: otherwise every thread's last fraction of an
     * interval went unsampled — nothing for a short burst, and for hundreds of briefly waking
     * threads a large share of their CPU. With the phase, the samples a thread gets are its
     * CPU / interval in expectation. */
    b->phase = loop_phase();
  }
  return b;
}

void loop_note_gone(int i, uint32_t gen) {
  if (loop.ngone == (int)(sizeof loop.gone / sizeof *loop.gone)) return; /* the next round */
  loop.gone[loop.ngone].slot = i;
  loop.gone[loop.ngone].gen = gen;
  loop.ngone++;
}
