/*
 * tsan_codemap.c — the code map's lock-free read side under ThreadSanitizer: reader threads
 * look PCs up (as the signal handler does, through the same codemap_lookup) while a writer
 * adds, replaces and removes entries and reclaims the snapshots it retired (epoch-counted
 * reclamation: epoch.h). A snapshot freed while a reader still reads it, or a publication
 * that a reader can see before its contents, is a data race ThreadSanitizer reports — and
 * then this program exits non-zero (halt_on_error). Built with -fsanitize=thread, the code
 * map's sources included (tests/tsan/CMakeLists.txt); not a Criterion test, because
 * Criterion's process arena does not start under ThreadSanitizer.
 *
 * Besides the sanitizer's verdict the program checks what readers see: a hit always lies
 * inside the range it reports, names a method of the writer's set, and every reader found
 * something (its lookups were not all misses). Exits 0 when all of that held.
 */
#include <errno.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "codemap.h"

#define READERS 3
#define SLOTS 64       /* distinct code ranges the writer cycles through */
#define SLOT_SIZE 4096 /* bytes of "code" each */
#define SECONDS 3

static unsigned char code[SLOTS * SLOT_SIZE]; /* the address range the map describes */
static atomic_int stop;
static atomic_ulong hits[READERS], lookups[READERS], wrong[READERS];

static jmethodID method_of(int slot, unsigned gen) {
  /* never dereferenced: the map stores it as an opaque id */
  return (jmethodID)(uintptr_t)(0x1000u + (unsigned)slot * 16u + (gen & 15u));
}

static void *reader(void *arg) {
  int me = (int)(intptr_t)arg;
  uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uintptr_t pc = (uintptr_t)code + (uintptr_t)(x % sizeof code);
    struct codemap_hit h;
    atomic_fetch_add_explicit(&lookups[me], 1, memory_order_relaxed);
    if (!codemap_lookup(pc, &h)) continue;
    atomic_fetch_add_explicit(&hits[me], 1, memory_order_relaxed);
    uintptr_t base = (uintptr_t)code;
    int ok = h.start <= pc && pc < h.end && h.start >= base && h.end <= base + sizeof code;
    if (ok && h.kind == CODEMAP_NMETHOD) {
      uintptr_t id = (uintptr_t)h.method;
      int slot = (int)((h.start - base) / SLOT_SIZE);
      ok = id >= 0x1000u && (id - 0x1000u) / 16u == (uintptr_t)slot;
    } else if (ok) {
      ok = h.kind == CODEMAP_STUB && h.name != NULL && h.name[0] == 's';
    }
    if (!ok) atomic_fetch_add_explicit(&wrong[me], 1, memory_order_relaxed);
  }
  return NULL;
}

int main(void) {
  if (codemap_init() != 0) {
    fprintf(stderr, "tsan_codemap: codemap_init failed\n");
    return 1;
  }
  pthread_t t[READERS];
  for (int i = 0; i < READERS; i++)
    if (pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i) != 0) {
      fprintf(stderr, "tsan_codemap: pthread_create failed\n");
      return 1;
    }

  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  unsigned long changes = 0, reclaims = 0;
  for (unsigned gen = 0;; gen++) {
    int slot = (int)(gen % SLOTS);
    unsigned char *at = code + (size_t)slot * SLOT_SIZE;
    int rc;
    switch (gen % 5) {
    case 0: /* a stub in the slot's first half */
      rc = codemap_add_stub("stub", at, SLOT_SIZE / 2, 0);
      break;
    case 4: /* an unload: the slot's method goes (or was already replaced: -ENOENT) */
      rc = codemap_remove_method(method_of(slot, gen - 1), at);
      if (rc == -ENOENT) rc = 0;
      break;
    default: /* a method over the whole slot: replaces what overlaps it */
      rc = codemap_add_method(method_of(slot, gen), at, SLOT_SIZE, NULL);
      break;
    }
    if (rc != 0) {
      fprintf(stderr, "tsan_codemap: writer step %u failed: %d\n", gen, rc);
      return 1;
    }
    changes++;
    if (gen % 97 == 0) codemap_reclaim(), reclaims++;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec >= SECONDS) break;
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < READERS; i++) pthread_join(t[i], NULL);
  codemap_fini();

  int bad = 0;
  for (int i = 0; i < READERS; i++) {
    unsigned long l = atomic_load(&lookups[i]), h = atomic_load(&hits[i]),
                  w = atomic_load(&wrong[i]);
    printf("reader %d: %lu lookups, %lu hits, %lu inconsistent\n", i, l, h, w);
    if (h == 0 || w != 0) bad = 1;
  }
  printf("writer: %lu changes, %lu reclaims\n", changes, reclaims);
  if (bad) fprintf(stderr, "tsan_codemap: a reader found nothing, or an inconsistent hit\n");
  return bad;
}
