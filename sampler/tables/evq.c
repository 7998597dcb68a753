/*
 * evq.c — the two-half record queue (see evq.h).
 *
 * A half: a buffer, `used` (bytes reserved: an atomic add per record, past the end once full)
 * and `writers` (producers inside it). A producer enters the active half (writers + 1), checks
 * that it is still the active one (else leaves and tries the new one), reserves, writes and
 * leaves. The consumer makes the other half active; the half it took is read only when its
 * writers are 0 — a producer that entered it after the swap sees that it is no longer active
 * and leaves without writing. Every record starts with its length (8 bytes); a reservation
 * that found the half full leaves a length of 0 where it began, so the reader stops there.
 * All atomics sequentially consistent: the swap and the check must not pass each other.
 */
#include "evq.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct half {
  unsigned char *buf;
  _Atomic size_t used;
  _Atomic int writers;
};

static struct half halves[2];
static _Atomic int active;    /* the half producers write to */
static int taken = -1;        /* the half the consumer took and has not read yet */
static _Atomic int ready;     /* evq_init done */
#define HEAD sizeof(uint64_t) /* a record's length, before it */
#define ALIGN(n) (((n) + 7) & ~(size_t)7)

int evq_init(void) {
  if (atomic_load(&ready)) return 0;
  for (int i = 0; i < 2; i++) {
    halves[i].buf = malloc(EVQ_HALF_BYTES);
    if (!halves[i].buf) {
      evq_fini(); /* nothing stays */
      return -ENOMEM;
    }
  }
  atomic_store(&ready, 1);
  return 0;
}

void evq_fini(void) {
  atomic_store(&ready, 0);
  for (int i = 0; i < 2; i++) {
    free(halves[i].buf);
    halves[i].buf = NULL;
    atomic_store(&halves[i].used, 0);
  }
  atomic_store(&active, 0);
  taken = -1;
}

void *evq_reserve(size_t len, struct evq_ticket *t) {
  if (!atomic_load(&ready)) return NULL;
  size_t need = HEAD + ALIGN(len);
  for (;;) {
    int a = atomic_load(&active);
    struct half *h = &halves[a];
    atomic_fetch_add(&h->writers, 1);
    if (atomic_load(&active) != a) { /* swapped meanwhile: the consumer may be reading it */
      atomic_fetch_sub(&h->writers, 1);
      continue;
    }
    size_t off = atomic_fetch_add(&h->used, need);
    if (off + need > EVQ_HALF_BYTES) {
      if (off + HEAD <= EVQ_HALF_BYTES) memset(h->buf + off, 0, HEAD); /* the reader stops */
      atomic_fetch_sub(&h->writers, 1);
      return NULL;
    }
    uint64_t l = len;
    memcpy(h->buf + off, &l, HEAD);
    t->half = a;
    return h->buf + off + HEAD;
  }
}

void evq_commit(const struct evq_ticket *t) { atomic_fetch_sub(&halves[t->half].writers, 1); }

/* Reads half h (no writer inside) and empties it. */
static size_t read_half(struct half *h, void (*fn)(void *, const void *, size_t), void *ctx) {
  size_t end = atomic_load(&h->used), n = 0;
  if (end > EVQ_HALF_BYTES) end = EVQ_HALF_BYTES;
  for (size_t off = 0; off + HEAD <= end;) {
    uint64_t len;
    memcpy(&len, h->buf + off, HEAD);
    if (!len) break; /* a refused reservation: nothing after it */
    fn(ctx, h->buf + off + HEAD, (size_t)len);
    n++;
    off += HEAD + ALIGN((size_t)len);
  }
  atomic_store(&h->used, 0);
  return n;
}

size_t evq_drain(void (*fn)(void *ctx, const void *rec, size_t len), void *ctx) {
  if (!atomic_load(&ready)) return 0;
  size_t n = 0;
  if (taken >= 0) {
    if (atomic_load(&halves[taken].writers)) return 0; /* a writer still inside: next time */
    n += read_half(&halves[taken], fn, ctx);
    taken = -1;
  }
  int a = atomic_load(&active);
  if (!atomic_load(&halves[a].used)) return n; /* nothing new: no swap */
  atomic_store(&active, 1 - a);
  taken = a;
  if (!atomic_load(&halves[a].writers)) { /* mostly so: read it now */
    n += read_half(&halves[a], fn, ctx);
    taken = -1;
  }
  return n;
}

int evq_pending(void) {
  if (!atomic_load(&ready)) return 0;
  return taken >= 0 || atomic_load(&halves[atomic_load(&active)].used) != 0;
}
