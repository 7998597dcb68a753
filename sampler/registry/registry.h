/*
 * registry.h — the thread registry: one preallocated slot per sampled thread, found by index.
 *
 * A slot holds the thread's registration (kernel tid, name, its JNIEnv, its stack), the
 * handshake word the sampler and the signal handler share, and a pointer to the record the
 * handler fills (sample.h). Slots and records live in chunks that are allocated when threads
 * register and never freed or moved, so a signal that arrives late — after its thread ended,
 * or after shutdown — still lands on valid memory.
 *
 * Locking: registry_add/registry_remove take the registry mutex, then the slot's lock to
 * change its state. The sampler holds the slot's lock from "is it live?" through the signal
 * it sends, so a thread that is leaving (ThreadEnd, on the thread itself) cannot finish
 * leaving — and its tid cannot be reused — between the check and the signal.
 */
#ifndef SAMPLER_REGISTRY_H
#define SAMPLER_REGISTRY_H

#include <jni.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "types.h"

#define REG_CHUNK_SLOTS 256
#define REG_MAX_CHUNKS 64 /* 16384 threads */
#define REG_NAME_MAX 128
/* The frame buffers of all slots (depth x 24 bytes each, allocated 256 slots at a time, touched
 * only as deep as the stacks go) take at most this much address space: every slot fits up to
 * depth=1365; a larger depth allows fewer threads at once (2,560 at depth=8192). */
#define REG_FRAME_BYTES_MAX ((size_t)512 << 20)

enum slot_state { SLOT_FREE = 0, SLOT_LIVE = 1 };

struct sample_record;

struct thread_slot {
  pthread_mutex_t lock;
  _Atomic int32_t state; /* enum slot_state */
  /* bumped (release) after every write of the registration (set_info): a slot's (index,
   * info_seq) names one version of one thread's identity, for registry_identity's callers
   * (beside state: the two are read together, one cache line) */
  _Atomic uint32_t info_seq;
  /* the registration: written under `lock` before the slot goes live */
  int32_t tid;
  uint32_t gen; /* bumped at every registration */
  /* name: as utf8_name made it (UTF-8, cut between characters); name_seq bumps when a later
   * registration renames the thread (found by its kernel name, then its ThreadStart) */
  char name[REG_NAME_MAX];
  uint32_t name_seq;
  int32_t kernel_named; /* the name is the kernel's comm (sampler_target.kernel_name) */
  JNIEnv *env;          /* the thread's own JNIEnv (what AsyncGetCallTrace needs), or NULL */
  int64_t java_id;      /* java.lang.Thread's id, 0 when none is known */
  void *handle;         /* the host's handle of the thread (sampler_target.handle), or NULL */
  uintptr_t stack_lo, stack_hi; /* the thread's stack, 0 when unknown */
  /* the handshake (sample.h) */
  _Atomic uint32_t handshake;
  int32_t mode;                 /* enum sample_mode, written before PENDING */
  struct sample_record *record; /* the handler's answer; fixed for the slot's life */
  /* the thread's end, for the sampler to account: its CPU clock as it left (ThreadEnd), 0
   * when there is nothing to collect. While set (and registry_keep_ended on), the slot is not
   * reused: the sampler reads it first. */
  _Atomic uint64_t end_cpu;
  uint64_t born_ns;  /* CLOCK_MONOTONIC when the thread registered itself as it started
                         (sampler_target.at_start), else 0 */
  uint64_t born_cpu; /* its CPU clock then (sampler_target.start_cpu_ns) */
};

/* Prepares the registry for stacks of up to `depth` frames. Returns 0 or -EINVAL. Not
 * thread-safe: call once before any other registry function. */
int registry_init(int depth);

/* How many threads can be registered at once at this depth (see REG_FRAME_BYTES_MAX). */
int registry_max_slots(void);

/* Registers a thread, or updates the registration of a live one with the same tid (found at
 * start, then its ThreadStart). Returns the slot index, or -ENOSPC when all
 * registry_max_slots() slots are taken, -ENOMEM. Thread-safe. */
int registry_add(const struct sampler_target *t);

/* Renames the thread of slot i, if the slot still has generation gen and its name is still the
 * kernel's (no registration with the host's name came since): name, its comm read again.
 * Returns 1 when the name changed, else 0. Thread-safe. */
int registry_rename_kernel(int i, uint32_t gen, const char *name);

/* Unregisters the thread of slot i if the slot still has generation gen (its thread ended:
 * the sampler found its CPU clock gone). Thread-safe. */
void registry_remove_slot(int i, uint32_t gen);

/* 1 when a live slot has this tid. Thread-safe. */
int registry_has(pid_t tid);

/* The tids of the live slots, sorted (registry_tid_cmp), into out (at most cap of them);
 * returns how many there are, which may be more than cap. Thread-safe. */
int registry_live_tids(pid_t *out, int cap);

/* A thread's identity as registry_identity gives it, kept by the thread between its calls. */
struct registry_ident {
  int slot;          /* the slot it was found in; -1 at first */
  uint32_t info_seq; /* that slot's info_seq when it was read */
  int64_t java_id;   /* java.lang.Thread's id, 0 when none is known */
  size_t len;        /* of name, without its NUL */
  char name[REG_NAME_MAX];
};

/* The name and Java id of the live thread with this tid, for events the thread posts itself
 * (an allocation sampled): *id as the calling thread left it at its last call (slot -1 at
 * first), refreshed when its registration changed since. Returns 0 or -ESRCH (not registered).
 * Thread-safe: when the slot's info_seq is the one read last, no lock and no copy (an atomic
 * load); else the slot's lock, and the registry's when the slot is not the thread's any more. */
int registry_identity(pid_t tid, struct registry_ident *id);

/* qsort/bsearch order of pid_t values. */
int registry_tid_cmp(const void *a, const void *b);

/* Unregisters the thread with this tid (no-op when unknown). Waits for the slot lock, so on
 * return the sampler will not signal that tid again, nor use its handle. end_cpu: the thread's
 * CPU clock as it ends (0: unknown), kept in the slot for the sampler when registry_keep_ended
 * is on. Returns the handle the registration carried (for its owner to free), or NULL.
 * Thread-safe. */
void *registry_remove(pid_t tid, uint64_t end_cpu);

/* While on, the slots of ended threads keep their end (thread_slot.end_cpu) until the sampler
 * has read it; when off, ends are not kept and a kept one does not hold its slot. The sampler
 * turns it on for a run in CPU mode. Thread-safe. */
void registry_keep_ended(int on);

/* The chunks of slots (registry.c): published once each, never freed or moved. */
extern struct thread_slot *_Atomic registry_chunks[REG_MAX_CHUNKS];

/* The slot at index i, or NULL when i is outside the allocated chunks. Signal-safe: inline, so
 * the signal handler reads the chunk table without calling into registry.c. */
static inline struct thread_slot *registry_slot(int i) {
  if (i < 0 || i >= REG_MAX_CHUNKS * REG_CHUNK_SLOTS) return NULL;
  struct thread_slot *chunk =
      atomic_load_explicit(&registry_chunks[i / REG_CHUNK_SLOTS], memory_order_acquire);
  return chunk ? &chunk[i % REG_CHUNK_SLOTS] : NULL;
}

/* One more than the highest slot index ever used. Signal-safe. */
int registry_limit(void);

/* Number of live slots. Thread-safe. */
int registry_live(void);

/* Number of registrations so far (threads seen): changes whenever a slot gets a new owner.
 * Thread-safe. */
int registry_registered(void);

#endif
