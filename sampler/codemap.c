/*
 * codemap.c — the compiled-code map. codemap_lookup() is SIGNAL HANDLER CODE: it runs in
 * signal context on any thread while JVMTI callbacks on other threads add and remove code.
 *
 * Design
 *   Entries are immutable once published: a range, its kind, method or interned stub name, its
 *   generation and a private copy of its inline records (sorted by pc), all in one malloc block.
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
 *   Reclamation: a reader increments readers[epoch & 1] before loading the root and decrements
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
 * period); keys whose count drops to zero stay, so the index only grows with the distinct
 * methods and call sites ever compiled.
 *
 * Stub names are interned in storage that is never freed, so a hit's name stays valid after
 * the stub is unloaded or the map is torn down.
 */
#include "codemap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_MAX 128           /* entries per leaf */
#define LEAF_MIN (LEAF_MAX / 4) /* an edited leaf smaller than this merges with a neighbour */
#define RETIRE_BATCH 256       /* retired blocks that trigger a grace period */
#define MAX_CMLR_HEADERS 64    /* guard against a malformed record list */

struct cm_rec {
  uintptr_t pc;
  uint32_t first; /* index of its innermost frame in fm[] / fb[] */
  uint32_t depth;
};

struct cm_entry {
  uintptr_t start, end;
  int kind;
  jmethodID method;
  const char *name;
  int frame_words;
  int interpreter; /* the stub is HotSpot's template interpreter, decided once at add */
  uint64_t gen;
  uint32_t nrec;
  const struct cm_rec *recs;
  const jmethodID *fm;
  const jint *fb;
};

/* A frame-kind fact: `callee` inlined into `caller` at `bci`, or (caller NULL, bci -1)
 * `callee` has compiled code; refs counts the live records that say so. */
struct ki_slot {
  jmethodID callee, caller;
  jint bci;
  uint32_t refs;
};

struct cm_leaf {
  uint32_t n;
  struct cm_entry *e[]; /* n entries, sorted by start */
};

struct cm_root {
  size_t nleaves;
  size_t count;
  uintptr_t *first;        /* first[i] == leaves[i]->e[0]->start */
  struct cm_leaf **leaves; /* both arrays live in the root's own block */
};

/* A counter alone on its cache line: readers on other CPUs do not share the line. */
struct cm_counter {
  _Alignas(64) atomic_long n;
};

static struct {
  _Atomic(struct cm_root *) root;
  atomic_uint_fast64_t epoch;
  struct cm_counter readers[2];
  pthread_mutex_t mu;
  int inited;
  uint64_t gen;
  void **retired;
  size_t nretired, capretired;
  struct codemap_stats st;
  char **names; /* interned stub names (open addressing), never freed */
  size_t nnames, capnames;
  pthread_mutex_t ki_mu; /* the frame-kind index; taken inside mu by writers, alone by readers */
  struct ki_slot *ki;    /* open addressing */
  size_t nki, capki;
} cm = {.mu = PTHREAD_MUTEX_INITIALIZER, .ki_mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- reader side (signal-safe) ---------------------------------------------------------- */

/* A position in a snapshot: leaf l, index i (i < leaves[l]->n), or l == nleaves for the end. */
struct cm_pos {
  size_t l, i;
};

/* The position of the entry with the greatest start <= addr (found = 1), or else of the first
 * entry (found = 0; the end position if the map is empty). */
static struct cm_pos pos_floor(const struct cm_root *r, uintptr_t addr, int *found) {
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
  if (lo == 0)
    return p;
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
  struct cm_pos p = pos_floor(r, pc, &found);
  if (!found)
    return NULL;
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
  hit->frame_words = e->frame_words;
  hit->interpreter = e->interpreter;
  hit->generation = e->gen;
  hit->ninline = 0;
  size_t lo = 0, hi = e->nrec;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e->recs[mid].pc < pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == e->nrec)
    return;
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
  unsigned p = (unsigned)(atomic_load(&cm.epoch) & 1);
  atomic_fetch_add(&cm.readers[p].n, 1);
  const struct cm_root *r = atomic_load(&cm.root);
  int found = 0;
  if (r) {
    const struct cm_entry *e = find_entry(r, pc);
    if (e) {
      fill_hit(e, pc, hit);
      found = 1;
    }
  }
  atomic_fetch_sub(&cm.readers[p].n, 1);
  return found;
}

/* Live entries in the current snapshot. Signal-safe (same protocol as codemap_lookup). */
size_t codemap_count(void) {
  unsigned p = (unsigned)(atomic_load(&cm.epoch) & 1);
  atomic_fetch_add(&cm.readers[p].n, 1);
  const struct cm_root *r = atomic_load(&cm.root);
  size_t n = r ? r->count : 0;
  atomic_fetch_sub(&cm.readers[p].n, 1);
  return n;
}

/* ---- reclamation (writers, cm.mu held) -------------------------------------------------- */

/* Returns once every reader that might have loaded a root published before the call is done. */
static void grace_period(void) {
  for (int k = 0; k < 2; k++) {
    uint_fast64_t old = atomic_fetch_add(&cm.epoch, 1);
    for (unsigned spins = 0; atomic_load(&cm.readers[old & 1].n) != 0; spins++)
      if (spins >= 64)
        sched_yield();
  }
  cm.st.grace_waits++;
}

static void reclaim_locked(void) {
  if (cm.nretired == 0)
    return;
  grace_period();
  for (size_t i = 0; i < cm.nretired; i++)
    free(cm.retired[i]);
  cm.nretired = 0;
}

/* Makes room for `more` retired blocks, so that retiring after publication cannot fail. */
static int retire_reserve(size_t more) {
  if (cm.nretired + more <= cm.capretired)
    return 0;
  size_t cap = cm.capretired ? cm.capretired : 64;
  while (cap < cm.nretired + more)
    cap *= 2;
  void **p = realloc(cm.retired, cap * sizeof *p);
  if (!p)
    return -ENOMEM;
  cm.retired = p;
  cm.capretired = cap;
  return 0;
}

static void retire(void *p) { cm.retired[cm.nretired++] = p; /* reserved beforehand */ }

/* ---- the frame-kind index (cm.ki_mu held) ----------------------------------------------- */

static size_t ki_hash(jmethodID callee, jmethodID caller, jint bci) {
  uint64_t h = (uint64_t)(uintptr_t)callee * 0x9e3779b97f4a7c15ull;
  h ^= ((uint64_t)(uintptr_t)caller + (uint64_t)(uint32_t)bci) * 0xc2b2ae3d27d4eb4full;
  return (size_t)(h ^ h >> 29);
}

/* The slot for the key: the matching one, or the empty one where it would go. NULL when the
 * index has no storage yet. */
static struct ki_slot *ki_find(jmethodID callee, jmethodID caller, jint bci) {
  if (!cm.capki)
    return NULL;
  for (size_t i = ki_hash(callee, caller, bci);; i++) {
    struct ki_slot *k = &cm.ki[i & (cm.capki - 1)];
    if (!k->callee || (k->callee == callee && k->caller == caller && k->bci == bci))
      return k;
  }
}

/* The live references to the key (0: nobody says so). */
static uint32_t ki_refs(jmethodID callee, jmethodID caller, jint bci) {
  const struct ki_slot *k = callee ? ki_find(callee, caller, bci) : NULL;
  return k && k->callee ? k->refs : 0;
}

/* Adds delta (+1 or -1) to the key's references; a reference that cannot be stored is counted
 * lost (its frames are then judged by the weaker evidence). */
static void ki_add(jmethodID callee, jmethodID caller, jint bci, int delta) {
  if (!callee)
    return;
  if (delta > 0 && (cm.nki + 1) * 4 > cm.capki * 3) {
    size_t cap = cm.capki ? cm.capki * 2 : 1024;
    struct ki_slot *t = calloc(cap, sizeof *t), *old = cm.ki;
    size_t oldcap = cm.capki;
    if (!t) {
      cm.st.kinds_lost++;
      return;
    }
    cm.ki = t;
    cm.capki = cap;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].callee)
        *ki_find(old[i].callee, old[i].caller, old[i].bci) = old[i];
    free(old);
  }
  struct ki_slot *k = ki_find(callee, caller, bci);
  if (!k || (!k->callee && delta < 0))
    return; /* a removal whose addition was lost */
  if (!k->callee) {
    *k = (struct ki_slot){callee, caller, bci, 0};
    cm.nki++;
  }
  if (delta > 0 || k->refs > 0)
    k->refs += (uint32_t)delta;
}

/* Adds (delta 1) or drops (-1) what the nmethod entry e says about its methods. cm.mu held;
 * takes cm.ki_mu. */
static void ki_entry(const struct cm_entry *e, int delta) {
  if (e->kind != CODEMAP_NMETHOD)
    return;
  pthread_mutex_lock(&cm.ki_mu);
  ki_add(e->method, NULL, -1, delta);
  for (uint32_t r = 0; r < e->nrec; r++) {
    const jmethodID *m = e->fm + e->recs[r].first;
    const jint *b = e->fb + e->recs[r].first;
    for (uint32_t i = 0; i + 1 < e->recs[r].depth; i++)
      ki_add(m[i], m[i + 1], b[i + 1], delta);
  }
  pthread_mutex_unlock(&cm.ki_mu);
}

/* ---- snapshots (writers, cm.mu held) ---------------------------------------------------- */

static struct cm_root *root_alloc(size_t nleaves) {
  struct cm_root *r = malloc(sizeof *r + nleaves * (sizeof(uintptr_t) + sizeof(struct cm_leaf *)));
  if (!r)
    return NULL;
  r->nleaves = nleaves;
  r->count = 0;
  r->first = (uintptr_t *)(r + 1);
  r->leaves = (struct cm_leaf **)(r->first + nleaves);
  return r;
}

static int pos_less(struct cm_pos a, struct cm_pos b) { return a.l < b.l || (a.l == b.l && a.i < b.i); }

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

/*
 * Publishes the snapshot that is the current one with the entries in [a, b) removed and `add`
 * (may be NULL) inserted at a. Retires what the new snapshot no longer uses. Returns 0 or
 * -ENOMEM (nothing changed; `add` still belongs to the caller).
 */
static int edit(struct cm_pos a, struct cm_pos b, struct cm_entry *add) {
  struct cm_root *old = atomic_load_explicit(&cm.root, memory_order_relaxed);
  size_t nl = old->nleaves;
  size_t nremoved = 0;
  for (struct cm_pos p = a; pos_less(p, b); p = pos_next(old, p))
    nremoved++;
  if (nremoved == 0 && !add)
    return 0;

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
      for (size_t k = 1; k < nremoved; k++)
        last = pos_next(old, last);
      lb = last.l + 1;
    }
  }
  size_t m = (add ? 1 : 0) - nremoved;
  for (size_t l = la; l < lb; l++)
    m += old->leaves[l]->n;
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
  struct cm_leaf **fresh = k ? calloc(k, sizeof *fresh) : NULL;
  int err = (m && !tmp) || !nr || (k && !fresh) || retire_reserve(1 + (lb - la) + nremoved);
  for (size_t j = 0; !err && j < k; j++) {
    size_t n = m / k + (j < m % k);
    fresh[j] = malloc(sizeof(struct cm_leaf) + n * sizeof(struct cm_entry *));
    if (!fresh[j])
      err = 1;
    else
      fresh[j]->n = (uint32_t)n;
  }
  if (err) {
    for (size_t j = 0; fresh && j < k; j++)
      free(fresh[j]);
    free(fresh);
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
      if (!pos_less(p, a) && pos_less(p, b))
        continue;
      tmp[t++] = old->leaves[l]->e[i];
    }
  if (!placed)
    tmp[t++] = add;

  t = 0;
  for (size_t j = 0; j < k; j++)
    for (uint32_t i = 0; i < fresh[j]->n; i++)
      fresh[j]->e[i] = tmp[t++];
  size_t o = 0;
  for (size_t l = 0; l < la; l++, o++)
    nr->leaves[o] = old->leaves[l];
  for (size_t j = 0; j < k; j++, o++)
    nr->leaves[o] = fresh[j];
  for (size_t l = lb; l < nl; l++, o++)
    nr->leaves[o] = old->leaves[l];
  for (size_t i = 0; i < nnl; i++)
    nr->first[i] = nr->leaves[i]->e[0]->start;
  nr->count = old->count - nremoved + (add ? 1 : 0);

  atomic_store(&cm.root, nr); /* the switch: lookups from here on see the new snapshot */

  if (add)
    ki_entry(add, 1);
  for (struct cm_pos p = a; pos_less(p, b); p = pos_next(old, p)) {
    ki_entry(pos_entry(old, p), -1);
    retire(pos_entry(old, p));
  }
  for (size_t l = la; l < lb; l++)
    retire(old->leaves[l]);
  retire(old);
  free(fresh);
  free(tmp);
  if (cm.nretired >= RETIRE_BATCH)
    reclaim_locked();
  return 0;
}

/* ---- entries ------------------------------------------------------------------------------ */

static int cmp_rec(const void *x, const void *y) {
  const struct cm_rec *a = x, *b = y;
  return a->pc < b->pc ? -1 : a->pc > b->pc;
}

/* Visits the usable PCStackInfo entries of compile_info's JVMTI_CMLR_INLINE_INFO records:
 * counts them (e == NULL) or copies them into e's arrays. Returns the number of records. */
static size_t scan_cmlr(const void *compile_info, struct cm_entry *e, size_t *nframes) {
  size_t r = 0, f = 0;
  int nh = 0;
  for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h && nh < MAX_CMLR_HEADERS;
       h = h->next, nh++) {
    const jvmtiCompiledMethodLoadInlineRecord *ir = (const void *)h;
    if (h->kind != JVMTI_CMLR_INLINE_INFO || !ir->pcinfo)
      continue;
    for (jint q = 0; q < ir->numpcs; q++) {
      const PCStackInfo *pi = &ir->pcinfo[q];
      if (pi->numstackframes <= 0 || !pi->methods)
        continue;
      uint32_t depth = (uint32_t)pi->numstackframes;
      if (depth > CODEMAP_MAX_INLINE) {
        depth = CODEMAP_MAX_INLINE;
        if (e)
          cm.st.inline_trunc++;
      }
      if (e) {
        struct cm_rec *recs = (struct cm_rec *)e->recs;
        jmethodID *fm = (jmethodID *)e->fm;
        jint *fb = (jint *)e->fb;
        recs[r] = (struct cm_rec){(uintptr_t)pi->pc, (uint32_t)f, depth};
        for (uint32_t i = 0; i < depth; i++) {
          fm[f + i] = pi->methods[i];
          fb[f + i] = pi->bcis ? pi->bcis[i] : -1;
        }
      }
      r++;
      f += depth;
    }
  }
  *nframes = f;
  return r;
}

/* A new entry for [code, code + size) with copies of the inline records; NULL if no memory. */
static struct cm_entry *entry_new(int kind, jmethodID m, const char *name, const void *code,
                                  jint size, const void *compile_info) {
  size_t nframes;
  size_t nrec = scan_cmlr(compile_info, NULL, &nframes);
  struct cm_entry *e = malloc(sizeof *e + nrec * sizeof(struct cm_rec) +
                              nframes * (sizeof(jmethodID) + sizeof(jint)));
  if (!e)
    return NULL;
  struct cm_rec *recs = (struct cm_rec *)(e + 1);
  e->recs = recs;
  e->fm = (jmethodID *)(recs + nrec);
  e->fb = (jint *)(e->fm + nframes);
  scan_cmlr(compile_info, e, &nframes);
  qsort(recs, nrec, sizeof *recs, cmp_rec);
  e->start = (uintptr_t)code;
  e->end = (uintptr_t)code + (uintptr_t)size;
  e->kind = kind;
  e->method = m;
  e->name = name;
  e->gen = ++cm.gen;
  e->nrec = (uint32_t)nrec;
  return e;
}

/* Inserts e, replacing the live entries it overlaps. cm.mu held. */
static int insert(struct cm_entry *e) {
  struct cm_root *r = atomic_load_explicit(&cm.root, memory_order_relaxed);
  int found;
  struct cm_pos a = pos_floor(r, e->start, &found);
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
    cm.st.adds++;
    cm.st.replaced += nrep;
  }
  return rc;
}

static int check_range(const void *code, jint size) {
  if (!code || size <= 0 || (uintptr_t)code + (uintptr_t)size < (uintptr_t)code)
    return -EINVAL;
  return 0;
}

/* ---- stub names ------------------------------------------------------------------------- */

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The interned copy of s, or NULL if no memory. cm.mu held. Never freed. */
static const char *intern(const char *s) {
  if (cm.nnames * 2 >= cm.capnames) {
    size_t cap = cm.capnames ? cm.capnames * 2 : 256;
    char **t = calloc(cap, sizeof *t);
    if (!t)
      return NULL;
    for (size_t i = 0; i < cm.capnames; i++)
      if (cm.names[i]) {
        size_t j = hash_str(cm.names[i]) & (cap - 1);
        while (t[j])
          j = (j + 1) & (cap - 1);
        t[j] = cm.names[i];
      }
    free(cm.names);
    cm.names = t;
    cm.capnames = cap;
  }
  size_t j = hash_str(s) & (cm.capnames - 1);
  for (; cm.names[j]; j = (j + 1) & (cm.capnames - 1))
    if (strcmp(cm.names[j], s) == 0)
      return cm.names[j];
  char *c = strdup(s);
  if (!c)
    return NULL;
  cm.names[j] = c;
  cm.nnames++;
  return c;
}

/* ---- public writer API ------------------------------------------------------------------ */

/* Creates the empty map. Idempotent. Returns 0 or -ENOMEM. Not signal-safe. */
int codemap_init(void) {
  pthread_mutex_lock(&cm.mu);
  int rc = 0;
  if (!cm.inited) {
    struct cm_root *r = root_alloc(0);
    if (r) {
      atomic_store(&cm.root, r);
      cm.inited = 1;
    } else {
      rc = -ENOMEM;
    }
  }
  pthread_mutex_unlock(&cm.mu);
  return rc;
}

/* Drops every entry, frees the map (interned names stay) and zeroes the counters. Concurrent lookups are safe and
 * return 0 afterwards; concurrent writers are not allowed. */
void codemap_fini(void) {
  pthread_mutex_lock(&cm.mu);
  if (cm.inited) {
    struct cm_root *r = atomic_exchange(&cm.root, NULL);
    reclaim_locked();
    grace_period();
    for (size_t l = 0; l < r->nleaves; l++) {
      for (uint32_t i = 0; i < r->leaves[l]->n; i++)
        free(r->leaves[l]->e[i]);
      free(r->leaves[l]);
    }
    free(r);
    free(cm.retired);
    cm.retired = NULL;
    cm.nretired = cm.capretired = 0;
    pthread_mutex_lock(&cm.ki_mu);
    free(cm.ki);
    cm.ki = NULL;
    cm.nki = cm.capki = 0;
    pthread_mutex_unlock(&cm.ki_mu);
    memset(&cm.st, 0, sizeof cm.st);
    cm.inited = 0;
  }
  pthread_mutex_unlock(&cm.mu);
}

/* Adds one entry (a stub's name is interned first). Any thread, not signal-safe. */
static int add_entry(int kind, jmethodID m, const char *name, const void *code, jint size, const void *info,
                     int frame_words) {
  int rc = check_range(code, size);
  if (rc)
    return rc;
  pthread_mutex_lock(&cm.mu);
  if (!cm.inited) {
    rc = -ENODEV;
  } else {
    const char *n = kind == CODEMAP_STUB ? intern(name ? name : "unknown stub") : NULL;
    struct cm_entry *e = kind != CODEMAP_STUB || n ? entry_new(kind, m, n, code, size, info) : NULL;
    if (e) {
      e->frame_words = frame_words > 0 ? frame_words : 0;
      e->interpreter = kind == CODEMAP_STUB && strcmp(n, "Interpreter") == 0;
    }
    rc = e ? insert(e) : -ENOMEM;
    if (rc && e)
      free(e);
  }
  pthread_mutex_unlock(&cm.mu);
  return rc;
}

/* Adds an nmethod; see codemap.h. Any thread, not signal-safe. */
int codemap_add_method(jmethodID m, const void *code, jint size, const void *compile_info) {
  return add_entry(CODEMAP_NMETHOD, m, NULL, code, size, compile_info, 0);
}

/* Adds a stub; see codemap.h. Any thread, not signal-safe. */
int codemap_add_stub(const char *name, const void *code, jint size, int frame_words) {
  return add_entry(CODEMAP_STUB, NULL, name, code, size, NULL, frame_words);
}

/* Removes the nmethod of m at code; see codemap.h. Any thread, not signal-safe. */
int codemap_remove_method(jmethodID m, const void *code) {
  pthread_mutex_lock(&cm.mu);
  int rc = -ENODEV;
  if (cm.inited) {
    struct cm_root *r = atomic_load_explicit(&cm.root, memory_order_relaxed);
    int found;
    struct cm_pos a = pos_floor(r, (uintptr_t)code, &found);
    const struct cm_entry *e = found ? pos_entry(r, a) : NULL;
    if (!e || e->start != (uintptr_t)code || e->kind != CODEMAP_NMETHOD || e->method != m) {
      cm.st.remove_miss++;
      rc = -ENOENT;
    } else {
      rc = edit(a, pos_next(r, a), NULL);
      if (rc == 0)
        cm.st.removes++;
    }
  }
  pthread_mutex_unlock(&cm.mu);
  return rc;
}

/* Copies the writer-side counters. Takes cm.mu. */
void codemap_stats(struct codemap_stats *out) {
  pthread_mutex_lock(&cm.mu);
  *out = cm.st;
  pthread_mutex_unlock(&cm.mu);
}

/* Frees retired snapshots now, after a grace period. Takes cm.mu. */
void codemap_reclaim(void) {
  pthread_mutex_lock(&cm.mu);
  reclaim_locked();
  pthread_mutex_unlock(&cm.mu);
}

/* Whether the frames [0, n) carry exactly the methods of the inline chain chain[0, n)
 * (innermost first). */
static int chain_matches(const asgct_frame *frames, int nframes, const jmethodID *chain, int n) {
  if (n <= 0 || n > nframes)
    return 0;
  for (int i = 0; i < n; i++)
    if (frames[i].method_id != chain[i])
      return 0;
  return 1;
}

/* See codemap.h. Takes cm.ki_mu. */
void codemap_frame_kinds(uintptr_t pc, const asgct_frame *frames, int n, unsigned char *kinds) {
  int exact = 0; /* frames [0, exact) are decided by the code at pc */
  struct codemap_hit hit;
  if (n > 0 && codemap_lookup(pc, &hit)) {
    if (hit.kind == CODEMAP_NMETHOD) {
      /* its inline chain at pc when the walk agrees with it, else up to the nmethod's method */
      if (hit.ninline > 0 && hit.inl_method[hit.ninline - 1] == hit.method &&
          chain_matches(frames, n, hit.inl_method, hit.ninline)) {
        exact = hit.ninline;
      } else {
        for (int k = 0; k < n && k <= CODEMAP_MAX_INLINE && !exact; k++)
          if (frames[k].method_id == hit.method)
            exact = k + 1;
      }
      for (int i = 0; i < exact; i++)
        kinds[i] = i + 1 < exact ? CODEMAP_FRAME_INLINED : CODEMAP_FRAME_JIT;
    } else if (hit.interpreter && frames[0].lineno != -3) {
      kinds[0] = CODEMAP_FRAME_INTERPRETED;
      exact = 1;
    }
  }
  pthread_mutex_lock(&cm.ki_mu);
  for (int i = exact; i < n; i++) {
    const asgct_frame *f = &frames[i];
    if (f->lineno == -3)
      kinds[i] = CODEMAP_FRAME_NATIVE;
    else if (i + 1 < n && ki_refs(f->method_id, frames[i + 1].method_id, frames[i + 1].lineno))
      kinds[i] = CODEMAP_FRAME_INLINED;
    else if (ki_refs(f->method_id, NULL, -1))
      kinds[i] = CODEMAP_FRAME_JIT;
    else
      kinds[i] = CODEMAP_FRAME_INTERPRETED;
  }
  pthread_mutex_unlock(&cm.ki_mu);
}
