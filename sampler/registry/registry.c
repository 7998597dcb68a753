/*
 * registry.c — the thread registry (see registry.h). Chunks of slots and their records are
 * allocated on registration, outside any signal handler, and never freed: a late signal always
 * finds valid memory. The signal handler reads the chunk table through the inline
 * registry_slot (registry.h) and calls nothing here.
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "sample.h"
#include "sample_walk.h"
#include "utf8.h"

struct thread_slot *_Atomic registry_chunks[REG_MAX_CHUNKS];

static struct {
  _Atomic int limit; /* slots in use: one more than the highest index handed out */
  _Atomic int live;
  _Atomic int registered;
  _Atomic int keep_ended;
  int depth;
  int max_slots; /* REG_MAX_CHUNKS * REG_CHUNK_SLOTS, fewer where the depth is large */
  pthread_mutex_t mu;
} registry = {.mu = PTHREAD_MUTEX_INITIALIZER};

int registry_init(int depth) {
  if (depth <= 0) return -EINVAL;
  registry.depth = depth;
  size_t per_slot = (size_t)depth * (sizeof(asgct_frame) + sizeof(uintptr_t));
  size_t chunks = REG_FRAME_BYTES_MAX / per_slot / REG_CHUNK_SLOTS;
  if (chunks < 1) chunks = 1;
  if (chunks > REG_MAX_CHUNKS) chunks = REG_MAX_CHUNKS;
  registry.max_slots = (int)chunks * REG_CHUNK_SLOTS;
  return 0;
}

/* Allocates chunk c with its records and their frame buffers. Caller holds registry.mu. */
static int alloc_chunk(int c) {
  struct thread_slot *chunk = calloc(REG_CHUNK_SLOTS, sizeof *chunk);
  struct sample_record *records = calloc(REG_CHUNK_SLOTS, sizeof *records);
  struct sample_walk *walks = calloc(REG_CHUNK_SLOTS, sizeof *walks);
  asgct_frame *frames = calloc((size_t)REG_CHUNK_SLOTS * (size_t)registry.depth, sizeof *frames);
  uintptr_t *pcs = calloc((size_t)REG_CHUNK_SLOTS * (size_t)registry.depth, sizeof *pcs);
  if (!chunk || !records || !walks || !frames || !pcs) {
    free(chunk);
    free(records);
    free(walks);
    free(frames);
    free(pcs);
    return -ENOMEM;
  }
  for (int i = 0; i < REG_CHUNK_SLOTS; i++) {
    pthread_mutex_init(&chunk[i].lock, NULL);
    chunk[i].record = &records[i];
    records[i].walk = &walks[i];
    walks[i].frames = frames + (size_t)i * (size_t)registry.depth;
    records[i].native_pcs = pcs + (size_t)i * (size_t)registry.depth;
  }
  atomic_store_explicit(&registry_chunks[c], chunk, memory_order_release);
  return 0;
}

int registry_max_slots(void) { return registry.max_slots; }

int registry_limit(void) { return atomic_load_explicit(&registry.limit, memory_order_acquire); }

int registry_live(void) { return atomic_load(&registry.live); }

int registry_registered(void) { return atomic_load(&registry.registered); }

/* Index of the live slot of tid, or -1. Caller holds registry.mu. */
static int find_live(pid_t tid) {
  int n = registry_limit();
  for (int i = 0; i < n; i++) {
    struct thread_slot *s = registry_slot(i);
    if (atomic_load(&s->state) == SLOT_LIVE && s->tid == tid) return i;
  }
  return -1;
}

/* Writes the registration of t into s. Caller holds s->lock. */
static void set_info(struct thread_slot *s, const struct sampler_target *t) {
  /* where every thread name enters (JVMTI's modified UTF-8, a kernel comm cut inside a
   * character): kept as the profile shows it, cut between characters */
  const char *name = t->name ? t->name : "";
  char now[REG_NAME_MAX];
  utf8_name(name, strlen(name), now, sizeof now);
  if (strcmp(now, s->name) != 0) {
    memcpy(s->name, now, sizeof now);
    s->name_seq++;
  }
  s->kernel_named = t->kernel_name;
  if (t->env) s->env = t->env;
  if (t->java_id) s->java_id = t->java_id;
  if (t->handle) s->handle = t->handle;
  if (t->stack_hi) {
    s->stack_lo = t->stack_lo;
    s->stack_hi = t->stack_hi;
  }
  atomic_fetch_add_explicit(&s->info_seq, 1, memory_order_release);
}

int registry_add(const struct sampler_target *t) {
  pthread_mutex_lock(&registry.mu);
  int idx = find_live(t->tid);
  if (idx >= 0) { /* known already (found at start, then its ThreadStart): update only */
    struct thread_slot *s = registry_slot(idx);
    pthread_mutex_lock(&s->lock);
    set_info(s, t);
    if (t->at_start && !s->born_ns) { /* found just before */
      s->born_ns = plat_mono_ns();
      s->born_cpu = t->start_cpu_ns;
    }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&registry.mu);
    return idx;
  }
  int n = registry_limit();
  for (idx = 0; idx < n; idx++) {
    struct thread_slot *s = registry_slot(idx);
    /* a slot whose last owner still has a request open, or an answer not yet collected, is
     * not reused until the sampler has withdrawn or recorded it: an answer is never lost to,
     * or landed on, a new owner */
    if (atomic_load(&s->state) == SLOT_FREE &&
        handshake_state(atomic_load(&s->handshake)) == SAMPLE_IDLE &&
        !(atomic_load(&s->end_cpu) && atomic_load(&registry.keep_ended)))
      break;
  }
  if (idx == n) {
    if (n == registry.max_slots) {
      pthread_mutex_unlock(&registry.mu);
      return -ENOSPC;
    }
    if (n % REG_CHUNK_SLOTS == 0) {
      int err = alloc_chunk(n / REG_CHUNK_SLOTS);
      if (err) {
        pthread_mutex_unlock(&registry.mu);
        return err;
      }
    }
  }
  struct thread_slot *s = registry_slot(idx);
  pthread_mutex_lock(&s->lock);
  s->tid = t->tid;
  s->gen++;
  s->env = NULL;
  s->java_id = 0;
  s->handle = NULL;
  s->stack_lo = s->stack_hi = 0;
  atomic_store(&s->end_cpu, 0);
  s->born_ns = t->at_start ? plat_mono_ns() : 0;
  s->born_cpu = t->at_start ? t->start_cpu_ns : 0;
  set_info(s, t);
  s->record->checksum = 0;
  s->record->call_frames = 0; /* the last walk in a VM call was the previous owner's */
  /* keep the sequence, drop any request the previous owner left behind */
  atomic_store(&s->handshake,
               handshake_word(handshake_seq(atomic_load(&s->handshake)), SAMPLE_IDLE));
  atomic_store(&s->state, SLOT_LIVE);
  pthread_mutex_unlock(&s->lock);
  if (idx == n) atomic_store_explicit(&registry.limit, n + 1, memory_order_release);
  atomic_fetch_add(&registry.live, 1);
  atomic_fetch_add(&registry.registered, 1);
  pthread_mutex_unlock(&registry.mu);
  return idx;
}

int registry_rename_kernel(int i, uint32_t gen, const char *name) {
  struct thread_slot *s = registry_slot(i);
  if (!s) return 0;
  int renamed = 0;
  pthread_mutex_lock(&s->lock);
  if (atomic_load(&s->state) == SLOT_LIVE && s->gen == gen && s->kernel_named) {
    uint32_t seq = s->name_seq;
    struct sampler_target t = {.tid = s->tid, .name = name, .kernel_name = 1};
    set_info(s, &t);
    renamed = s->name_seq != seq;
  }
  pthread_mutex_unlock(&s->lock);
  return renamed;
}

void registry_remove_slot(int i, uint32_t gen) {
  pthread_mutex_lock(&registry.mu);
  struct thread_slot *s = registry_slot(i);
  if (s) {
    pthread_mutex_lock(&s->lock);
    int drop = atomic_load(&s->state) == SLOT_LIVE && s->gen == gen;
    if (drop) atomic_store(&s->state, SLOT_FREE);
    pthread_mutex_unlock(&s->lock);
    if (drop) atomic_fetch_sub(&registry.live, 1);
  }
  pthread_mutex_unlock(&registry.mu);
}

int registry_has(pid_t tid) {
  pthread_mutex_lock(&registry.mu);
  int found = find_live(tid) >= 0;
  pthread_mutex_unlock(&registry.mu);
  return found;
}

int registry_identity(pid_t tid, struct registry_ident *id) {
  struct thread_slot *s = registry_slot(id->slot);
  /* the slot's registration as read last: the copy is still right (a reuse of the slot, a
   * rename, a Java id learnt: each bumps info_seq) */
  if (s && atomic_load_explicit(&s->state, memory_order_relaxed) == SLOT_LIVE &&
      atomic_load_explicit(&s->info_seq, memory_order_acquire) == id->info_seq)
    return 0;
  if (!s || atomic_load(&s->state) != SLOT_LIVE || s->tid != tid) {
    pthread_mutex_lock(&registry.mu);
    int i = find_live(tid);
    pthread_mutex_unlock(&registry.mu);
    if (i < 0) return -ESRCH;
    id->slot = i;
    s = registry_slot(i);
  }
  pthread_mutex_lock(&s->lock); /* a rename writes the name under it */
  int rc = atomic_load(&s->state) == SLOT_LIVE && s->tid == tid ? 0 : -ESRCH;
  if (!rc) {
    id->len = strnlen(s->name, sizeof id->name - 1);
    memcpy(id->name, s->name, id->len);
    id->name[id->len] = '\0';
    id->java_id = s->java_id;
    id->info_seq = atomic_load_explicit(&s->info_seq, memory_order_relaxed);
  } else {
    id->slot = -1;
  }
  pthread_mutex_unlock(&s->lock);
  return rc;
}

int registry_tid_cmp(const void *a, const void *b) {
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return x < y ? -1 : x > y;
}

int registry_live_tids(pid_t *out, int cap) {
  pthread_mutex_lock(&registry.mu);
  int n = 0, limit = registry_limit();
  for (int i = 0; i < limit; i++) {
    struct thread_slot *s = registry_slot(i);
    if (atomic_load(&s->state) != SLOT_LIVE) continue;
    if (n < cap) out[n] = s->tid;
    n++;
  }
  pthread_mutex_unlock(&registry.mu);
  if (n <= cap) qsort(out, (size_t)n, sizeof *out, registry_tid_cmp);
  return n;
}

void registry_keep_ended(int on) { atomic_store(&registry.keep_ended, on); }

void *registry_remove(pid_t tid, uint64_t end_cpu) {
  void *handle = NULL;
  pthread_mutex_lock(&registry.mu);
  int idx = find_live(tid);
  if (idx >= 0) {
    struct thread_slot *s = registry_slot(idx);
    pthread_mutex_lock(&s->lock); /* waits out a sampler that is signalling this thread */
    if (atomic_load(&registry.keep_ended)) atomic_store(&s->end_cpu, end_cpu);
    atomic_store(&s->state, SLOT_FREE);
    handle = s->handle;
    s->handle = NULL;
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_sub(&registry.live, 1);
  }
  pthread_mutex_unlock(&registry.mu);
  return handle;
}
