/*
 * traces.c — interned strings, the key -> frame cache and the stack table (see traces.h).
 * Three open-addressing hash tables share one implementation (struct itab): each stores a
 * 64-bit hash and a 32-bit index into the owner's array; equality is the owner's callback.
 */
#include "traces.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small index hash table ---- */

struct itab {
  uint64_t *hash;
  uint32_t *idx; /* TRACES_NO_ID: empty */
  size_t cap;    /* power of two */
  size_t n;
};

static int itab_init(struct itab *t, size_t cap) {
  t->hash = calloc(cap, sizeof *t->hash);
  t->idx = malloc(cap * sizeof *t->idx);
  if (!t->hash || !t->idx) return -ENOMEM;
  memset(t->idx, 0xff, cap * sizeof *t->idx);
  t->cap = cap;
  t->n = 0;
  return 0;
}

/* Finds the entry with hash h for which eq(ctx, idx) holds; returns its index or NO_ID. */
static uint32_t itab_find(const struct itab *t, uint64_t h, bool (*eq)(const void *, uint32_t),
                          const void *ctx) {
  for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    if (t->idx[i] == TRACES_NO_ID) return TRACES_NO_ID;
    if (t->hash[i] == h && eq(ctx, t->idx[i])) return t->idx[i];
  }
}

static int itab_insert(struct itab *t, uint64_t h, uint32_t idx) {
  if ((t->n + 1) * 4 > t->cap * 3) { /* keep the load under 3/4 */
    struct itab bigger;
    if (itab_init(&bigger, t->cap * 2)) {
      free(bigger.hash);
      free(bigger.idx);
      return -ENOMEM;
    }
    for (size_t i = 0; i < t->cap; i++)
      if (t->idx[i] != TRACES_NO_ID) itab_insert(&bigger, t->hash[i], t->idx[i]);
    free(t->hash);
    free(t->idx);
    *t = bigger;
  }
  size_t i = h & (t->cap - 1);
  while (t->idx[i] != TRACES_NO_ID) i = (i + 1) & (t->cap - 1);
  t->hash[i] = h;
  t->idx[i] = idx;
  t->n++;
  return 0;
}

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static uint64_t hash_bytes(const void *p, size_t len) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return mix64(h ^ len);
}

/* ---- growable arrays ---- */

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  void *p = realloc(*arr, c * elem);
  if (!p) return -ENOMEM;
  *arr = p;
  *cap = c;
  return 0;
}

/* ---- state ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct itab str_tab;
static char **strs;
static size_t nstrs, strs_cap;

struct key_entry {
  uint64_t key;
  uint32_t id;
};
static struct itab key_tab;
static struct key_entry *keys;
static size_t nkeys, keys_cap;

struct trace_rec {
  size_t off; /* into frame_pool */
  int n;
  uint64_t samples, units, cpu_ns;
};
static struct itab trace_tab;
static struct trace_rec *traces;
static size_t ntraces, traces_cap;
static uint32_t *frame_pool;
static size_t pool_len, pool_cap;

int traces_init(void) {
  if (str_tab.cap) return 0;
  if (itab_init(&str_tab, 4096) || itab_init(&key_tab, 4096) || itab_init(&trace_tab, 4096))
    return -ENOMEM;
  return 0;
}

void traces_lock(void) { pthread_mutex_lock(&lock); }
void traces_unlock(void) { pthread_mutex_unlock(&lock); }

/* ---- strings ---- */

struct str_probe {
  const char *s;
  size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx) {
  const struct str_probe *p = ctx;
  return strncmp(strs[idx], p->s, p->len) == 0 && strs[idx][p->len] == '\0';
}

uint32_t traces_intern(const char *s, size_t len) {
  struct str_probe probe = {s, len};
  uint64_t h = hash_bytes(s, len);
  uint32_t id = itab_find(&str_tab, h, str_eq, &probe);
  if (id != TRACES_NO_ID) return id;
  if (grow((void **)&strs, &strs_cap, nstrs + 1, sizeof *strs)) return TRACES_NO_ID;
  char *copy = malloc(len + 1);
  if (!copy) return TRACES_NO_ID;
  memcpy(copy, s, len);
  copy[len] = '\0';
  if (itab_insert(&str_tab, h, (uint32_t)nstrs)) {
    free(copy);
    return TRACES_NO_ID;
  }
  strs[nstrs] = copy;
  return (uint32_t)nstrs++;
}

const char *traces_str(uint32_t id) { return id < nstrs ? strs[id] : "[bad frame id]"; }

size_t traces_nstrings(void) { return nstrs; }

/* ---- key -> frame ---- */

static bool key_eq(const void *ctx, uint32_t idx) { return keys[idx].key == *(const uint64_t *)ctx; }

uint32_t traces_key_get(uint64_t key) {
  uint32_t i = itab_find(&key_tab, mix64(key), key_eq, &key);
  return i == TRACES_NO_ID ? TRACES_NO_ID : keys[i].id;
}

int traces_key_put(uint64_t key, uint32_t id) {
  uint32_t i = itab_find(&key_tab, mix64(key), key_eq, &key);
  if (i != TRACES_NO_ID) {
    keys[i].id = id;
    return 0;
  }
  if (grow((void **)&keys, &keys_cap, nkeys + 1, sizeof *keys)) return -ENOMEM;
  if (itab_insert(&key_tab, mix64(key), (uint32_t)nkeys)) return -ENOMEM;
  keys[nkeys++] = (struct key_entry){key, id};
  return 0;
}

/* ---- stacks ---- */

struct trace_probe {
  const uint32_t *frames;
  int n;
};

static bool trace_eq(const void *ctx, uint32_t idx) {
  const struct trace_probe *p = ctx;
  const struct trace_rec *t = &traces[idx];
  return t->n == p->n && memcmp(frame_pool + t->off, p->frames, (size_t)p->n * sizeof *p->frames) == 0;
}

int traces_add(const uint32_t *frames, int n, uint64_t units, uint64_t cpu_ns) {
  struct trace_probe probe = {frames, n};
  uint64_t h = hash_bytes(frames, (size_t)n * sizeof *frames);
  uint32_t i = itab_find(&trace_tab, h, trace_eq, &probe);
  if (i == TRACES_NO_ID) {
    if (grow((void **)&traces, &traces_cap, ntraces + 1, sizeof *traces) ||
        grow((void **)&frame_pool, &pool_cap, pool_len + (size_t)n, sizeof *frame_pool) ||
        itab_insert(&trace_tab, h, (uint32_t)ntraces))
      return -ENOMEM;
    memcpy(frame_pool + pool_len, frames, (size_t)n * sizeof *frames);
    traces[ntraces] = (struct trace_rec){pool_len, n, 0, 0, 0};
    pool_len += (size_t)n;
    i = (uint32_t)ntraces++;
  }
  traces[i].samples++;
  traces[i].units += units;
  traces[i].cpu_ns += cpu_ns;
  return 0;
}

void traces_foreach(void (*fn)(void *ctx, const struct trace_view *t), void *ctx) {
  for (size_t i = 0; i < ntraces; i++) {
    const struct trace_rec *r = &traces[i];
    struct trace_view v = {frame_pool + r->off, r->n, r->samples, r->units, r->cpu_ns};
    fn(ctx, &v);
  }
}

size_t traces_count(void) { return ntraces; }
