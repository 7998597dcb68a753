/*
 * java/codemap_lookup_sig.c — SIGNAL PATH: the code map's read side (see codemap.c for the design). It
 * runs in the sampling signal handler on any thread while JVMTI callbacks on other threads add
 * and remove code: lock-free and wait-free, no allocation; reads only immutable memory that
 * cannot be freed while the reader's epoch counter is up.
 */
#include "codemap_internal.h"

struct codemap_published codemap_published;

/* The position of the entry with the greatest start <= addr (found = 1), or else of the first
 * entry (found = 0; the end position if the map is empty). */
struct cm_pos codemap_pos_floor(const struct cm_root *r, uintptr_t addr, int *found) {
  struct cm_pos p = {0, 0};
  size_t lo = 0, hi = r->nleaves;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->first[mid] <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = lo > 0;
  if (lo == 0) return p;
  const struct cm_leaf *l = r->leaves[lo - 1];
  size_t a = 0, b = l->n;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (l->e[mid]->start <= addr)
      a = mid + 1;
    else
      b = mid;
  }
  p.l = lo - 1;
  p.i = a - 1;
  return p;
}

/* The entry whose range contains pc, or NULL. Signal-safe (reads only). */
static const struct cm_entry *find_entry(const struct cm_root *r, uintptr_t pc) {
  int found;
  struct cm_pos p = codemap_pos_floor(r, pc, &found);
  if (!found) return NULL;
  const struct cm_entry *e = r->leaves[p.l]->e[p.i];
  return pc < e->end ? e : NULL;
}

/* Copies e into hit, with the inline chain of the first record whose pc >= pc. */
static void fill_hit(const struct cm_entry *e, uintptr_t pc, struct codemap_hit *hit) {
  hit->kind = e->kind;
  hit->start = e->start;
  hit->end = e->end;
  hit->method = e->method;
  hit->name = e->name;
  hit->name_id = e->name_id;
  hit->frame_words = e->frame_words;
  hit->interpreter = e->interpreter;
  hit->generation = e->gen;
  hit->compile_id = e->compile_id;
  hit->ninline = 0;
  size_t lo = 0, hi = e->nrec;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e->recs[mid].pc < pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == e->nrec) return;
  const struct cm_rec *rec = &e->recs[lo];
  for (uint32_t i = 0; i < rec->depth; i++) {
    hit->inl_method[i] = e->fm[rec->first + i];
    hit->inl_bci[i] = e->fb[rec->first + i];
  }
  hit->ninline = (int)rec->depth;
}

/* Looks up pc: 1 and *hit filled, or 0. ASYNC-SIGNAL-SAFE, lock-free and wait-free: two atomic
 * increments/decrements and two binary searches over immutable memory that cannot be freed
 * while the reader's counter is up. */
int codemap_lookup(uintptr_t pc, struct codemap_hit *hit) {
  unsigned p = epoch_enter(&codemap_published.epoch);
  const struct cm_root *r = atomic_load(&codemap_published.root);
  int found = 0;
  if (r) {
    const struct cm_entry *e = find_entry(r, pc);
    if (e) {
      fill_hit(e, pc, hit);
      found = 1;
    }
  }
  epoch_exit(&codemap_published.epoch, p);
  return found;
}

/* Live entries in the current snapshot. Signal-safe (same protocol as codemap_lookup). */
size_t codemap_count(void) {
  unsigned p = epoch_enter(&codemap_published.epoch);
  const struct cm_root *r = atomic_load(&codemap_published.root);
  size_t n = r ? r->count : 0;
  epoch_exit(&codemap_published.epoch, p);
  return n;
}
