/*
 * sample.h — what the signal handler and the sampler thread pass each other for one thread:
 * the handshake word and the record the handler fills. Defined once, here.
 *
 * The handshake word is (sequence << 3) | state, built only by handshake_word():
 *   IDLE -> PENDING   the sampler asks (under the slot's lock, before it sends the signal)
 *   PENDING -> BUSY   the handler claims the request (compare-and-swap: one claimant)
 *   BUSY -> DONE      the handler has filled the record (release: the record is visible)
 *   DONE -> IDLE      the sampler has read the record
 *   PENDING -> IDLE   the sampler withdraws a request nobody answered (compare-and-swap)
 * The sequence grows with every request: the compare-and-swaps fail when the word changed in
 * between (a request withdrawn and asked again is not claimed, nor withdrawn, as the old one).
 * The signal itself carries only the slot (a CPU-time timer's value is fixed when it is
 * made), so a late signal that reaches its thread while a newer request is PENDING answers that
 * one: the thread is sampled when the signal arrives, after the request was made, so the answer
 * is a true one for the newer request (the request's own signal then finds it answered: stray).
 * A late signal on any other thread than the slot's — the slot given to a new thread — takes
 * nothing: the handler compares the thread ids before it claims (counted: wrong_tid).
 */
#ifndef SAMPLER_SAMPLE_H
#define SAMPLER_SAMPLE_H

#include <stdatomic.h>
#include <stdint.h>

struct sample_walk;

enum sample_state { SAMPLE_IDLE = 0, SAMPLE_PENDING = 1, SAMPLE_BUSY = 2, SAMPLE_DONE = 3 };

/* The one encoder of the handshake word. */
static inline uint32_t handshake_word(uint32_t seq, enum sample_state st) {
  return seq << 3 | (uint32_t)st;
}
static inline enum sample_state handshake_state(uint32_t w) { return (enum sample_state)(w & 7u); }
static inline uint32_t handshake_seq(uint32_t w) { return w >> 3; }
/* An open request: asked (PENDING) or being answered (BUSY). */
static inline int handshake_open(uint32_t w) {
  return handshake_state(w) == SAMPLE_PENDING || handshake_state(w) == SAMPLE_BUSY;
}

/* The transitions, each where its memory order is stated once (both sides call these, and
 * tests/tsan/tsan_handshake.c drives them from two threads under ThreadSanitizer).
 * The sampler asks: IDLE w -> PENDING with the next sequence, which it returns. Release: what
 * it wrote for the request before (the slot's mode) is seen by the handler that claims it. */
static inline uint32_t handshake_ask(_Atomic uint32_t *word, uint32_t w) {
  uint32_t seq = handshake_seq(w) + 1;
  atomic_store_explicit(word, handshake_word(seq, SAMPLE_PENDING), memory_order_release);
  return seq;
}

/* The handler claims the request w: PENDING -> BUSY, one claimant (compare-and-swap, acquire:
 * the mode, and the sampler's reads of the record's last answer, happen before the handler's
 * writes). 1 when claimed; 0 when w is not PENDING or the word changed meanwhile. */
static inline int handshake_claim(_Atomic uint32_t *word, uint32_t w) {
  return handshake_state(w) == SAMPLE_PENDING &&
         atomic_compare_exchange_strong_explicit(word, &w,
                                                 handshake_word(handshake_seq(w), SAMPLE_BUSY),
                                                 memory_order_acq_rel, memory_order_relaxed);
}

/* The handler has filled the record of the request it claimed (w: the word it claimed):
 * BUSY -> DONE. Release: the record's contents are visible to the sampler that loads DONE with
 * acquire. */
static inline void handshake_answer(_Atomic uint32_t *word, uint32_t w) {
  atomic_store_explicit(word, handshake_word(handshake_seq(w), SAMPLE_DONE), memory_order_release);
}

/* The sampler has read the answer w (DONE, loaded with acquire): DONE -> IDLE. Release: its
 * reads of the record happen before the handler's next writes (after its next claim). */
static inline void handshake_collected(_Atomic uint32_t *word, uint32_t w) {
  atomic_store_explicit(word, handshake_word(handshake_seq(w), SAMPLE_IDLE), memory_order_release);
}

/* The sampler withdraws the request w that nobody claimed: PENDING -> IDLE (compare-and-swap).
 * 1 when withdrawn; 0 when w is not PENDING or the handler claimed it first. */
static inline int handshake_withdraw(_Atomic uint32_t *word, uint32_t w) {
  return handshake_state(w) == SAMPLE_PENDING &&
         atomic_compare_exchange_strong_explicit(word, &w,
                                                 handshake_word(handshake_seq(w), SAMPLE_IDLE),
                                                 memory_order_acq_rel, memory_order_relaxed);
}

/* What the handler is asked to do. */
enum sample_mode {
  SAMPLE_CAPTURE = 0, /* walk the stack: the sampler already knows the thread ran */
  SAMPLE_IF_MOVED = 1 /* walk only if the register checksum changed since the last request */
};

/* How a sample AsyncGetCallTrace failed on was walked after all. */
enum sample_recovery {
  RECOVERY_NONE = 0,
  RECOVERY_STUB_CALLER = 1, /* from the Java caller of the stub the PC was in (hit: the stub) */
  RECOVERY_ANCHOR =
      2, /* from the frame anchor of VM code called from Java (hit: where it returns) */
  RECOVERY_SAME_CALL = 3,    /* GC active or a blocked stub call: the frames of the last walk in
                            the same call out of Java */
  RECOVERY_NATIVE_CALLER = 4 /* in native code Java called without leaving Java (or already
                                back in Java's state): from the Java caller the native walk
                                ended at (hit: that code); also when AsyncGetCallTrace had
                                walked but skipped a compiled caller */
};

/* The handler's answer; valid once the handshake word says DONE. Owned by the handler while
 * BUSY, by the sampler thread otherwise. */
struct sample_record {
  int32_t num_frames; /* > 0 frames, <= 0 an asgct_code (asgct.h) */
  int32_t fail_code;  /* AsyncGetCallTrace's first answer when the walk was recovered */
  int32_t recovered;  /* enum sample_recovery */
  uint8_t walked;     /* the handler walked the stack (else: registers unchanged) */
  uint8_t moved;      /* the register checksum differed from the previous request's */
  uint8_t in_syscall; /* the thread was blocked in (or restarting) a system call */
  uint8_t dropped;    /* not walked after all: every fault guard was taken (guard.h) */
  uint8_t by_timer;   /* delivered by the thread's CPU-time timer, not the sampler's signal */
  uint64_t checksum;  /* register checksum at the last request (the handler's own state) */
  uint64_t start_ns;  /* handler entry, CLOCK_MONOTONIC */
  uint64_t end_ns;    /* handler exit */
  uint64_t cpu_exit;  /* the thread's CPU clock at handler exit (SAMPLE_CAPTURE only, else 0) */
  uintptr_t sp;       /* the interrupted sp */
  uintptr_t pc;       /* where the walk started: the interrupted pc, a stub's caller's, or
                             the return address of a VM call's frame anchor */
  struct sample_walk *walk; /* the frames and what else the walk leaves (sample_walk.h) */
  int32_t nnative;          /* native frames walked (native.h), 0 when none or off */
  int32_t native_stop;      /* why the native walk ended: enum native_stop */
  int32_t native_general;   /* libunwind walked it (struct native_end in native.h) */
  uintptr_t native_end_pc;  /* the pc in no loaded object the walk stopped at, else 0 */
  /* the handler's own state: the thread's last walk that ended in frames while it was in a call
   * out of Java (its frame anchor set: last Java sp, and the return address below it), kept in
   * walk->frames until a later walk writes there; call_frames 0 when there is none */
  uintptr_t call_sp, call_ret, call_pc;
  int32_t call_frames;
  uintptr_t cache_code;  /* where the code the handler found in the code cache, not in the
                            map, begins (handler_set_codecache): for the sampler to add; else 0 */
  uint64_t native_ns;    /* what the native walk took (CLOCK_MONOTONIC), 0 when not walked */
  uintptr_t *native_pcs; /* `depth` entries: the interrupted pc, then return addresses */
};

#endif
