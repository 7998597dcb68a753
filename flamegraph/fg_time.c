/*
 * fg_time.c — a profile's optional time axis (fg_profile_time_*) and its form in the HTML page:
 * when each part of the profile was taken, as entries (cell, frame, thread, weight) that the
 * page sums over a chosen range of cells into the flame graph it draws.
 *
 * An entry names the frame its weight was added to (fg_profile_add_capped_node: the stack's
 * leaf, or the `cut` frame a stack went under), so the axis follows the graph's merging of
 * equal stacks and its cutting. In the page an entry names a page node instead: the frame, or
 * when the writer pruned it, its nearest kept ancestor, marked (the weight lies in frames too
 * small to draw, as the whole run's "pruned" samples do).
 * Hazards: the page's size — past max_entries, cells are merged (5, 10, 50, 100 ... at a time)
 * and the page is told ("merged"); no weight is ever dropped.
 */
#include "fg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* arr (n used of *cap elements of `size` bytes) with room for one more: itself, or grown to
 * twice (from 64); NULL when out of memory (arr is then unchanged). */
static void *with_room(void *arr, size_t n, size_t *cap, size_t size) {
  if (n < *cap) return arr;
  size_t c = *cap ? 2 * *cap : 64;
  void *na = realloc(arr, c * size);
  if (na) *cap = c;
  return na;
}

/* See fg_internal.h. */
void fg_time_free(fg_time *t) {
  if (!t) return;
  free(t->entries);
  free(t->threads);
  free(t->marks);
  free(t);
}

/* fg_profile_time_init: see flamegraph.h. */
int fg_profile_time_init(fg_profile *p, int64_t start_wall_ns, uint64_t duration_ns,
                         uint64_t cell_ns) {
  if (!p || cell_ns == 0) return -EINVAL;
  if (!p->time && !(p->time = calloc(1, sizeof *p->time))) return -ENOMEM;
  fg_time *t = p->time;
  t->n = 0;
  t->nthreads = 0;
  t->nmarks = 0;
  t->marks_lost = 0;
  t->start_wall_ns = start_wall_ns;
  t->duration_ns = duration_ns;
  t->cell_ns = cell_ns;
  return 0;
}

/* fg_profile_time_thread: see flamegraph.h. */
int fg_profile_time_thread(fg_profile *p, int64_t tid, const char *name) {
  if (!p || !p->time || !name) return -EINVAL;
  fg_time *t = p->time;
  if (t->nthreads >= INT32_MAX) return -ENOMEM;
  fg_time_thread *nt = with_room(t->threads, t->nthreads, &t->cap_threads, sizeof *nt);
  if (!nt) return -ENOMEM;
  t->threads = nt;
  size_t len = strlen(name);
  if (len > UINT32_MAX) return -EINVAL;
  char *copy = fg_arena_strdup(p, name, len);
  if (!copy) return -ENOMEM;
  t->threads[t->nthreads] = (fg_time_thread){tid, copy, (uint32_t)len};
  return (int)t->nthreads++;
}

/* fg_profile_time_add: see flamegraph.h. */
int fg_profile_time_add(fg_profile *p, uint32_t cell, uint32_t node, uint32_t thread,
                        uint64_t weight) {
  if (!p || !p->time || node == 0 || node >= p->nnodes || thread >= p->time->nthreads)
    return -EINVAL;
  fg_time *t = p->time;
  fg_time_entry *ne = with_room(t->entries, t->n, &t->cap, sizeof *ne);
  if (!ne) return -ENOMEM;
  t->entries = ne;
  t->entries[t->n++] = (fg_time_entry){cell, node, thread, weight};
  return 0;
}

/* fg_profile_time_mark: see flamegraph.h. */
int fg_profile_time_mark(fg_profile *p, uint64_t at_ns, uint64_t dur_ns, const char *what) {
  if (!p || !p->time || !what || !*what) return -EINVAL;
  fg_time *t = p->time;
  size_t len = strlen(what);
  if (len > UINT32_MAX) return -EINVAL;
  fg_time_mark *nm = with_room(t->marks, t->nmarks, &t->cap_marks, sizeof *nm);
  if (!nm) return -ENOMEM;
  t->marks = nm;
  char *copy = fg_arena_strdup(p, what, len);
  if (!copy) return -ENOMEM;
  t->marks[t->nmarks++] = (fg_time_mark){at_ns, dur_ns, copy, (uint32_t)len};
  return 0;
}

/* fg_profile_time_marks_lost: see flamegraph.h. */
void fg_profile_time_marks_lost(fg_profile *p, uint64_t n) {
  if (p && p->time) p->time->marks_lost = n;
}

/* ---- the page's form ---- */

/* entries order: by cell, then stack (the page's), then thread */
static int by_cell(const void *a, const void *b) {
  const fg_time_entry *x = a, *y = b;
  if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return (x->thread > y->thread) - (x->thread < y->thread);
}

/* Sorts e[0..n) and adds up the entries equal but for their weight; returns how many remain. */
static size_t merge_equal(fg_time_entry *e, size_t n) {
  if (n == 0) return 0;
  qsort(e, n, sizeof *e, by_cell);
  size_t o = 0;
  for (size_t i = 1; i < n; i++) {
    if (e[i].cell == e[o].cell && e[i].node == e[o].node && e[i].thread == e[o].thread)
      e[o].weight += e[i].weight;
    else
      e[++o] = e[i];
  }
  return o + 1;
}

/* The page's entries as base64 of LEB128 numbers (flamegraph/README.md): a stream of bytes
 * written three at a time as four characters. */
struct b64 {
  fg_buf *b;
  uint8_t g[3];
  int n;
};

static void b64_out(struct b64 *z, int nbytes) {
  static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t v = (uint32_t)z->g[0] << 16 | (uint32_t)z->g[1] << 8 | z->g[2];
  char c[4] = {A[v >> 18], A[v >> 12 & 63], nbytes > 1 ? A[v >> 6 & 63] : '=',
               nbytes > 2 ? A[v & 63] : '='};
  for (int i = 0; i < 4; i++) fg_buf_putc(z->b, c[i]);
  z->g[0] = z->g[1] = z->g[2] = 0;
  z->n = 0;
}

static void b64_byte(struct b64 *z, uint8_t x) {
  z->g[z->n++] = x;
  if (z->n == 3) b64_out(z, 3);
}

static void b64_var(struct b64 *z, uint64_t v) {
  do {
    b64_byte(z, (uint8_t)((v & 127) | (v > 127 ? 128 : 0)));
    v >>= 7;
  } while (v);
}

static void b64_flush(struct b64 *z) {
  if (z->n) b64_out(z, z->n);
}

/* See fg_internal.h. The entries are copied with their node replaced by the page's stack index
 * (stacks: one per distinct page reference, in order of first use), merged, and merged again
 * across cells while there are more than max_entries. */
int fg_time_write_page(fg_buf *b, const fg_profile *p, const uint32_t *page_of,
                       size_t max_entries) {
  const fg_time *t = p->time;
  if (!t) return 0;
  fg_time_entry *e = malloc((t->n ? t->n : 1) * sizeof *e);
  int64_t *ref_of = malloc(p->nnodes * sizeof *ref_of); /* node -> page reference, 0: not yet */
  uint32_t *stack_of = calloc((size_t)p->nnodes * 2, sizeof *stack_of); /* ref -> stack+1 */
  int64_t *stacks = malloc((t->n ? t->n : 1) * sizeof *stacks);
  if (!e || !ref_of || !stack_of || !stacks) {
    free(e);
    free(ref_of);
    free(stack_of);
    free(stacks);
    return -ENOMEM;
  }
  memset(ref_of, 0, p->nnodes * sizeof *ref_of);
  size_t n = 0, nstacks = 0;
  for (size_t i = 0; i < t->n; i++) {
    const fg_time_entry *x = &t->entries[i];
    if (!x->weight) continue;
    int64_t ref = ref_of[x->node];
    if (!ref) { /* the page node: the frame itself (ref k+1), or a kept ancestor (-(k+1)) */
      uint32_t a = x->node;
      while (page_of[a] == FG_NO_NAME) a = p->nodes[a].parent; /* the root is always kept */
      ref = a == x->node ? (int64_t)page_of[a] + 1 : -((int64_t)page_of[a] + 1);
      ref_of[x->node] = ref;
    }
    size_t slot = ref > 0 ? (size_t)(ref - 1) : p->nnodes + (size_t)(-ref - 1);
    if (!stack_of[slot]) {
      stacks[nstacks] = ref;
      stack_of[slot] = (uint32_t)++nstacks;
    }
    e[n++] = (fg_time_entry){x->cell, stack_of[slot] - 1, x->thread, x->weight};
  }
  n = merge_equal(e, n);
  /* cells merged: x5, x2, x5, x2 ... (20 ms: 100 ms, 200 ms, 1 s, 2 s, 10 s ...) */
  uint64_t merged = 1;
  /* (entries sorted by cell: the last has the largest; once every entry is in cell 0 only
   * distinct stacks and threads remain, which no merging of cells can reduce) */
  for (int step = 0; max_entries && n > max_entries && e[n - 1].cell > 0; step++) {
    uint32_t f = step % 2 ? 2 : 5;
    merged *= f;
    for (size_t i = 0; i < n; i++) e[i].cell /= f;
    n = merge_equal(e, n);
  }

  fg_buf_puts(b, ",\n\"time\":{\"startMs\":");
  fg_buf_i64(b, t->start_wall_ns / 1000000);
  fg_buf_puts(b, ",\"durationNs\":");
  fg_buf_u64(b, t->duration_ns);
  fg_buf_puts(b, ",\"cellNs\":");
  fg_buf_u64(b, t->cell_ns * merged);
  fg_buf_puts(b, ",\"merged\":");
  fg_buf_u64(b, merged);
  fg_buf_puts(b, ",\n\"threads\":[");
  for (size_t i = 0; i < t->nthreads; i++) {
    fg_buf_puts(b, i ? (i & 15 ? ",[" : ",\n[") : "[");
    fg_buf_i64(b, t->threads[i].tid);
    fg_buf_putc(b, ',');
    fg_buf_json(b, t->threads[i].name, t->threads[i].len);
    fg_buf_putc(b, ']');
  }
  fg_buf_puts(b, "],\n\"marks\":[");
  for (size_t i = 0; i < t->nmarks; i++) {
    fg_buf_puts(b, i ? (i & 15 ? ",[" : ",\n[") : "[");
    fg_buf_u64(b, t->marks[i].at_ns);
    fg_buf_putc(b, ',');
    fg_buf_u64(b, t->marks[i].dur_ns);
    fg_buf_putc(b, ',');
    fg_buf_json(b, t->marks[i].what, t->marks[i].len);
    fg_buf_putc(b, ']');
  }
  fg_buf_puts(b, "],\n\"marksLost\":");
  fg_buf_u64(b, t->marks_lost);
  fg_buf_puts(b, ",\n\"stacks\":[");
  for (size_t i = 0; i < nstacks; i++) {
    if (i) fg_buf_puts(b, (i & 31) ? "," : ",\n");
    fg_buf_i64(b, stacks[i] > 0 ? stacks[i] - 1 : stacks[i]);
  }
  fg_buf_puts(b, "],\n\"n\":");
  fg_buf_u64(b, n);
  fg_buf_puts(b, ",\n\"packed\":\"");
  struct b64 z = {b, {0}, 0};
  for (size_t i = 0; i < n; i++) {
    uint32_t dc = e[i].cell - (i ? e[i - 1].cell : 0);
    b64_var(&z, dc);
    b64_var(&z, i && !dc ? e[i].node - e[i - 1].node : e[i].node);
    b64_var(&z, e[i].thread);
    b64_var(&z, e[i].weight);
  }
  b64_flush(&z);
  fg_buf_puts(b, "\"}");
  free(e);
  free(ref_of);
  free(stack_of);
  free(stacks);
  return 0;
}
