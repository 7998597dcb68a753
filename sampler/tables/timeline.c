/*
 * timeline.c — the profile's time axis (timeline.h): an array of entries in time order, a small
 * index of the current cell's entries (so that a thread's captures of one stack in one cell
 * make one entry), and the threads by tid and name.
 */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

/* The cell lengths, finest first: each a whole multiple of the one before. */
static const uint64_t steps[] = {20000000ull,    100000000ull,    1000000000ull,   10000000000ull,
                                 60000000000ull, 600000000000ull, 3600000000000ull};
#define NSTEPS (sizeof steps / sizeof steps[0])

#define CUR_SLOTS 4096 /* the current cell's index; at most half of it used */

static struct timeline_entry *ent;
static size_t n_ent, cap_ent; /* cap_ent: entries the block holds */
static size_t limit = TIMELINE_MAX_BYTES;
static unsigned step; /* steps[step] is the cell length now */
static uint32_t coarsenings;
static uint64_t start_ns;
static int64_t start_wall_ns;

/* The current cell's index: slot -> entry + 1 (0: empty), valid while gen matches. */
static struct { uint32_t gen, idx; } cur[CUR_SLOTS];
static uint32_t cur_gen = 1, cur_cell, cur_used;

static struct timeline_thread *thr;
static size_t n_thr, cap_thr, thr_name_bytes;
static uint32_t *thr_tab; /* tid hash -> thread index + 1 (0: empty); size thr_tab_cap */
static size_t thr_tab_cap;

void timeline_set_limit(size_t bytes) { limit = bytes; }

void timeline_free(void) {
  if (ent) plat_block_free(ent, cap_ent * sizeof *ent);
  ent = NULL;
  n_ent = cap_ent = 0;
  for (size_t i = 0; i < n_thr; i++) free((void *)thr[i].name);
  free(thr);
  free(thr_tab);
  thr = NULL;
  thr_tab = NULL;
  n_thr = cap_thr = thr_tab_cap = thr_name_bytes = 0;
  cur_gen++;
  cur_used = 0;
}

int timeline_clear(uint64_t mono_ns, int64_t wall_ns) {
  timeline_free();
  step = 0;
  coarsenings = 0;
  start_ns = mono_ns;
  start_wall_ns = wall_ns;
  cur_cell = 0;
  return 0;
}

static uint32_t cur_hash(uint32_t stack, uint32_t thread) {
  uint32_t h = stack * 0x9E3779B1u ^ (thread + 0x7F4A7C15u) * 0x85EBCA77u;
  return (h ^ h >> 15) & (CUR_SLOTS - 1);
}

/* The slot of (stack, thread) in the current cell's index: its entry's, or the empty one where
 * it would go. */
static uint32_t cur_find(uint32_t stack, uint32_t thread) {
  uint32_t i = cur_hash(stack, thread);
  for (;; i = (i + 1) & (CUR_SLOTS - 1)) {
    if (cur[i].gen != cur_gen) return i;
    const struct timeline_entry *e = &ent[cur[i].idx];
    if (e->stack == stack && e->thread == thread) return i;
  }
}

static void cur_put(uint32_t slot, size_t idx) {
  cur[slot].gen = cur_gen;
  cur[slot].idx = (uint32_t)idx;
  cur_used++;
}

/* Starts the current cell's index again for the entries [from, n_ent) (all of cell c). */
static void cur_rebuild(uint32_t c, size_t from) {
  cur_gen++;
  cur_used = 0;
  cur_cell = c;
  for (size_t i = from; i < n_ent && cur_used < CUR_SLOTS / 2; i++) {
    uint32_t s = cur_find(ent[i].stack, ent[i].thread);
    if (cur[s].gen != cur_gen) cur_put(s, i);
  }
}

static int by_stack_thread(const void *a, const void *b) {
  const struct timeline_entry *x = a, *y = b;
  if (x->stack != y->stack) return x->stack < y->stack ? -1 : 1;
  return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Makes the cells one step coarser and merges what now shares a cell. */
static void coarsen(void) {
  uint64_t factor = steps[step + 1] / steps[step];
  step++;
  coarsenings++;
  size_t w = 0, last_from = 0;
  for (size_t a = 0; a < n_ent;) {
    uint32_t c = (uint32_t)(ent[a].cell / factor);
    size_t b = a;
    while (b < n_ent && ent[b].cell / factor == c) b++;
    qsort(ent + a, b - a, sizeof *ent, by_stack_thread);
    last_from = w;
    for (size_t i = a; i < b; i++) {
      if (w > last_from && ent[w - 1].stack == ent[i].stack && ent[w - 1].thread == ent[i].thread) {
        ent[w - 1].samples += ent[i].samples;
        ent[w - 1].units += ent[i].units;
        ent[w - 1].cpu_ns += ent[i].cpu_ns;
      } else {
        ent[w] = ent[i];
        ent[w].cell = c;
        w++;
      }
    }
    a = b;
  }
  n_ent = w;
  cur_rebuild(n_ent ? ent[n_ent - 1].cell : 0, last_from);
}

/* Room for one more entry: grows the block up to the limit, coarsens at it (past the coarsest
 * step, grows on). */
static int make_room(void) {
  while (n_ent == cap_ent) {
    size_t want = cap_ent ? cap_ent * 2 : 1024;
    if (want * sizeof *ent > limit) want = limit / sizeof *ent;
    if (want <= cap_ent) {
      if (step + 1 < NSTEPS) {
        size_t before = n_ent;
        coarsen();
        if (n_ent < before) continue;    /* room made */
        if (step + 1 < NSTEPS) continue; /* nothing merged yet: coarser still */
      }
      want = cap_ent * 2; /* the coarsest cells: the entries grow with the stacks */
    }
    void *p = plat_block_resize(ent, cap_ent * sizeof *ent, want * sizeof *ent);
    if (!p) return -ENOMEM;
    ent = p;
    cap_ent = want;
  }
  return 0;
}

int timeline_add(uint64_t mono_ns, uint32_t stack, uint32_t thread, uint64_t units,
                 uint64_t cpu_ns) {
  for (;;) {
    uint64_t c64 = mono_ns > start_ns ? (mono_ns - start_ns) / steps[step] : 0;
    uint32_t c = c64 > UINT32_MAX ? UINT32_MAX : (uint32_t)c64;
    if (c < cur_cell) c = cur_cell; /* never before the last entry: time order kept */
    if (n_ent && c == cur_cell) {
      uint32_t s = cur_find(stack, thread);
      if (cur[s].gen == cur_gen) {
        struct timeline_entry *e = &ent[cur[s].idx];
        e->samples++;
        e->units += units;
        e->cpu_ns += cpu_ns;
        return 0;
      }
    } else if (c != cur_cell || !n_ent) {
      cur_gen++;
      cur_used = 0;
      cur_cell = c;
    }
    unsigned before = step;
    if (make_room()) return -ENOMEM;
    if (step != before) continue; /* the cells changed: this capture's cell too */
    ent[n_ent] = (struct timeline_entry){c, stack, thread, 1, units, cpu_ns};
    if (cur_used < CUR_SLOTS / 2) {
      uint32_t s = cur_find(stack, thread);
      cur_put(s, n_ent);
    }
    n_ent++;
    return 0;
  }
}

static uint32_t tid_hash(int32_t tid) {
  uint32_t h = (uint32_t)tid * 0x9E3779B1u;
  return h ^ h >> 16;
}

int64_t timeline_thread(int32_t tid, int64_t java_id, const char *name, size_t len) {
  size_t nlen = strnlen(name, len);
  if (thr_tab_cap) {
    for (size_t i = tid_hash(tid) & (thr_tab_cap - 1);; i = (i + 1) & (thr_tab_cap - 1)) {
      if (!thr_tab[i]) break;
      struct timeline_thread *t = &thr[thr_tab[i] - 1];
      if (t->tid == tid && !strncmp(t->name, name, nlen) && t->name[nlen] == '\0') {
        if (!t->java_id) t->java_id = java_id;
        return thr_tab[i] - 1;
      }
    }
  }
  if (n_thr == cap_thr) {
    size_t c = cap_thr ? cap_thr * 2 : 64;
    void *p = realloc(thr, c * sizeof *thr);
    if (!p) return -ENOMEM;
    thr = p;
    cap_thr = c;
  }
  if ((n_thr + 1) * 2 > thr_tab_cap) { /* at most half full */
    size_t c = thr_tab_cap ? thr_tab_cap * 2 : 128;
    uint32_t *t = calloc(c, sizeof *t);
    if (!t) return -ENOMEM;
    for (size_t k = 0; k < n_thr; k++) {
      size_t i = tid_hash(thr[k].tid) & (c - 1);
      while (t[i]) i = (i + 1) & (c - 1);
      t[i] = (uint32_t)k + 1;
    }
    free(thr_tab);
    thr_tab = t;
    thr_tab_cap = c;
  }
  char *copy = malloc(nlen + 1);
  if (!copy) return -ENOMEM;
  memcpy(copy, name, nlen);
  copy[nlen] = '\0';
  thr[n_thr] = (struct timeline_thread){tid, java_id, copy};
  thr_name_bytes += nlen + 1;
  size_t i = tid_hash(tid) & (thr_tab_cap - 1);
  while (thr_tab[i]) i = (i + 1) & (thr_tab_cap - 1);
  thr_tab[i] = (uint32_t)n_thr + 1;
  return (int64_t)n_thr++;
}

void timeline_get_info(struct timeline_info *out) {
  *out = (struct timeline_info){
      .start_ns = start_ns,
      .start_wall_ns = start_wall_ns,
      .cell_ns = steps[step],
      .coarsenings = coarsenings,
      .entries = n_ent,
      .threads = n_thr,
      .bytes = cap_ent * sizeof *ent + cap_thr * sizeof *thr + thr_tab_cap * sizeof *thr_tab +
               thr_name_bytes,
  };
}

const struct timeline_entry *timeline_entries(size_t *n) {
  *n = n_ent;
  return ent;
}

const struct timeline_thread *timeline_threads(size_t *n) {
  *n = n_thr;
  return thr;
}
