/*
 * codemap_kinds.c — the frame-kind index: a reference-counted record of what live nmethods say
 * about methods ("M has compiled code", "A is inlined into B at bci"), kept beside the code
 * map's snapshots and updated wherever an edit publishes or drops an nmethod; and
 * codemap_frame_kinds(), which reads it to tell how each frame of a walked stack ran. Its own
 * mutex: readers never wait for a writer's grace period. Keys whose count dropped to zero are
 * left out when the index is rebuilt (when it would otherwise grow), so its size follows the
 * live compiled code, not all the code ever compiled: classes unloaded and loaded again bring
 * new jmethodIDs, and the index would otherwise grow without bound.
 */
#include <pthread.h>
#include <stdlib.h>

#include "codemap_internal.h"

/* A frame-kind fact: `callee` inlined into `caller` at `bci`, or (caller NULL, bci -1)
 * `callee` has compiled code; refs counts the live records that say so. */
struct ki_slot {
  jmethodID callee, caller;
  jint bci;
  uint32_t refs;
};

static struct {
  pthread_mutex_t mu;
  struct ki_slot *slots; /* open addressing */
  size_t n, cap;
  uint64_t lost; /* facts that could not be stored (no memory) */
} kind_index = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t ki_hash(jmethodID callee, jmethodID caller, jint bci) {
  uint64_t h = (uint64_t)(uintptr_t)callee * 0x9e3779b97f4a7c15ull;
  h ^= ((uint64_t)(uintptr_t)caller + (uint64_t)(uint32_t)bci) * 0xc2b2ae3d27d4eb4full;
  return (size_t)(h ^ h >> 29);
}

/* The slot for the key: the matching one, or the empty one where it would go. NULL when the
 * index has no storage yet. */
static struct ki_slot *ki_find(jmethodID callee, jmethodID caller, jint bci) {
  if (!kind_index.cap) return NULL;
  for (size_t i = ki_hash(callee, caller, bci);; i++) {
    struct ki_slot *k = &kind_index.slots[i & (kind_index.cap - 1)];
    if (!k->callee || (k->callee == callee && k->caller == caller && k->bci == bci)) return k;
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
  if (!callee) return;
  if (delta > 0 && (kind_index.n + 1) * 4 > kind_index.cap * 3) {
    /* rebuilt with the live keys only, twice their number at least (not every add rebuilds) */
    size_t live = 0, oldcap = kind_index.cap, cap = oldcap ? oldcap : 1024;
    for (size_t i = 0; i < oldcap; i++) live += kind_index.slots[i].refs > 0;
    while ((live + 1) * 2 > cap) cap *= 2;
    struct ki_slot *t = calloc(cap, sizeof *t), *old = kind_index.slots;
    if (!t) {
      kind_index.lost++;
      return;
    }
    kind_index.slots = t;
    kind_index.cap = cap;
    kind_index.n = live;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].refs) *ki_find(old[i].callee, old[i].caller, old[i].bci) = old[i];
    free(old);
  }
  struct ki_slot *k = ki_find(callee, caller, bci);
  if (!k || (!k->callee && delta < 0)) return; /* a removal whose addition was lost */
  if (!k->callee) {
    *k = (struct ki_slot){callee, caller, bci, 0};
    kind_index.n++;
  }
  if (delta > 0 || k->refs > 0) k->refs += (uint32_t)delta;
}

/* See codemap_internal.h. The writer's mutex is held by the caller; takes kind_index.mu. */
void codemap_kinds_update(const struct cm_entry *e, int delta) {
  if (e->kind != CODEMAP_NMETHOD) return;
  pthread_mutex_lock(&kind_index.mu);
  ki_add(e->method, NULL, -1, delta);
  for (uint32_t r = 0; r < e->nrec; r++) {
    const jmethodID *m = e->fm + e->recs[r].first;
    const jint *b = e->fb + e->recs[r].first;
    for (uint32_t i = 0; i + 1 < e->recs[r].depth; i++) ki_add(m[i], m[i + 1], b[i + 1], delta);
  }
  pthread_mutex_unlock(&kind_index.mu);
}

uint64_t codemap_kinds_reset(void) {
  pthread_mutex_lock(&kind_index.mu);
  free(kind_index.slots);
  kind_index.slots = NULL;
  kind_index.n = kind_index.cap = 0;
  uint64_t lost = kind_index.lost;
  kind_index.lost = 0;
  pthread_mutex_unlock(&kind_index.mu);
  return lost;
}

void codemap_kinds_stats(struct codemap_stats *out) {
  pthread_mutex_lock(&kind_index.mu);
  out->kinds_lost = kind_index.lost;
  out->kinds_keys = kind_index.n;
  pthread_mutex_unlock(&kind_index.mu);
}

/* Whether the frames [0, n) carry exactly the methods of the inline chain chain[0, n)
 * (innermost first). */
static int chain_matches(const asgct_frame *frames, int nframes, const jmethodID *chain, int n) {
  if (n <= 0 || n > nframes) return 0;
  for (int i = 0; i < n; i++)
    if (frames[i].method_id != chain[i]) return 0;
  return 1;
}

/* See codemap.h. Takes kind_index.mu. */
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
          if (frames[k].method_id == hit.method) exact = k + 1;
      }
      for (int i = 0; i < exact; i++)
        kinds[i] = i + 1 < exact ? CODEMAP_FRAME_INLINED : CODEMAP_FRAME_JIT;
    } else if (hit.interpreter && frames[0].lineno != -3) {
      kinds[0] = CODEMAP_FRAME_INTERPRETED;
      exact = 1;
    }
  }
  pthread_mutex_lock(&kind_index.mu);
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
  pthread_mutex_unlock(&kind_index.mu);
}
