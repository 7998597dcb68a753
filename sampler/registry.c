/*
 * registry.c — the thread registry (see registry.h). Chunks of slots are allocated on
 * registration, outside any signal handler, and never freed: a late signal always finds
 * valid memory.
 */
#include "registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct reg_slot *_Atomic chunks[REG_MAX_CHUNKS];
static _Atomic int limit;  /* slots in use: one more than the highest index handed out */
static _Atomic int live;
static _Atomic int registered;
static int frames_per_slot;
static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;

int registry_init(int depth) {
  frames_per_slot = depth;
  return 0;
}

int registry_depth(void) { return frames_per_slot; }

/* Allocates chunk c with its frame buffers. Caller holds reg_mutex. */
static int alloc_chunk(int c) {
  struct reg_slot *chunk = calloc(REG_CHUNK_SLOTS, sizeof *chunk);
  asgct_frame *frames = calloc((size_t)REG_CHUNK_SLOTS * (size_t)frames_per_slot, sizeof *frames);
  if (!chunk || !frames) {
    free(chunk);
    free(frames);
    return -ENOMEM;
  }
  for (int i = 0; i < REG_CHUNK_SLOTS; i++) {
    pthread_mutex_init(&chunk[i].lock, NULL);
    chunk[i].frames = frames + (size_t)i * (size_t)frames_per_slot;
  }
  atomic_store_explicit(&chunks[c], chunk, memory_order_release);
  return 0;
}

struct reg_slot *registry_slot(int i) {
  if (i < 0 || i >= REG_MAX_CHUNKS * REG_CHUNK_SLOTS) return NULL;
  struct reg_slot *chunk = atomic_load_explicit(&chunks[i / REG_CHUNK_SLOTS], memory_order_acquire);
  return chunk ? &chunk[i % REG_CHUNK_SLOTS] : NULL;
}

int registry_limit(void) { return atomic_load_explicit(&limit, memory_order_acquire); }

int registry_live(void) { return atomic_load(&live); }

int registry_registered(void) { return atomic_load(&registered); }

/* Index of the live slot of tid, or -1. Caller holds reg_mutex. */
static int find_live(pid_t tid) {
  int n = registry_limit();
  for (int i = 0; i < n; i++) {
    struct reg_slot *s = registry_slot(i);
    if (atomic_load(&s->state) == REG_LIVE && s->tid == tid) return i;
  }
  return -1;
}

static void set_name(struct reg_slot *s, const char *name) {
  strncpy(s->name, name ? name : "", REG_NAME_MAX - 1);
  s->name[REG_NAME_MAX - 1] = '\0';
}

int registry_add(pid_t tid, const char *name) {
  pthread_mutex_lock(&reg_mutex);
  int idx = find_live(tid);
  if (idx >= 0) { /* known already (found at start, then its ThreadStart): rename only */
    struct reg_slot *s = registry_slot(idx);
    pthread_mutex_lock(&s->lock);
    set_name(s, name);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&reg_mutex);
    return idx;
  }
  int n = registry_limit();
  for (idx = 0; idx < n; idx++) {
    struct reg_slot *s = registry_slot(idx);
    uint32_t st = REQ_STATE(atomic_load(&s->req));
    /* a slot whose last owner still has a request open is not reused until the sampler has
     * withdrawn or collected it: its answer must never land on a new owner */
    if (atomic_load(&s->state) == REG_FREE && st != REQ_PENDING && st != REQ_BUSY) break;
  }
  if (idx == n) {
    if (n == REG_MAX_CHUNKS * REG_CHUNK_SLOTS) {
      pthread_mutex_unlock(&reg_mutex);
      return -ENOSPC;
    }
    if (n % REG_CHUNK_SLOTS == 0) {
      int err = alloc_chunk(n / REG_CHUNK_SLOTS);
      if (err) {
        pthread_mutex_unlock(&reg_mutex);
        return err;
      }
    }
  }
  struct reg_slot *s = registry_slot(idx);
  pthread_mutex_lock(&s->lock);
  s->tid = tid;
  s->gen++;
  set_name(s, name);
  s->checksum = 0;
  s->stack_lo = s->stack_hi = 0;
  /* keep the sequence, drop any request the previous owner left behind */
  atomic_store(&s->req, REQ_SEQ(atomic_load(&s->req)) << 3 | REQ_IDLE);
  atomic_store(&s->state, REG_LIVE);
  pthread_mutex_unlock(&s->lock);
  if (idx == n) atomic_store_explicit(&limit, n + 1, memory_order_release);
  atomic_fetch_add(&live, 1);
  atomic_fetch_add(&registered, 1);
  pthread_mutex_unlock(&reg_mutex);
  return idx;
}

void registry_set_stack(int i, uintptr_t lo, uintptr_t hi) {
  struct reg_slot *s = registry_slot(i);
  if (!s) return;
  pthread_mutex_lock(&s->lock);
  s->stack_lo = lo;
  s->stack_hi = hi;
  pthread_mutex_unlock(&s->lock);
}

void registry_remove(pid_t tid) {
  pthread_mutex_lock(&reg_mutex);
  int idx = find_live(tid);
  if (idx >= 0) {
    struct reg_slot *s = registry_slot(idx);
    pthread_mutex_lock(&s->lock); /* waits out a sampler that is signalling this thread */
    atomic_store(&s->state, REG_FREE);
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_sub(&live, 1);
  }
  pthread_mutex_unlock(&reg_mutex);
}
