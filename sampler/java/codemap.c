/*
 * codemap.c — the compiled-code map, writer side: JVMTI callbacks add and remove code under
 * one mutex. The read side, codemap_lookup(), is signal-path code of its own
 * (codemap_lookup_sig.c); the inline records are read by codemap_cmlr.c and the frame-kind
 * index lives in codemap_kinds.c.
 *
 * Design
 *   Entries are immutable once published (but for two fields only writers read, under mu: the
 *   compile id and the `seen` mark of codemap_renew_compiled): a range, its kind, method or
 *   interned stub name, its generation and a private copy of its inline records (sorted by pc),
 *   all in one malloc block.
 *   The index is a two-level snapshot, also immutable: a root holding the first start address
 *   of every leaf (for a binary search) and pointers to leaves; a leaf holds up to LEAF_MAX
 *   entry pointers sorted by start. Live ranges never overlap, so the only candidate for pc is
 *   the entry with the greatest start <= pc.
 *
 *   A writer (under cm.mu) builds the next snapshot by copying only what changes: the leaves
 *   around the edit (re-chunked, merged with a neighbour when they get small) and the root's
 *   two arrays, then publishes it with one atomic store of the root pointer. Per add/remove
 *   that is O(LEAF_MAX + N / LEAF_MAX) pointer copies (N live entries) — about 1,000 words at
 *   N = 50,000 — instead of O(N) for one flat array; unchanged leaves and entries are shared.
 *   Because publication is a single pointer store, a lookup that starts after a remove (or a
 *   replacing add) has returned cannot see the old entry.
 *
 *   Reclamation (epoch.h): a reader increments readers[epoch & 1] before loading the root and decrements
 *   the same counter when done. Superseded roots, leaves and entries go on a retire list; when
 *   RETIRE_BATCH of them have piled up (or on codemap_reclaim/fini) the writer runs a grace
 *   period — advance the epoch and wait for the old parity's counter to reach zero, twice, so
 *   that a reader which read the epoch just before an advance is covered too — and frees them.
 *   Only writers ever wait; readers never loop, lock or allocate. A reader delayed inside a
 *   lookup (preempted, or suspended by another signal's handler) delays the next batch's
 *   reclamation — never a lookup, never an add that does not hit the batch limit.
 *
 * Inline chain at pc: jvmticmlr records carry the pc of each debug-info point (call return
 * addresses, safepoint polls). A sampled pc lies between them; like HotSpot's own approximate
 * PcDesc search (the first PcDesc with pc_offset >= the pc's offset) the chain is taken from
 * the record with the smallest pc >= the sampled pc: the code at pc belongs to the scope of the
 * next debug point. A pc after the last record gets no chain (ninline = 0). Chains longer
 * than CODEMAP_MAX_INLINE keep their CODEMAP_MAX_INLINE innermost frames.
 *
 * Frame kinds: beside the snapshots, the writers keep a reference-counted index of what live
 * nmethods say about methods — "M has compiled code" and "A is inlined into B at bci" (one
 * reference per record that says it) — updated wherever an edit publishes or drops an nmethod.
 * codemap_frame_kinds() reads it under its own mutex (never waiting for a writer's grace
 * period); keys whose count dropped to zero are left out when it is rebuilt, so it follows
 * the live code (codemap_kinds.c).
 *
 * Stub names are interned (intern.h) in storage that is never freed, so a hit's name stays
 * valid after the stub is unloaded or the map is torn down.
 */
#include "codemap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "codemap_internal.h"
#include "intern.h"

#define LEAF_MAX 128            /* entries per leaf */
#define LEAF_MIN (LEAF_MAX / 4) /* an edited leaf smaller than this merges with a neighbour */
#define RETIRE_BATCH 256        /* retired blocks that trigger a grace period */

/* The writers' state (under mu); the published snapshot is codemap_published. */
static struct {
  pthread_mutex_t mu;
  int inited;
  uint64_t gen;
  void **retired;
  size_t nretired, capretired;
  struct codemap_stats st;
} writer = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- reclamation (writers, writer.mu held) -------------------------------------------------- */

/* Returns once every reader that might have loaded a root published before the call is done. */
static void grace_period(void) {
  epoch_wait(&codemap_published.epoch);
  writer.st.grace_waits++;
}

static void reclaim_locked(void) {
  if (writer.nretired == 0) return;
  grace_period();
  for (size_t i = 0; i < writer.nretired; i++) free(writer.retired[i]);
  writer.nretired = 0;
}

/* Makes room for `more` retired blocks, so that retiring after publication cannot fail. */
static int retire_reserve(size_t more) {
  if (writer.nretired + more <= writer.capretired) return 0;
  size_t cap = writer.capretired ? writer.capretired : 64;
  while (cap < writer.nretired + more) cap *= 2;
  void **p = realloc(writer.retired, cap * sizeof *p);
  if (!p) return -ENOMEM;
  writer.retired = p;
  writer.capretired = cap;
  return 0;
}

static void retire(void *p) { writer.retired[writer.nretired++] = p; /* reserved beforehand */ }

/* ---- snapshots (writers, writer.mu held) ---------------------------------------------------- */

static struct cm_root *root_alloc(size_t nleaves) {
  struct cm_root *r = malloc(sizeof *r + nleaves * (sizeof(uintptr_t) + sizeof(struct cm_leaf *)));
  if (!r) return NULL;
  r->nleaves = nleaves;
  r->count = 0;
  r->first = (uintptr_t *)(r + 1);
  r->leaves = (struct cm_leaf **)(r->first + nleaves);
  return r;
}

static int pos_less(struct cm_pos a, struct cm_pos b) {
  return a.l < b.l || (a.l == b.l && a.i < b.i);
}

static struct cm_pos pos_next(const struct cm_root *r, struct cm_pos p) {
  if (++p.i >= r->leaves[p.l]->n) {
    p.l++;
    p.i = 0;
  }
  return p;
}

static struct cm_entry *pos_entry(const struct cm_root *r, struct cm_pos p) {
  return r->leaves[p.l]->e[p.i];
}

/* k empty leaves for m entries, evenly filled (their n set) into *out; k is 0 when m is. Returns 0
 * or -ENOMEM (then *out holds what was made: leaves_free it). */
static int leaves_new(size_t m, size_t k, struct cm_leaf ***out) {
  struct cm_leaf **fresh = k ? calloc(k, sizeof *fresh) : NULL;
  *out = fresh;
  if (k && !fresh) return -ENOMEM;
  for (size_t j = 0; j < k; j++) {
    size_t n = m / k + (j < m % k);
    fresh[j] = malloc(sizeof(struct cm_leaf) + n * sizeof(struct cm_entry *));
    if (!fresh[j]) return -ENOMEM;
    fresh[j]->n = (uint32_t)n;
  }
  return 0;
}

static void leaves_free(struct cm_leaf **fresh, size_t k) {
  for (size_t j = 0; fresh && j < k; j++) free(fresh[j]);
  free(fresh);
}

/*
 * Publishes the snapshot that is the current one with the entries in [a, b) removed and `add`
 * (may be NULL) inserted at a. Retires what the new snapshot no longer uses. Returns 0 or
 * -ENOMEM (nothing changed; `add` still belongs to the caller).
 */
static int edit(struct cm_pos a, struct cm_pos b, struct cm_entry *add) {
  struct cm_root *old = atomic_load_explicit(&codemap_published.root, memory_order_relaxed);
  size_t nl = old->nleaves;
  size_t nremoved = 0;
  for (struct cm_pos p = a; pos_less(p, b); p = pos_next(old, p)) nremoved++;
  if (nremoved == 0 && !add) return 0;

  /* The leaves to rebuild: from a's leaf to the last removed entry's leaf. */
  size_t la, lb;
  if (nl == 0) {
    la = 0;
    lb = 0; /* no leaf: the range [la, lb) below is empty */
  } else {
    la = a.l < nl ? a.l : nl - 1;
    lb = la + 1;
    if (nremoved) {
      struct cm_pos last = a;
      for (size_t k = 1; k < nremoved; k++) last = pos_next(old, last);
      lb = last.l + 1;
    }
  }
  size_t m = (add ? 1 : 0) - nremoved;
  for (size_t l = la; l < lb; l++) m += old->leaves[l]->n;
  if (m < LEAF_MIN && lb - la < nl) { /* small: take a neighbour along */
    if (lb < nl)
      m += old->leaves[lb++]->n;
    else
      m += old->leaves[--la]->n;
  }

  struct cm_entry **tmp = m ? malloc(m * sizeof *tmp) : NULL;
  size_t k = m ? (m + LEAF_MAX - 1) / LEAF_MAX : 0;
  size_t nnl = nl - (lb - la) + k;
  struct cm_root *nr = root_alloc(nnl);
  struct cm_leaf **fresh = NULL;
  if ((m && !tmp) || !nr || leaves_new(m, k, &fresh) || retire_reserve(1 + (lb - la) + nremoved)) {
    leaves_free(fresh, k);
    free(nr);
    free(tmp);
    return -ENOMEM;
  }

  /* Gather the rebuilt leaves' entries in order, with the edit applied. */
  size_t t = 0;
  int placed = !add;
  for (size_t l = la; l < lb; l++)
    for (size_t i = 0; i < old->leaves[l]->n; i++) {
      struct cm_pos p = {l, i};
      if (!placed && !pos_less(p, a)) {
        tmp[t++] = add;
        placed = 1;
      }
      if (!pos_less(p, a) && pos_less(p, b)) continue;
      tmp[t++] = old->leaves[l]->e[i];
    }
  if (!placed) tmp[t++] = add;

  t = 0;
  for (size_t j = 0; j < k; j++)
    for (uint32_t i = 0; i < fresh[j]->n; i++) fresh[j]->e[i] = tmp[t++];
  size_t o = 0;
  for (size_t l = 0; l < la; l++, o++) nr->leaves[o] = old->leaves[l];
  for (size_t j = 0; j < k; j++, o++) nr->leaves[o] = fresh[j];
  for (size_t l = lb; l < nl; l++, o++) nr->leaves[o] = old->leaves[l];
  for (size_t i = 0; i < nnl; i++) nr->first[i] = nr->leaves[i]->e[0]->start;
  nr->count = old->count - nremoved + (add ? 1 : 0);

  atomic_store(&codemap_published.root,
               nr); /* the switch: lookups from here on see the new snapshot */

  if (add) codemap_kinds_update(add, 1);
  for (struct cm_pos p = a; pos_less(p, b); p = pos_next(old, p)) {
    codemap_kinds_update(pos_entry(old, p), -1);
    retire(pos_entry(old, p));
  }
  for (size_t l = la; l < lb; l++) retire(old->leaves[l]);
  retire(old);
  free(fresh);
  free(tmp);
  if (writer.nretired >= RETIRE_BATCH) reclaim_locked();
  return 0;
}

/* ---- entries ------------------------------------------------------------------------------ */

static int cmp_rec(const void *x, const void *y) {
  const struct cm_rec *a = x, *b = y;
  return a->pc < b->pc ? -1 : a->pc > b->pc;
}

/* A new entry for [code, code + size) with copies of the inline records; NULL if no memory. */
static struct cm_entry *entry_new(int kind, jmethodID m, uint32_t name_id, const void *code,
                                  jint size, const void *compile_info) {
  size_t nframes;
  size_t nrec = codemap_cmlr_scan(compile_info, NULL, &nframes, &writer.st.inline_trunc);
  struct cm_entry *e = malloc(sizeof *e + nrec * sizeof(struct cm_rec) +
                              nframes * (sizeof(jmethodID) + sizeof(jint)));
  if (!e) return NULL;
  struct cm_rec *recs = (struct cm_rec *)(e + 1);
  e->recs = recs;
  e->fm = (jmethodID *)(recs + nrec);
  e->fb = (jint *)(e->fm + nframes);
  codemap_cmlr_scan(compile_info, e, &nframes, &writer.st.inline_trunc);
  qsort(recs, nrec, sizeof *recs, cmp_rec);
  e->start = (uintptr_t)code;
  e->end = (uintptr_t)code + (uintptr_t)size;
  e->kind = kind;
  e->method = m;
  e->name_id = name_id;
  e->name = name_id == INTERN_NO_ID ? NULL : intern_name(name_id);
  e->gen = ++writer.gen;
  e->compile_id = 0;
  e->seen = 0;
  e->nrec = (uint32_t)nrec;
  return e;
}

/* Inserts e, replacing the live entries it overlaps. writer.mu held. */
static int insert(struct cm_entry *e) {
  struct cm_root *r = atomic_load_explicit(&codemap_published.root, memory_order_relaxed);
  int found;
  struct cm_pos a = codemap_pos_floor(r, e->start, &found);
  if (found && pos_entry(r, a)->end <= e->start)
    a = pos_next(r, a); /* the floor ends before e: the first candidate is the next one */
  struct cm_pos b = a;
  size_t nrep = 0;
  while (b.l < r->nleaves && pos_entry(r, b)->start < e->end) {
    b = pos_next(r, b);
    nrep++;
  }
  int rc = edit(a, b, e);
  if (rc == 0) {
    writer.st.adds++;
    writer.st.replaced += nrep;
  }
  return rc;
}

static int check_range(const void *code, jint size) {
  if (!code || size <= 0 || (uintptr_t)code + (uintptr_t)size < (uintptr_t)code) return -EINVAL;
  return 0;
}

/* ---- public writer API ------------------------------------------------------------------ */

/* Creates the empty map. Idempotent. Returns 0 or -ENOMEM. Not signal-safe. */
int codemap_init(void) {
  pthread_mutex_lock(&writer.mu);
  int rc = 0;
  if (!writer.inited) {
    struct cm_root *r = root_alloc(0);
    if (r) {
      atomic_store(&codemap_published.root, r);
      writer.inited = 1;
    } else {
      rc = -ENOMEM;
    }
  }
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* Drops every entry, frees the map (interned names stay) and zeroes the counters. Concurrent lookups are safe and
 * return 0 afterwards; concurrent writers are not allowed. */
void codemap_fini(void) {
  pthread_mutex_lock(&writer.mu);
  if (writer.inited) {
    struct cm_root *r = atomic_exchange(&codemap_published.root, NULL);
    reclaim_locked();
    grace_period();
    for (size_t l = 0; l < r->nleaves; l++) {
      for (uint32_t i = 0; i < r->leaves[l]->n; i++) free(r->leaves[l]->e[i]);
      free(r->leaves[l]);
    }
    free(r);
    free(writer.retired);
    writer.retired = NULL;
    writer.nretired = writer.capretired = 0;
    codemap_kinds_reset();
    memset(&writer.st, 0, sizeof writer.st);
    writer.inited = 0;
  }
  pthread_mutex_unlock(&writer.mu);
}

/* Adds one entry (a stub's name is interned first). Any thread, not signal-safe. */
static int add_entry(int kind, jmethodID m, const char *name, const void *code, jint size,
                     const void *info, int frame_words, int32_t compile_id) {
  int rc = check_range(code, size);
  if (rc) return rc;
  pthread_mutex_lock(&writer.mu);
  if (!writer.inited) {
    rc = -ENODEV;
  } else {
    if (kind == CODEMAP_STUB && (!name || !*name)) name = "unknown stub"; /* never an empty frame */
    uint32_t id = kind == CODEMAP_STUB ? intern_string(name, strlen(name)) : INTERN_NO_ID;
    struct cm_entry *e = kind != CODEMAP_STUB || id != INTERN_NO_ID
                             ? entry_new(kind, m, id, code, size, info)
                             : NULL;
    if (e) {
      e->frame_words = frame_words > 0 ? frame_words : 0;
      e->compile_id = compile_id > 0 ? compile_id : 0;
      e->interpreter = kind == CODEMAP_STUB && strcmp(name, "Interpreter") == 0;
    }
    rc = e ? insert(e) : -ENOMEM;
    if (rc && e) free(e);
  }
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* Adds an nmethod; see codemap.h. Any thread, not signal-safe. */
int codemap_add_method(jmethodID m, const void *code, jint size, const void *compile_info) {
  return add_entry(CODEMAP_NMETHOD, m, NULL, code, size, compile_info, 0, 0);
}

/* Adds an nmethod read from the code cache; see codemap.h. Any thread, not signal-safe. */
int codemap_add_compiled(jmethodID m, const void *code, jint size, const void *compile_info,
                         int32_t compile_id) {
  return add_entry(CODEMAP_NMETHOD, m, NULL, code, size, compile_info, 0, compile_id);
}

/* The live nmethod entry of m that starts at code (its position in *at), or NULL. writer.mu
 * held. */
static struct cm_entry *nmethod_at(jmethodID m, const void *code, struct cm_pos *at) {
  struct cm_root *r = atomic_load_explicit(&codemap_published.root, memory_order_relaxed);
  int found;
  *at = codemap_pos_floor(r, (uintptr_t)code, &found);
  struct cm_entry *e = found ? pos_entry(r, *at) : NULL;
  return e && e->start == (uintptr_t)code && e->kind == CODEMAP_NMETHOD && e->method == m ? e
                                                                                          : NULL;
}

/* Marks the same compilation seen again; see codemap.h. Takes writer.mu. */
int codemap_renew_compiled(jmethodID m, const void *code, jint size, int32_t compile_id) {
  if (compile_id <= 0 || check_range(code, size)) return -ENOENT;
  pthread_mutex_lock(&writer.mu);
  int rc = -ENODEV;
  if (writer.inited) {
    struct cm_pos at;
    struct cm_entry *e = nmethod_at(m, code, &at);
    rc = -ENOENT;
    if (e && e->end == (uintptr_t)code + (uintptr_t)size && e->compile_id == compile_id) {
      e->seen = ++writer.gen;
      rc = 0;
    }
  }
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* Renews a stub; see codemap.h. Takes writer.mu. */
int codemap_renew_stub(const char *name, const void *code, jint size) {
  if (!name || !*name) name = "unknown stub"; /* as add_entry names it */
  if (check_range(code, size)) return -ENOENT;
  pthread_mutex_lock(&writer.mu);
  int rc = -ENODEV;
  if (writer.inited) {
    struct cm_root *r = atomic_load_explicit(&codemap_published.root, memory_order_relaxed);
    int found;
    struct cm_pos at = codemap_pos_floor(r, (uintptr_t)code, &found);
    struct cm_entry *e = found ? pos_entry(r, at) : NULL;
    rc = -ENOENT;
    if (e && e->kind == CODEMAP_STUB && e->start == (uintptr_t)code &&
        e->end == (uintptr_t)code + (uintptr_t)size && e->name && strcmp(e->name, name) == 0) {
      e->seen = ++writer.gen;
      rc = 0;
    }
  }
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* Adds a stub; see codemap.h. Any thread, not signal-safe. */
int codemap_add_stub(const char *name, const void *code, jint size, int frame_words) {
  return add_entry(CODEMAP_STUB, NULL, name, code, size, NULL, frame_words, 0);
}

/* Removes the nmethod of m at code; see codemap.h. Any thread, not signal-safe. */
int codemap_remove_method(jmethodID m, const void *code) {
  pthread_mutex_lock(&writer.mu);
  int rc = -ENODEV;
  if (writer.inited) {
    struct cm_pos a;
    if (!nmethod_at(m, code, &a)) {
      writer.st.remove_miss++;
      rc = -ENOENT;
    } else {
      rc = edit(a, pos_next(atomic_load_explicit(&codemap_published.root, memory_order_relaxed), a),
                NULL);
      if (rc == 0) writer.st.removes++;
    }
  }
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* The newest entry's generation; see codemap.h. Takes writer.mu. */
uint64_t codemap_generation(void) {
  pthread_mutex_lock(&writer.mu);
  uint64_t g = writer.gen;
  pthread_mutex_unlock(&writer.mu);
  return g;
}

/* Whether a sweep from gen keeps e: added, or found again by a walk of the code cache, since. */
static int alive(const struct cm_entry *e, uint64_t gen, int compiled) {
  return e->gen > gen || e->seen > gen || (compiled && e->kind != CODEMAP_NMETHOD);
}

/* Publishes a snapshot of the entries newer than gen, in one edit of the whole map (a replay
 * leaves few stale entries, but they can be anywhere: one edit each would copy the root each
 * time). writer.mu held. Returns the number dropped or -ENOMEM. */
static int sweep_locked(uint64_t gen, int compiled) {
  struct cm_root *old = atomic_load_explicit(&codemap_published.root, memory_order_relaxed);
  size_t keep = 0, total = 0;
  for (size_t l = 0; l < old->nleaves; l++)
    for (uint32_t i = 0; i < old->leaves[l]->n; i++, total++)
      keep += alive(old->leaves[l]->e[i], gen, compiled);
  if (keep == total) return 0;
  size_t k = (keep + LEAF_MAX - 1) / LEAF_MAX;
  struct cm_root *nr = root_alloc(k);
  struct cm_leaf **fresh = NULL;
  if (!nr || leaves_new(keep, k, &fresh) || retire_reserve(1 + old->nleaves + (total - keep))) {
    leaves_free(fresh, k);
    free(nr);
    return -ENOMEM;
  }
  size_t j = 0, i = 0;
  for (size_t l = 0; l < old->nleaves; l++)
    for (uint32_t x = 0; x < old->leaves[l]->n; x++) {
      struct cm_entry *e = old->leaves[l]->e[x];
      if (!alive(e, gen, compiled)) continue;
      fresh[j]->e[i++] = e;
      if (i == fresh[j]->n) j++, i = 0;
    }
  for (size_t l = 0; l < k; l++) {
    nr->leaves[l] = fresh[l];
    nr->first[l] = fresh[l]->e[0]->start;
  }
  nr->count = keep;
  atomic_store(&codemap_published.root, nr); /* lookups from here on do not see the dropped */
  for (size_t l = 0; l < old->nleaves; l++) {
    for (uint32_t x = 0; x < old->leaves[l]->n; x++) {
      struct cm_entry *e = old->leaves[l]->e[x];
      if (alive(e, gen, compiled)) continue;
      codemap_kinds_update(e, -1);
      retire(e);
    }
    retire(old->leaves[l]);
  }
  retire(old);
  free(fresh);
  writer.st.swept += total - keep;
  if (writer.nretired >= RETIRE_BATCH) reclaim_locked();
  return (int)(total - keep);
}

/* Drops what a replay from gen did not renew; see codemap.h. Takes writer.mu. */
int codemap_sweep(uint64_t gen) {
  pthread_mutex_lock(&writer.mu);
  int rc = writer.inited ? sweep_locked(gen, 0) : -ENODEV;
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* See codemap.h. Takes writer.mu. */
int codemap_sweep_compiled(uint64_t gen) {
  pthread_mutex_lock(&writer.mu);
  int rc = writer.inited ? sweep_locked(gen, 1) : -ENODEV;
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

/* Copies the writer-side counters. Takes writer.mu. */
void codemap_stats(struct codemap_stats *out) {
  pthread_mutex_lock(&writer.mu);
  *out = writer.st;
  pthread_mutex_unlock(&writer.mu);
  codemap_kinds_stats(out);
}

/* Frees retired snapshots now, after a grace period. Takes writer.mu. */
void codemap_reclaim(void) {
  pthread_mutex_lock(&writer.mu);
  reclaim_locked();
  pthread_mutex_unlock(&writer.mu);
}
