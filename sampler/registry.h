/*
 * registry.h — the thread registry: one preallocated slot per Java thread, found by index.
 *
 * A slot holds the thread's kernel tid and name, the handshake word the sampler and the
 * signal handler use (see handler.h), the handler's output (frames, registers, costs) and
 * the sampler thread's private bookkeeping. Slots live in chunks that are allocated when
 * threads register and never freed or moved, so a signal that arrives late — after its
 * thread ended, or after shutdown — still lands on valid memory.
 *
 * Locking: registry_add/registry_remove take the registry mutex, then the slot's lock to
 * change its state. The sampler holds the slot's lock from "is it live?" through the signal
 * it sends, so a thread that is leaving (ThreadEnd, on the thread itself) cannot finish
 * leaving — and its tid cannot be reused — between the check and the signal.
 */
#ifndef SAMPLER_REGISTRY_H
#define SAMPLER_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "asgct.h"
#include "codemap.h"

#define REG_CHUNK_SLOTS 256
#define REG_MAX_CHUNKS 64 /* 16384 threads */
#define REG_NAME_MAX 128

enum reg_state { REG_FREE = 0, REG_LIVE = 1 };

/* The handshake word: (sequence << 3) | one of these. */
enum req_state { REQ_IDLE = 0, REQ_PENDING = 1, REQ_BUSY = 2, REQ_DONE = 3 };
#define REQ_STATE(w) ((w) & 7u)
#define REQ_SEQ(w) ((w) >> 3)

/* What the handler is asked to do. */
enum req_mode {
  REQ_CAPTURE = 0, /* walk the stack: the sampler already knows the thread ran */
  REQ_IF_MOVED = 1 /* walk only if the register checksum changed since the last request */
};

/* How a sample AsyncGetCallTrace failed on was walked after all (reg_slot.recovered). */
enum reg_recovery {
  REC_NONE = 0,
  REC_STUB_CALLER = 1, /* from the Java caller of the stub the PC was in (hit: the stub) */
  REC_ANCHOR = 2       /* from the frame anchor of VM code called from Java (hit: where it returns) */
};

/* The sampler thread's own per-slot state; nobody else touches it. */
struct reg_private {
  uint32_t gen;          /* slot generation this state belongs to */
  int have_base;         /* cpu_base is valid */
  uint64_t cpu_base;     /* thread CPU clock at the last look (ns) */
  uint64_t cum;          /* CPU accrued since registration, our own cost excluded (ns) */
  uint64_t cum_captured; /* cum at the last capture request */
  uint64_t units_given;  /* cost units handed out so far: floor(cum / interval) at requests */
  uint64_t ambiguous;    /* small CPU deltas right after we woke a blocked thread (ns) */
  int last_blocked;      /* the last capture found the thread blocked in a system call */
  uint32_t root_id;      /* interned "[name tid=N]" frame, TRACES_NO_ID until needed */
  uint64_t defer_since;  /* tick + 1 since which a due sample waits for the thread to run */
  uint32_t idle_streak;  /* consecutive looks that found no CPU used */
  uint64_t next_look;    /* tick number of the next look (idle back-off) */
  /* the outstanding request */
  uint64_t req_units;
  uint64_t req_cpu;
  uint64_t req_ambiguous;
  uint64_t sent_ns;
  uint64_t req_tick;
};

struct reg_slot {
  pthread_mutex_t lock;
  _Atomic int state;   /* enum reg_state */
  pid_t tid;
  uint32_t gen;        /* bumped at every registration */
  char name[REG_NAME_MAX];

  /* handshake: written by the sampler (PENDING) and the handler (BUSY, DONE) */
  _Atomic uint32_t req;
  int mode; /* enum req_mode, written before PENDING */

  /* handler output, valid once req is DONE */
  int num_frames;      /* > 0 frames, <= 0 an asgct_code */
  int walked;          /* the handler walked the stack (else: registers unchanged) */
  int moved;           /* the register checksum differed from the previous request's */
  int in_syscall;
  int wrong_thread;    /* the signal reached a thread that is not this slot's */
  uint64_t checksum;   /* register checksum at the last request (handler-owned) */
  uint64_t start_ns, end_ns; /* handler entry and exit, CLOCK_MONOTONIC */
  uint64_t cpu_exit;   /* the thread's CPU clock at handler exit (REQ_CAPTURE only, else 0) */
  asgct_frame *frames; /* `depth` entries, leaf first */
  uintptr_t pc;        /* where the walk started: the interrupted pc, a stub's caller's, or
                          the return address of a VM call's frame anchor */
  /* when AsyncGetCallTrace failed: where the PC was (or, for REC_ANCHOR, where the VM call
   * returns to), and whether a second walk worked (frames then hold that walk; fail_code the
   * first answer) */
  struct codemap_hit hit;
  int fail_code;
  int recovered;       /* enum reg_recovery */
  uintptr_t stack_lo, stack_hi; /* the thread's stack, 0 when unknown (set at registration) */

  struct reg_private priv;
};

/* Prepares the registry for stacks of up to `depth` frames. Returns 0 or -ENOMEM. Not
 * thread-safe: call once before any other registry function. */
int registry_init(int depth);

/* Registers (or renames, when tid is already live) a thread. Returns the slot index, or
 * -ENOSPC when all REG_MAX_CHUNKS*REG_CHUNK_SLOTS slots are taken, -ENOMEM. Thread-safe. */
int registry_add(pid_t tid, const char *name);

/* Records the stack bounds of the thread in slot i ([lo, hi)); lets the signal handler read
 * frame records there safely. Thread-safe. */
void registry_set_stack(int i, uintptr_t lo, uintptr_t hi);

/* Unregisters the thread with this tid (no-op when unknown). Waits for the slot lock, so on
 * return the sampler will not signal that tid again. Thread-safe. */
void registry_remove(pid_t tid);

/* The slot at index i, or NULL when i is outside the allocated chunks. Signal-safe. */
struct reg_slot *registry_slot(int i);

/* One more than the highest slot index ever used. Signal-safe. */
int registry_limit(void);

/* Number of live slots. Thread-safe. */
int registry_live(void);

/* Number of registrations so far (threads seen): changes whenever a slot gets a new owner.
 * Thread-safe. */
int registry_registered(void);

/* Frames per slot (the depth given to registry_init). */
int registry_depth(void);

#endif
