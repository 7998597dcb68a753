/*
 * timeline.c — the profile's time axis (timeline.h): one block of 16-byte slots in time order
 * (each cell's start, then its entries), a small index of the current cell's entries (so that a
 * thread's captures of one stack in one cell make one entry), and the threads by tid and name.
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

/* A slot of the block: an entry, or a cell's start (stack MARK, the cell number in units). key:
 * stack (bits 0-23), thread (24-47), captures (48-63). */
struct slot {
  uint64_t key;
  uint32_t units, cpu_ns;
};
_Static_assert(sizeof(struct slot) == TIMELINE_SLOT_BYTES, "a slot is 16 bytes");
#define ID_BITS 24
#define ID_MASK 0xFFFFFFull
#define NO_STACK 0xFFFFFEull        /* TIMELINE_NO_STACK packed */
#define MARK 0xFFFFFFull            /* a cell's start */
#define PAIR_MASK 0xFFFFFFFFFFFFull /* stack and thread */
#define MAX_CAPTURES 0xFFFFu
#define KEY(stack, thread, n) ((stack) | (uint64_t)(thread) << ID_BITS | (uint64_t)(n) << 48)
#define KEY_STACK(k) ((k)&ID_MASK)
#define KEY_THREAD(k) ((uint32_t)((k) >> ID_BITS & ID_MASK))
#define KEY_CAPTURES(k) ((uint32_t)((k) >> 48))
_Static_assert(TIMELINE_MAX_STACK == NO_STACK - 1, "the packed ids above the stacks'");

static struct slot *sl;
static size_t n_sl, cap_sl; /* cap_sl: slots the block holds */
static size_t n_data;       /* of them, entries */
static size_t limit = TIMELINE_MAX_BYTES;
static unsigned step; /* steps[step] is the cell length now */
static uint32_t coarsenings;
static uint64_t start_ns;
static int64_t start_wall_ns;

/* The current cell's index: slot -> the pair's latest entry (valid while gen matches). */
static struct { uint32_t gen, idx; } cur[CUR_SLOTS];
static uint32_t cur_gen = 1, cur_cell, cur_used;

static struct timeline_thread *thr;
static size_t n_thr, cap_thr, thr_name_bytes;
static uint32_t *thr_tab; /* tid hash -> thread index + 1 (0: empty); size thr_tab_cap */
static size_t thr_tab_cap;

void timeline_set_limit(size_t bytes) { limit = bytes; }

void timeline_free(void) {
  if (sl) plat_block_free(sl, cap_sl * sizeof *sl);
  sl = NULL;
  n_sl = cap_sl = n_data = 0;
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

static uint32_t cur_hash(uint64_t pair) {
  uint32_t h = (uint32_t)pair * 0x9E3779B1u ^ ((uint32_t)(pair >> 32) + 0x7F4A7C15u) * 0x85EBCA77u;
  return (h ^ h >> 15) & (CUR_SLOTS - 1);
}

/* The slot of a (stack, thread) pair in the current cell's index: its entry's, or the empty
 * one where it would go. */
static uint32_t cur_find(uint64_t pair) {
  uint32_t i = cur_hash(pair);
  for (;; i = (i + 1) & (CUR_SLOTS - 1)) {
    if (cur[i].gen != cur_gen) return i;
    if ((sl[cur[i].idx].key & PAIR_MASK) == pair) return i;
  }
}

/* Points the index at entry idx for its pair (the latest entry of a pair is the one added to),
 * while the index has room; past that, the cell's further pairs get an entry each capture. */
static void cur_note(size_t idx) {
  uint32_t s = cur_find(sl[idx].key & PAIR_MASK);
  if (cur[s].gen == cur_gen) {
    cur[s].idx = (uint32_t)idx;
  } else if (cur_used < CUR_SLOTS / 2) {
    cur[s].gen = cur_gen;
    cur[s].idx = (uint32_t)idx;
    cur_used++;
  }
}

/* Whether entry e can take these weights too. */
static int fits(const struct slot *e, uint32_t captures, uint64_t units, uint64_t cpu_ns) {
  return KEY_CAPTURES(e->key) + captures <= MAX_CAPTURES && e->units + units <= UINT32_MAX &&
         e->cpu_ns + cpu_ns <= UINT32_MAX;
}

static void add_to(struct slot *e, uint32_t captures, uint32_t units, uint32_t cpu_ns) {
  e->key += (uint64_t)captures << 48;
  e->units += units;
  e->cpu_ns += cpu_ns;
}

static int by_pair(const void *a, const void *b) {
  uint64_t x = ((const struct slot *)a)->key & PAIR_MASK,
           y = ((const struct slot *)b)->key & PAIR_MASK;
  return x < y ? -1 : x > y;
}

/* Makes the cells one step coarser and merges what now shares a cell. The block is rewritten in
 * place: a cell's start and its entries never move forward. */
static void coarsen(void) {
  uint64_t factor = steps[step + 1] / steps[step];
  step++;
  coarsenings++;
  size_t w = 0, last_from = 0, data = 0;
  uint32_t c = 0;
  for (size_t a = 0; a < n_sl;) { /* sl[a] is a cell's start */
    c = sl[a].units / (uint32_t)factor;
    size_t from = w + 1, b = a + 1;
    sl[w++] = (struct slot){MARK, c, 0};
    for (; b < n_sl; b++) {
      if (KEY_STACK(sl[b].key) == MARK) {
        if (sl[b].units / factor != c) break;
      } else {
        sl[w++] = sl[b];
      }
    }
    qsort(sl + from, w - from, sizeof *sl, by_pair);
    size_t m = from;
    for (size_t i = from; i < w; i++) {
      struct slot *e = &sl[m - 1];
      if (m > from && (e->key & PAIR_MASK) == (sl[i].key & PAIR_MASK) &&
          fits(e, KEY_CAPTURES(sl[i].key), sl[i].units, sl[i].cpu_ns))
        add_to(e, KEY_CAPTURES(sl[i].key), sl[i].units, sl[i].cpu_ns);
      else
        sl[m++] = sl[i];
    }
    data += m - from;
    w = m;
    last_from = from;
    a = b;
  }
  n_sl = w;
  n_data = data;
  cur_gen++;
  cur_used = 0;
  cur_cell = c;
  for (size_t i = last_from; i < n_sl; i++) cur_note(i);
}

/* Room for k more slots: grows the block up to the limit, coarsens at it (past the coarsest
 * step, grows on). */
static int make_room(size_t k) {
  while (n_sl + k > cap_sl) {
    size_t want = cap_sl ? cap_sl * 2 : 1024;
    if (want * sizeof *sl > limit) want = limit / sizeof *sl;
    if (want < n_sl + k) {
      if (step + 1 < NSTEPS) {
        size_t before = n_sl;
        coarsen();
        if (n_sl < before) continue;     /* room made */
        if (step + 1 < NSTEPS) continue; /* nothing merged yet: coarser still */
      }
      want = cap_sl * 2 > n_sl + k ? cap_sl * 2 : n_sl + k; /* the coarsest cells: grow on */
    }
    void *p = plat_block_resize(sl, cap_sl * sizeof *sl, want * sizeof *sl);
    if (!p) return -ENOMEM;
    sl = p;
    cap_sl = want;
  }
  return 0;
}

/* Adds weights that fit an entry (units and cpu_ns at most UINT32_MAX) at mono_ns. */
static int add_piece(uint64_t mono_ns, uint64_t pair, uint32_t captures, uint32_t units,
                     uint32_t cpu_ns) {
  for (;;) {
    uint64_t c64 = mono_ns > start_ns ? (mono_ns - start_ns) / steps[step] : 0;
    uint32_t c = c64 > UINT32_MAX ? UINT32_MAX : (uint32_t)c64;
    if (c < cur_cell) c = cur_cell; /* never before the last entry: time order kept */
    int same_cell = n_sl && c == cur_cell;
    if (same_cell) {
      uint32_t s = cur_find(pair);
      if (cur[s].gen == cur_gen && fits(&sl[cur[s].idx], captures, units, cpu_ns)) {
        add_to(&sl[cur[s].idx], captures, units, cpu_ns);
        return 0;
      }
    }
    unsigned before = step;
    if (make_room(same_cell ? 1 : 2)) return -ENOMEM;
    if (step != before) continue; /* the cells changed: this capture's cell too */
    if (!same_cell) {
      cur_gen++;
      cur_used = 0;
      cur_cell = c;
      sl[n_sl++] = (struct slot){MARK, c, 0};
    }
    sl[n_sl] = (struct slot){pair | (uint64_t)captures << 48, units, cpu_ns};
    cur_note(n_sl);
    n_sl++;
    n_data++;
    return 0;
  }
}

int timeline_add(uint64_t mono_ns, uint32_t stack, uint32_t thread, uint64_t units,
                 uint64_t cpu_ns) {
  if ((stack > TIMELINE_MAX_STACK && stack != TIMELINE_NO_STACK) || thread >= TIMELINE_MAX_THREADS)
    return -EINVAL;
  uint64_t pair = KEY(stack == TIMELINE_NO_STACK ? NO_STACK : stack, thread, 0);
  uint32_t captures = 1;
  do { /* weights past 32 bits: in more entries, the capture counted in the first */
    uint32_t u = units > UINT32_MAX ? UINT32_MAX : (uint32_t)units;
    uint32_t t = cpu_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)cpu_ns;
    int rc = add_piece(mono_ns, pair, captures, u, t);
    if (rc) return rc;
    units -= u;
    cpu_ns -= t;
    captures = 0;
  } while (units || cpu_ns);
  return 0;
}

void timeline_read(struct timeline_entry *out) {
  uint32_t c = 0;
  for (size_t i = 0; i < n_sl; i++) {
    uint64_t k = sl[i].key;
    if (KEY_STACK(k) == MARK) {
      c = sl[i].units;
      continue;
    }
    *out++ = (struct timeline_entry){
        .cell = c,
        .stack = KEY_STACK(k) == NO_STACK ? TIMELINE_NO_STACK : (uint32_t)KEY_STACK(k),
        .thread = KEY_THREAD(k),
        .samples = KEY_CAPTURES(k),
        .units = sl[i].units,
        .cpu_ns = sl[i].cpu_ns,
    };
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
  if (n_thr >= TIMELINE_MAX_THREADS) return -ENOSPC;
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
      .entries = n_data,
      .threads = n_thr,
      .slot_bytes = n_sl * sizeof *sl,
      .bytes = cap_sl * sizeof *sl + cap_thr * sizeof *thr + thr_tab_cap * sizeof *thr_tab +
               thr_name_bytes,
  };
}

const struct timeline_thread *timeline_threads(size_t *n) {
  *n = n_thr;
  return thr;
}
