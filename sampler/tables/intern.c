/*
 * intern.c — the string interner (see intern.h). Names live in chunks of pointers that are
 * allocated as needed and never moved, so intern_name reads without a lock while another
 * thread interns; a name becomes visible (the count is published) only once its pointer is
 * stored.
 */
#include "intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itab.h"
#include "utf8.h"

#define CHUNK_NAMES 4096
#define MAX_CHUNKS 1024 /* at most 4,194,304 names */

static struct {
  pthread_mutex_t mu;
  struct itab index;
  const char **_Atomic chunks[MAX_CHUNKS];
  _Atomic size_t count;
  size_t bytes;                /* of the names' text */
  size_t max_names, max_bytes; /* under mu */
  uint64_t refused;            /* under mu */
} interner = {
    .mu = PTHREAD_MUTEX_INITIALIZER, .max_names = INTERN_MAX_NAMES, .max_bytes = INTERN_MAX_BYTES};

_Static_assert(INTERN_MAX_NAMES <= (size_t)MAX_CHUNKS * CHUNK_NAMES, "chunks for every name");

void intern_set_limits(size_t names, size_t bytes) {
  pthread_mutex_lock(&interner.mu);
  interner.max_names =
      names < (size_t)MAX_CHUNKS * CHUNK_NAMES ? names : (size_t)MAX_CHUNKS * CHUNK_NAMES;
  interner.max_bytes = bytes;
  pthread_mutex_unlock(&interner.mu);
}

uint64_t intern_refused(void) {
  pthread_mutex_lock(&interner.mu);
  uint64_t n = interner.refused;
  pthread_mutex_unlock(&interner.mu);
  return n;
}

const char *intern_name(uint32_t id) {
  if (id >= atomic_load_explicit(&interner.count, memory_order_acquire)) return "[bad frame id]";
  const char **chunk =
      atomic_load_explicit(&interner.chunks[id / CHUNK_NAMES], memory_order_acquire);
  return chunk[id % CHUNK_NAMES];
}

size_t intern_count(void) { return atomic_load_explicit(&interner.count, memory_order_acquire); }

size_t intern_bytes(void) {
  pthread_mutex_lock(&interner.mu);
  size_t n = atomic_load_explicit(&interner.count, memory_order_relaxed);
  size_t chunks = (n + CHUNK_NAMES - 1) / CHUNK_NAMES;
  size_t b =
      interner.bytes + chunks * CHUNK_NAMES * sizeof(const char *) + itab_bytes(&interner.index);
  pthread_mutex_unlock(&interner.mu);
  return b;
}

static uint32_t intern_clean(const char *s, size_t len);

void intern_fini(void) {
  pthread_mutex_lock(&interner.mu);
  size_t n = atomic_load_explicit(&interner.count, memory_order_relaxed);
  for (size_t c = 0; c < MAX_CHUNKS; c++) {
    const char **chunk = atomic_load_explicit(&interner.chunks[c], memory_order_relaxed);
    if (!chunk) continue;
    for (size_t i = 0; i < CHUNK_NAMES && c * CHUNK_NAMES + i < n; i++) free((void *)chunk[i]);
    free(chunk);
    atomic_store_explicit(&interner.chunks[c], NULL, memory_order_relaxed);
  }
  itab_free(&interner.index);
  atomic_store_explicit(&interner.count, 0, memory_order_release);
  interner.bytes = 0;
  interner.refused = 0;
  pthread_mutex_unlock(&interner.mu);
}

struct probe {
  const char *s;
  size_t len;
};

static bool same(const void *ctx, uint32_t id) {
  const struct probe *p = ctx;
  const char *name = intern_name(id);
  return strncmp(name, p->s, p->len) == 0 && name[p->len] == '\0';
}

/* The trailing-count rule of intern.h on the cleaned name out[0..len). */
static void no_count_at_end(char *out, size_t len) {
  size_t d = len;
  while (d > 0 && out[d - 1] >= '0' && out[d - 1] <= '9') d--;
  if (d < len && d > 0 && out[d - 1] == ' ') out[d - 1] = '_';
}

uint32_t intern_string(const char *raw, size_t len) {
  char small[512];
  if (len > (SIZE_MAX - 1) / 3) return INTERN_NO_ID;
  size_t cap = 3 * len + 1; /* utf8_name writes at most 3 bytes a byte: never cut */
  char *s = cap <= sizeof small ? small : malloc(cap);
  if (!s) return INTERN_NO_ID;
  int n = utf8_name(raw, len, s, cap);
  uint32_t id = INTERN_NO_ID;
  if (n >= 0) {
    no_count_at_end(s, (size_t)n);
    id = intern_clean(s, (size_t)n);
  }
  if (s != small) free(s);
  return id;
}

/* intern_string for a name already cleaned. */
static uint32_t intern_clean(const char *s, size_t len) {
  struct probe probe = {s, len};
  uint64_t h = itab_hash_bytes(s, len);
  uint32_t id = INTERN_NO_ID;
  pthread_mutex_lock(&interner.mu);
  size_t n = atomic_load_explicit(&interner.count, memory_order_relaxed);
  id = itab_find(&interner.index, h, same, &probe);
  if (id != ITAB_EMPTY) goto out;
  if (n >= interner.max_names || interner.bytes + len + 1 > interner.max_bytes) {
    interner.refused++;
    goto out;
  }
  const char **chunk =
      atomic_load_explicit(&interner.chunks[n / CHUNK_NAMES], memory_order_relaxed);
  if (!chunk) {
    chunk = calloc(CHUNK_NAMES, sizeof *chunk);
    if (!chunk) goto out;
    atomic_store_explicit(&interner.chunks[n / CHUNK_NAMES], chunk, memory_order_release);
  }
  char *copy = malloc(len + 1);
  if (!copy) goto out;
  memcpy(copy, s, len);
  copy[len] = '\0';
  if (itab_insert(&interner.index, h, (uint32_t)n)) {
    free(copy);
    goto out;
  }
  chunk[n % CHUNK_NAMES] = copy;
  interner.bytes += len + 1;
  atomic_store_explicit(&interner.count, n + 1, memory_order_release);
  id = (uint32_t)n;
out:
  pthread_mutex_unlock(&interner.mu);
  return id == ITAB_EMPTY ? INTERN_NO_ID : id;
}
