/*
 * itab.h — a small open-addressing index table: each slot stores a 64-bit hash and a 32-bit
 * index into its owner's array; equality is the owner's callback. Shared by the string
 * interner (intern.c) and the stack table (traces.c). Not thread-safe: its owner locks.
 */
#ifndef SAMPLER_ITAB_H
#define SAMPLER_ITAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ITAB_EMPTY UINT32_MAX

struct itab {
  uint64_t *hash;
  uint32_t *idx; /* ITAB_EMPTY: empty */
  size_t cap;    /* power of two */
  size_t n;
};

/* Allocates an empty table of `cap` slots (a power of two). Returns 0 or -ENOMEM. */
int itab_init(struct itab *t, size_t cap);

/* Empties the table, keeping its memory (no free and regrow: a table emptied again and again
 * would otherwise fragment the heap around the long-lived blocks allocated between). */
void itab_clear(struct itab *t);

/* Frees the table's memory (the owner's array is its own). */
void itab_free(struct itab *t);

/* The index stored with hash h for which eq(ctx, index) holds, or ITAB_EMPTY. */
uint32_t itab_find(const struct itab *t, uint64_t h, bool (*eq)(const void *ctx, uint32_t idx),
                   const void *ctx);

/* Stores index idx under hash h (growing the table to keep its load under 3/4). Returns 0 or
 * -ENOMEM (the table is then unchanged). */
int itab_insert(struct itab *t, uint64_t h, uint32_t idx);

/* The bytes the table's arrays take. */
static inline size_t itab_bytes(const struct itab *t) {
  return t->cap * (sizeof *t->hash + sizeof *t->idx);
}

/* A 64-bit hash of len bytes (FNV-1a, finalized). */
uint64_t itab_hash_bytes(const void *p, size_t len);

/* A bijective 64-bit mixer (for keys that are already numbers). */
uint64_t itab_mix64(uint64_t x);

#endif
