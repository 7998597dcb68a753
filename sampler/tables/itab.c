/*
 * itab.c — the open-addressing index table (see itab.h).
 */
#include "itab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

int itab_init(struct itab *t, size_t cap) {
  /* large indexes in mappings of their own (platform.h): a regrown one goes back whole */
  t->cap = cap;
  t->n = 0;
  t->hash = plat_block_resize(NULL, 0, cap * sizeof *t->hash);
  t->idx = plat_block_resize(NULL, 0, cap * sizeof *t->idx);
  if (!t->hash || !t->idx) {
    itab_free(t);
    return -ENOMEM;
  }
  memset(t->idx, 0xff, cap * sizeof *t->idx);
  return 0;
}

void itab_clear(struct itab *t) {
  if (t->idx) memset(t->idx, 0xff, t->cap * sizeof *t->idx);
  t->n = 0;
}

void itab_free(struct itab *t) {
  plat_block_free(t->hash, t->cap * sizeof *t->hash);
  plat_block_free(t->idx, t->cap * sizeof *t->idx);
  memset(t, 0, sizeof *t);
}

uint32_t itab_find(const struct itab *t, uint64_t h, bool (*eq)(const void *, uint32_t),
                   const void *ctx) {
  if (!t->cap) return ITAB_EMPTY;
  for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    if (t->idx[i] == ITAB_EMPTY) return ITAB_EMPTY;
    if (t->hash[i] == h && eq(ctx, t->idx[i])) return t->idx[i];
  }
}

static void put(struct itab *t, uint64_t h, uint32_t idx) {
  size_t i = h & (t->cap - 1);
  while (t->idx[i] != ITAB_EMPTY) i = (i + 1) & (t->cap - 1);
  t->hash[i] = h;
  t->idx[i] = idx;
  t->n++;
}

int itab_insert(struct itab *t, uint64_t h, uint32_t idx) {
  if ((t->n + 1) * 4 > t->cap * 3) { /* keep the load under 3/4 */
    struct itab bigger;
    if (itab_init(&bigger, t->cap ? t->cap * 2 : 64)) return -ENOMEM;
    for (size_t i = 0; i < t->cap; i++)
      if (t->idx[i] != ITAB_EMPTY) put(&bigger, t->hash[i], t->idx[i]);
    itab_free(t);
    *t = bigger;
  }
  put(t, h, idx);
  return 0;
}

uint64_t itab_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t itab_hash_bytes(const void *p, size_t len) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return itab_mix64(h ^ len);
}
