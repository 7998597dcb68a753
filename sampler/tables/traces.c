/*
 * traces.c — the key -> frame cache and the stack table (see traces.h); frame names are
 * interned by intern.c. Both tables index their arrays through struct itab (itab.h).
 */
#include "traces.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "itab.h"
#include "platform.h"

/* ---- growable arrays ---- */

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  void *p = plat_block_resize(*arr, *cap * elem, c * elem); /* large: a mapping of its own */
  if (!p) return -ENOMEM;
  *arr = p;
  *cap = c;
  return 0;
}

/* ---- state ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
  size_t stacks, frames, keys;
} limit = {TRACES_MAX_STACKS, TRACES_MAX_FRAMES, TRACES_MAX_KEYS};
static struct traces_refusals refused;

void traces_set_limits(size_t stacks, size_t frames, size_t keys) {
  limit.stacks = stacks;
  limit.frames = frames;
  limit.keys = keys;
}

void traces_refused(struct traces_refusals *out) { *out = refused; }

struct key_entry {
  struct traces_key key;
  uint32_t id;
};
static struct itab key_tab;
static struct key_entry *keys;
static size_t nkeys, keys_cap;

struct trace_rec {
  size_t off; /* into frame_pool */
  int n;
  int kind; /* the event kind: part of the stack's identity */
  uint64_t samples, units, cpu_ns;
};
static struct itab trace_tab;
static struct trace_rec *traces;
static size_t ntraces, traces_cap;
static uint32_t *frame_pool;
static size_t pool_len, pool_cap;

int traces_init(void) {
  if (key_tab.cap) return 0;
  if (itab_init(&key_tab, 4096) || itab_init(&trace_tab, 4096)) {
    traces_fini();
    return -ENOMEM;
  }
  return 0;
}

void traces_fini(void) {
  itab_free(&key_tab);
  itab_free(&trace_tab);
  plat_block_free(keys, keys_cap * sizeof *keys);
  plat_block_free(traces, traces_cap * sizeof *traces);
  plat_block_free(frame_pool, pool_cap * sizeof *frame_pool);
  keys = NULL;
  traces = NULL;
  frame_pool = NULL;
  nkeys = keys_cap = ntraces = traces_cap = pool_len = pool_cap = 0;
  memset(&refused, 0, sizeof refused);
}

void traces_lock(void) { pthread_mutex_lock(&lock); }
void traces_unlock(void) { pthread_mutex_unlock(&lock); }

/* ---- key -> frame ---- */

static bool key_eq(const void *ctx, uint32_t idx) {
  const struct traces_key *k = ctx;
  return keys[idx].key.what == k->what && keys[idx].key.how == k->how;
}

static uint64_t key_hash(struct traces_key k) { return itab_mix64(k.what ^ itab_mix64(k.how)); }

uint32_t traces_key_get(struct traces_key key) {
  uint32_t i = itab_find(&key_tab, key_hash(key), key_eq, &key);
  return i == ITAB_EMPTY ? TRACES_NO_ID : keys[i].id;
}

int traces_key_put(struct traces_key key, uint32_t id) {
  uint32_t i = itab_find(&key_tab, key_hash(key), key_eq, &key);
  if (i != ITAB_EMPTY) {
    keys[i].id = id;
    return 0;
  }
  if (nkeys >= limit.keys) { /* full: it starts again empty (a cache: names are found again) */
    refused.keys++;
    itab_clear(&key_tab);
    nkeys = 0;
  }
  if (grow((void **)&keys, &keys_cap, nkeys + 1, sizeof *keys)) return -ENOMEM;
  if (itab_insert(&key_tab, key_hash(key), (uint32_t)nkeys)) return -ENOMEM;
  keys[nkeys++] = (struct key_entry){key, id};
  return 0;
}

size_t traces_key_sweep(int (*keep)(void *ctx, struct traces_key key), void *ctx) {
  size_t kept = 0;
  for (size_t i = 0; i < nkeys; i++)
    if (keep(ctx, keys[i].key)) keys[kept++] = keys[i];
  size_t dropped = nkeys - kept;
  if (!dropped) return 0;
  nkeys = kept;
  /* the index again, as large as the keys left need (at most the size it had) */
  size_t cap = 4096;
  while (cap * 3 < kept * 4 * 2) cap *= 2;
  struct itab fresh;
  if (cap < key_tab.cap && itab_init(&fresh, cap) == 0) {
    itab_free(&key_tab);
    key_tab = fresh;
  } else {
    itab_clear(&key_tab);
  }
  for (size_t i = 0; i < nkeys; i++) /* no growth: no more keys than the index held */
    itab_insert(&key_tab, key_hash(keys[i].key), (uint32_t)i);
  /* the array too, to twice the keys left */
  size_t want = 1024;
  while (want < kept * 2) want *= 2;
  if (want < keys_cap) {
    void *p = plat_block_resize(keys, keys_cap * sizeof *keys, want * sizeof *keys);
    if (p) {
      keys = p;
      keys_cap = want;
    }
  }
  return dropped;
}

/* ---- stacks ---- */

struct trace_probe {
  const uint32_t *frames;
  int n, kind;
};

static bool trace_eq(const void *ctx, uint32_t idx) {
  const struct trace_probe *p = ctx;
  const struct trace_rec *t = &traces[idx];
  return t->n == p->n && t->kind == p->kind &&
         memcmp(frame_pool + t->off, p->frames, (size_t)p->n * sizeof *p->frames) == 0;
}

int traces_add(const uint32_t *frames, int n, uint64_t units, uint64_t cpu_ns, uint32_t *id) {
  return traces_add_kind(frames, n, 0, units, cpu_ns, id);
}

int traces_add_kind(const uint32_t *frames, int n, int kind, uint64_t units, uint64_t cpu_ns,
                    uint32_t *id) {
  struct trace_probe probe = {frames, n, kind};
  uint64_t h = itab_hash_bytes(frames, (size_t)n * sizeof *frames) ^ itab_mix64((uint64_t)kind);
  uint32_t i = itab_find(&trace_tab, h, trace_eq, &probe);
  if (i == ITAB_EMPTY) {
    if (ntraces >= limit.stacks || pool_len + (size_t)n > limit.frames) {
      refused.stacks++;
      return -ENOSPC;
    }
    if (grow((void **)&traces, &traces_cap, ntraces + 1, sizeof *traces) ||
        grow((void **)&frame_pool, &pool_cap, pool_len + (size_t)n, sizeof *frame_pool) ||
        itab_insert(&trace_tab, h, (uint32_t)ntraces))
      return -ENOMEM;
    memcpy(frame_pool + pool_len, frames, (size_t)n * sizeof *frames);
    traces[ntraces] = (struct trace_rec){pool_len, n, kind, 0, 0, 0};
    pool_len += (size_t)n;
    i = (uint32_t)ntraces++;
  }
  traces[i].samples++;
  traces[i].units += units;
  traces[i].cpu_ns += cpu_ns;
  if (id) *id = i;
  return 0;
}

void traces_foreach(void (*fn)(void *ctx, const struct trace_view *t), void *ctx) {
  for (size_t i = 0; i < ntraces; i++) {
    const struct trace_rec *r = &traces[i];
    struct trace_view v = {frame_pool + r->off, r->n, r->samples, r->units, r->cpu_ns, r->kind};
    fn(ctx, &v);
  }
}

size_t traces_count(void) { return ntraces; }

size_t traces_keys(void) { return nkeys; }

size_t traces_bytes(void) {
  return keys_cap * sizeof *keys + traces_cap * sizeof *traces + pool_cap * sizeof *frame_pool +
         itab_bytes(&key_tab) + itab_bytes(&trace_tab);
}

void traces_clear(void) {
  /* the index keeps its size for the next profile (emptied in place), unless an exceptional
   * one made it large */
  if (trace_tab.cap > (1u << 20)) {
    itab_free(&trace_tab);
    if (itab_init(&trace_tab, 4096)) trace_tab.cap = 0; /* traces_add regrows it */
  } else {
    itab_clear(&trace_tab);
  }
  ntraces = 0;
  pool_len = 0;
  refused.stacks = 0;
  /* the arrays keep their size for the next profile, unless an exceptional one made them
   * large: then they go, and grow again as needed */
  if (traces_cap > (1u << 16)) {
    plat_block_free(traces, traces_cap * sizeof *traces);
    traces = NULL;
    traces_cap = 0;
  }
  if (pool_cap > (1u << 22)) {
    plat_block_free(frame_pool, pool_cap * sizeof *frame_pool);
    frame_pool = NULL;
    pool_cap = 0;
  }
}
